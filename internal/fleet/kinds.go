package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// rediscoverEvery is how often the fleet API server's kinds are listed again, so that the objects of a
// CustomResourceDefinition installed there after the manager started are seen (and delivered or reported), and
// a kind that could not be read is tried again.
const rediscoverEvery = time.Minute

// retryDiscovery is how soon a discovery is tried again while the first one has not succeeded or a kind's
// watch has not synced.
const retryDiscovery = 5 * time.Second

// syncDeadline bounds how long one discovery waits for a new kind's first list; a kind that takes longer is
// waited for again at the next discovery, and is not read until then.
const syncDeadline = 30 * time.Second

// ignored tells the kinds whose objects are never fleet objects: Events record what happens on the fleet API
// server itself (the manager records its own there), and Open Cluster Management's groups hold the hub's
// control objects, which share the namespace when the hub serves as the fleet API server (the generated
// PlacementManifestWork and Placement, ManagedClusterSetBindings). They are neither watched nor reported.
func ignored(gk schema.GroupKind) bool {
	return gk.Kind == "Event" && (gk.Group == "" || gk.Group == "events.k8s.io") ||
		gk.Group == "open-cluster-management.io" || strings.HasSuffix(gk.Group, ".open-cluster-management.io")
}

// kindWatcher finds the namespaced kinds of the fleet API server (preferred versions) that the manager may list
// and watch, and watches each as metadata only: an object's event enqueues its namespace, and the controller
// reads the full objects of opted-in namespaces only (objectStore). So the manager holds the names and
// resourceVersions of the fleet API server's objects, not every Secret and ConfigMap.
//
// A kind is read (kinds) only once its watch has synced: a read of a kind whose informer never syncs (a watch
// the manager may not open) would block the controller. A kind served but not read (unreadable) is one whose
// objects may exist unseen: the controller then keeps what its PMW delivers of it.
type kindWatcher struct {
	discovery discovery.DiscoveryInterface
	// reader lists around the cache: a trial list tells whether the manager may read a kind at all.
	reader client.Reader
	cache  cache.Cache
	ctrl   controller.Controller
	// requeue reconciles the namespaces that hold objects of a kind that just became read, whose first events
	// came before it was.
	requeue chan event.GenericEvent

	mu sync.RWMutex
	// watched are the kinds whose watch has synced, by group and kind (one version each: the one first found).
	watched map[schema.GroupKind]schema.GroupVersionKind
	// started are the kinds whose watch is started, synced or not.
	started map[schema.GroupKind]schema.GroupVersionKind
	// served are the kinds the last discovery found; failedGroups the API groups whose discovery failed then.
	served       map[schema.GroupKind]bool
	failedGroups map[string]bool
	// synced is closed once the first discovery is done.
	synced chan struct{}
}

func newKindWatcher(d discovery.DiscoveryInterface, reader client.Reader, c cache.Cache) *kindWatcher {
	return &kindWatcher{discovery: d, reader: reader, cache: c, requeue: make(chan event.GenericEvent, 1024),
		watched: map[schema.GroupKind]schema.GroupVersionKind{}, started: map[schema.GroupKind]schema.GroupVersionKind{},
		served: map[schema.GroupKind]bool{}, failedGroups: map[string]bool{}, synced: make(chan struct{})}
}

// kinds are the kinds read, sorted.
func (w *kindWatcher) kinds() []schema.GroupVersionKind {
	w.mu.RLock()
	defer w.mu.RUnlock()
	out := make([]schema.GroupVersionKind, 0, len(w.watched))
	for _, gvk := range w.watched {
		out = append(out, gvk)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// unreadable tells whether objects of gk may exist on the fleet API server that the manager does not read: the
// kind is served but not read (the manager may not list or watch it, or its watch has not synced), or its
// group's discovery failed. A kind a discovery without failures did not find is not served: its objects are
// gone with it.
func (w *kindWatcher) unreadable(gk schema.GroupKind) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if _, ok := w.watched[gk]; ok {
		return false
	}
	return w.served[gk] || w.failedGroups[gk.Group]
}

// readsAll tells whether the manager reads every kind the last discovery found, and every API group was
// discovered: only then does it see every object of a namespace (every dependent an object may have).
func (w *kindWatcher) readsAll() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.failedGroups) > 0 {
		return false
	}
	for gk := range w.served {
		if _, ok := w.watched[gk]; !ok {
			return false
		}
	}
	return true
}

// Start discovers the kinds now and every rediscoverEvery until ctx ends (every retryDiscovery while the first
// discovery has not succeeded or a started watch has not synced).
func (w *kindWatcher) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("fleet-kinds")
	for {
		err := w.discover(ctx)
		var partial *discovery.ErrGroupDiscoveryFailed
		if err == nil || errors.As(err, &partial) {
			w.markSynced()
		}
		if err != nil {
			log.Error(err, "Listing the fleet API server's kinds; the kinds found so far stay watched")
		}
		wait := rediscoverEvery
		if !w.isSynced() || w.pending() {
			wait = retryDiscovery
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// NeedLeaderElection: only the leader reconciles, so only it needs the watches.
func (w *kindWatcher) NeedLeaderElection() bool { return true }

// ready waits until the first discovery is done: a namespace translated before would lose every object of a
// kind not read yet from its PlacementManifestWork, and with it from the clusters (a restart must not remove
// anything).
func (w *kindWatcher) ready(ctx context.Context) error {
	select {
	case <-w.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *kindWatcher) markSynced() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.synced:
	default:
		close(w.synced)
	}
}

func (w *kindWatcher) isSynced() bool {
	select {
	case <-w.synced:
		return true
	default:
		return false
	}
}

// pending tells whether a started watch has not synced yet.
func (w *kindWatcher) pending() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.started) > len(w.watched)
}

// discover watches the kinds found that are not watched yet, and reads those whose watch synced.
func (w *kindWatcher) discover(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("fleet-kinds")
	lists, discoveryErr := w.discovery.ServerPreferredNamespacedResources()
	var partial *discovery.ErrGroupDiscoveryFailed
	if discoveryErr != nil && !errors.As(discoveryErr, &partial) {
		return discoveryErr
	}
	found := namespacedKinds(lists)
	served := make(map[schema.GroupKind]bool, len(found))
	for _, gvk := range found {
		served[gvk.GroupKind()] = true
	}
	failed := map[string]bool{}
	if partial != nil {
		for gv := range partial.Groups {
			failed[gv.Group] = true
		}
	}
	w.mu.Lock()
	w.served, w.failedGroups = served, failed
	var fresh []schema.GroupVersionKind
	for _, gvk := range found {
		if _, ok := w.started[gvk.GroupKind()]; !ok {
			fresh = append(fresh, gvk)
		}
	}
	w.mu.Unlock()

	for _, gvk := range fresh {
		if err := w.reader.List(ctx, metadataList(gvk), client.Limit(1)); err != nil {
			why := "the manager cannot list it now; tried again at the next discovery"
			if apierrors.IsForbidden(err) {
				why = "the manager may not list it (RBAC); tried again at the next discovery"
			}
			log.Info("Not reading a kind of the fleet API server: what a PMW delivers of it is kept, new objects of it are not delivered", "kind", gvk.String(), "why", why, "error", err.Error())
			continue
		}
		if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, metadataObject(gvk), handler.EnqueueRequestsFromMapFunc(byNamespace))); err != nil {
			return err
		}
		w.mu.Lock()
		w.started[gvk.GroupKind()] = gvk
		w.mu.Unlock()
	}

	w.mu.RLock()
	var waiting []schema.GroupVersionKind
	for gk, gvk := range w.started {
		if _, ok := w.watched[gk]; !ok {
			waiting = append(waiting, gvk)
		}
	}
	w.mu.RUnlock()
	syncCtx, cancel := context.WithTimeout(ctx, syncDeadline)
	defer cancel()
	for _, gvk := range waiting {
		inf, err := w.cache.GetInformer(syncCtx, metadataObject(gvk), cache.BlockUntilSynced(false))
		if err != nil {
			return err
		}
		if !toolscache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			log.Info("A kind of the fleet API server is not read yet: its watch has not synced (can the manager watch it?); what a PMW delivers of it is kept", "kind", gvk.String())
			continue
		}
		w.mu.Lock()
		w.watched[gvk.GroupKind()] = gvk
		w.mu.Unlock()
		if err := w.requeueHolders(ctx, gvk); err != nil {
			return err
		}
	}
	if partial != nil {
		// Objects of these groups are kept where delivered, and not read, until a discovery finds them.
		return fmt.Errorf("some API groups of the fleet API server are not discovered: %w", discoveryErr)
	}
	return nil
}

// requeueHolders reconciles every namespace that holds objects of gvk, which just became read: their first
// events may have come while it was not.
func (w *kindWatcher) requeueHolders(ctx context.Context, gvk schema.GroupVersionKind) error {
	metas := metadataList(gvk)
	if err := w.cache.List(ctx, metas); err != nil {
		return fmt.Errorf("listing the %ss of the fleet API server: %w", gvk.Kind, err)
	}
	seen := map[string]bool{}
	for _, m := range metas.Items {
		if seen[m.Namespace] {
			continue
		}
		seen[m.Namespace] = true
		select {
		case w.requeue <- event.GenericEvent{Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.Namespace}}}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// metadataList is an empty list of gvk's objects as metadata, to read from the cache or around it.
func metadataList(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// metadataObject is an empty object of gvk as metadata: the type of its metadata watch and informer.
func metadataObject(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(gvk)
	return o
}

// namespacedKinds are the kinds of discovery's resource lists that the controller watches: namespaced,
// listable and watchable, not a subresource, not ignored.
func namespacedKinds(lists []*metav1.APIResourceList) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			gvk := gv.WithKind(r.Kind)
			if !r.Namespaced || strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") ||
				!slices.Contains(r.Verbs, "watch") || ignored(gvk.GroupKind()) {
				continue
			}
			out = append(out, gvk)
		}
	}
	return out
}
