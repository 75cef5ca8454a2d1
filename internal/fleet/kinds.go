package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// rediscoverEvery is how often the fleet API server's kinds are listed again, so that the objects of a
// CustomResourceDefinition installed there after the manager started are seen (and delivered or reported).
const rediscoverEvery = time.Minute

// retryDiscovery is how soon a failed first discovery is tried again.
const retryDiscovery = 5 * time.Second

// ignoredGroups are API groups whose objects are never fleet objects: Events record what happens on the fleet
// API server itself (the manager records its own there), and Open Cluster Management's groups hold the hub's
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
type kindWatcher struct {
	discovery discovery.DiscoveryInterface
	// reader lists around the cache: a trial list tells whether the manager may read a kind at all (an informer
	// on a forbidden kind would never sync, and the controller's reads of it would wait for ever).
	reader client.Reader
	cache  cache.Cache
	ctrl   controller.Controller

	mu      sync.RWMutex
	watched []schema.GroupVersionKind
	refused map[schema.GroupVersionKind]bool
	// synced is closed once the first discovery has watched what it found.
	synced chan struct{}
}

// kinds are the kinds watched so far, sorted.
func (w *kindWatcher) kinds() []schema.GroupVersionKind {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return slices.Clone(w.watched)
}

// Start discovers the kinds now and every rediscoverEvery until ctx ends (every retryDiscovery until the first
// discovery succeeds).
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
		if !w.isSynced() {
			wait = retryDiscovery
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// ready waits until the first discovery has watched the fleet API server's kinds: a namespace translated before
// would lose every object of a kind not watched yet from its PlacementManifestWork, and with it from the
// clusters (a restart must not remove anything).
func (w *kindWatcher) ready(ctx context.Context) error {
	select {
	case <-w.syncedCh():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *kindWatcher) syncedCh() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.synced == nil {
		w.synced = make(chan struct{})
	}
	return w.synced
}

func (w *kindWatcher) markSynced() {
	ch := w.syncedCh()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (w *kindWatcher) isSynced() bool {
	select {
	case <-w.syncedCh():
		return true
	default:
		return false
	}
}

// NeedLeaderElection: only the leader reconciles, so only it needs the watches.
func (w *kindWatcher) NeedLeaderElection() bool { return true }

// discover watches the kinds not watched yet.
func (w *kindWatcher) discover(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("fleet-kinds")
	lists, err := w.discovery.ServerPreferredNamespacedResources()
	var partial *discovery.ErrGroupDiscoveryFailed
	if err != nil && !errors.As(err, &partial) {
		return err
	}
	found := namespacedKinds(lists)
	w.mu.RLock()
	var fresh []schema.GroupVersionKind
	for _, gvk := range found {
		if !slices.Contains(w.watched, gvk) && !w.refused[gvk] {
			fresh = append(fresh, gvk)
		}
	}
	w.mu.RUnlock()
	var informers []cache.Informer
	for _, gvk := range fresh {
		probe := &metav1.PartialObjectMetadataList{}
		probe.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.reader.List(ctx, probe, client.Limit(1)); err != nil {
			log.Info("Not watching a kind of the fleet API server: the manager cannot list it; its objects are neither delivered nor reported", "kind", gvk.String(), "error", err.Error())
			w.mu.Lock()
			if w.refused == nil {
				w.refused = map[schema.GroupVersionKind]bool{}
			}
			w.refused[gvk] = true
			w.mu.Unlock()
			continue
		}
		// Watched before the watch starts: its first events enqueue the namespaces of the kind's objects, and
		// their reconciles must read the kind (from the cache, which waits for the informer's first list).
		w.mu.Lock()
		w.watched = append(w.watched, gvk)
		slices.SortFunc(w.watched, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
		w.mu.Unlock()
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, obj, handler.EnqueueRequestsFromMapFunc(byNamespace))); err != nil {
			return err
		}
		inf, err := w.cache.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		informers = append(informers, inf)
	}
	// The first discovery is done when every informer has its first list.
	for _, inf := range informers {
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return ctx.Err()
		}
	}
	if partial != nil {
		// Objects of these groups are not seen until a later discovery finds them.
		return fmt.Errorf("some API groups of the fleet API server are not discovered: %w", partial)
	}
	return nil
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
