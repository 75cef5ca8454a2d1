// Package fleet is the transparent mode's controller (issue #22): it watches the namespaces of a fleet API
// server and their objects of a fixed list of built-in kinds, writes each opted-in namespace's objects as the
// PlacementManifestWork pkg/fleet translates them to (named workv1alpha1.FleetGeneratedName, in the hub namespace of the
// same name), and writes each object's status on the fleet API server from its clusters' ManifestWorks.
//
// A reconcile is one fleet namespace: gather (the fleet namespace, its objects, the hub namespace, the
// generated PlacementManifestWork and its works) → desired (pkg/fleet: OptIn, Translate, Status) → apply
// (server-side apply of the generated Placement and PlacementManifestWork on the hub, a status merge patch per
// fleet object) → events (only when they change).
package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
)

// fieldOwner is the server-side apply field manager of what the controller writes on the hub.
const fieldOwner = "placement-manifestwork-fleet"

// clusterOwnObjects are the objects an API server and its controllers make themselves, and keep as they want
// them, in every cluster: not fleet objects. Delivered, a copy would overwrite each cluster's own (its CA
// bundle, its front proxy's client CAs, its default RBAC), and taking it out of the PMW again (an opt-out, a
// move) would delete the cluster's own. An empty Namespace is every namespace. The kube-apiserver entries are
// what a fresh kube-apiserver 1.35 makes in its namespaces, besides its identity Lease (a Lease is left out by
// its kind). The values say who makes each.
var clusterOwnObjects = map[fleet.Key]string{
	{Kind: "ConfigMap", Name: "kube-root-ca.crt"}: "kube-controller-manager (root-ca-cert-publisher): the cluster's CA bundle",
	{Kind: "ServiceAccount", Name: "default"}:     "kube-controller-manager (serviceaccount)",

	{Kind: "Service", Namespace: "default", Name: "kubernetes"}:                                  "kube-apiserver: its own Service",
	{Kind: "Endpoints", Namespace: "default", Name: "kubernetes"}:                                "kube-apiserver: its own addresses",
	{Group: "discovery.k8s.io", Kind: "EndpointSlice", Namespace: "default", Name: "kubernetes"}: "kube-apiserver: its own addresses",

	{Kind: "ConfigMap", Namespace: "kube-system", Name: "extension-apiserver-authentication"}:                   "kube-apiserver: the client CAs aggregated API servers trust",
	{Kind: "ConfigMap", Namespace: "kube-system", Name: "kube-apiserver-legacy-service-account-token-tracking"}: "kube-apiserver: since when it tracks legacy tokens",
	{Kind: "ConfigMap", Namespace: "kube-public", Name: "cluster-info"}:                                         "kubeadm, signed by kube-controller-manager (bootstrapsigner): what joining nodes trust",

	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "extension-apiserver-authentication-reader"}:                "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "system::leader-locking-kube-controller-manager"}:           "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "system::leader-locking-kube-scheduler"}:                    "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "system:controller:bootstrap-signer"}:                       "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "system:controller:cloud-provider"}:                         "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-system", Name: "system:controller:token-cleaner"}:                          "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "Role", Namespace: "kube-public", Name: "system:controller:bootstrap-signer"}:                       "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system::extension-apiserver-authentication-reader"}: "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system::leader-locking-kube-controller-manager"}:    "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system::leader-locking-kube-scheduler"}:             "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system:controller:bootstrap-signer"}:                "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system:controller:cloud-provider"}:                  "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-system", Name: "system:controller:token-cleaner"}:                   "kube-apiserver: default RBAC",
	{Group: rbacGroup, Kind: "RoleBinding", Namespace: "kube-public", Name: "system:controller:bootstrap-signer"}:                "kube-apiserver: default RBAC",
}

const rbacGroup = "rbac.authorization.k8s.io"

// clusterOwn tells whether the object of gvk named name in ns is one the API server or its controllers make
// themselves (clusterOwnObjects): not a fleet object.
func clusterOwn(gvk schema.GroupVersionKind, ns, name string) bool {
	_, everywhere := clusterOwnObjects[fleet.Key{Group: gvk.Group, Kind: gvk.Kind, Name: name}]
	_, here := clusterOwnObjects[fleet.Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: ns, Name: name}]
	return everywhere || here
}

// The fleet controller's permissions on the hub (only used when the manager runs with --fleet-kubeconfig): it
// reads whether the hub namespace exists through the manager's cache, server-side applies and deletes the
// generated PlacementManifestWork and Placement, sets its ConditionFleetObjectsDelivered, and reads their
// decisions, works, ControllerRevisions, the ManagedClusters' availability and the ResourceInterpreters
// (cached). The manager's own rules grant most of these too; they are listed so the fleet controller's needs
// are in one place: `make manifests` writes them into their own ClusterRole, config/rbac/fleet/role.yaml, which
// the chart grants only in transparent mode.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks/status,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=resourceinterpreters,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler writes one fleet namespace's PlacementManifestWork on the hub and its objects' status on the
// fleet API server. The request's name is the fleet namespace.
type Reconciler struct {
	// Hub reads (cached) and writes the hub.
	Hub client.Client
	// HubReader reads the hub around the cache: the ControllerRevisions' data, which the cache leaves out.
	HubReader client.Reader
	// Fleet reads (cached: namespaces, and objects as metadata) and writes the fleet API server.
	Fleet client.Client
	// Recorder records events on the fleet API server; HubRecorder on the hub.
	Recorder, HubRecorder events.EventRecorder
	// Now is the clock of condition times; time.Now when nil.
	Now func() time.Time

	// kinds are the fleet API server's kinds watched as metadata.
	kinds interface {
		kinds() []schema.GroupVersionKind
		ready(ctx context.Context) error
		unreadable(gk schema.GroupKind) bool
		readsAll() bool
	}
	// objects are the full objects of the opted-in namespaces.
	objects *objectStore
	// interpreters compiles the hub's ResourceInterpreters (the fleet's own cache: Resolve prunes it to the
	// interpreters it is given).
	interpreters *interpreter.Cache

	mu sync.Mutex
	// recorded holds the events last recorded per fleet object (or namespace): an event is recorded when it is
	// not among them.
	recorded map[fleet.Key]map[fleet.Event]bool
	// generations holds, per fleet namespace, the generations of the fleet objects each of the generated
	// PlacementManifestWork's ControllerRevisions carries, by the revision's UID (their data never changes).
	generations map[string]map[types.UID]map[fleet.Key]int64
}

// SetupWithManager adds the fleet API server reached with fleetConfig to mgr as a second cluster and registers
// the controller.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, fleetConfig *rest.Config) error {
	// The generated PlacementManifestWork's works, revisions and decisions, by the labels readHub finds them by.
	if err := labelindex.Setup(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	fc, err := cluster.New(fleetConfig, func(o *cluster.Options) {
		o.Scheme = runtime.NewScheme()
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
	})
	if err != nil {
		return fmt.Errorf("fleet API server: %w", err)
	}
	if err := corev1.AddToScheme(fc.GetScheme()); err != nil {
		return err
	}
	metav1.AddToGroupVersion(fc.GetScheme(), schema.GroupVersion{Version: "v1"})
	disc, err := discovery.NewDiscoveryClientForConfig(fleetConfig)
	if err != nil {
		return fmt.Errorf("fleet API server discovery: %w", err)
	}
	if err := mgr.Add(fc); err != nil {
		return err
	}
	kinds := newKindWatcher(disc, fc.GetAPIReader(), fc.GetCache())
	r := &Reconciler{Hub: mgr.GetClient(), HubReader: mgr.GetAPIReader(), Fleet: fc.GetClient(),
		Recorder:    fc.GetEventRecorder("placement-manifestwork-fleet"),
		HubRecorder: mgr.GetEventRecorder("placement-manifestwork-fleet"),
		kinds:       kinds, objects: &objectStore{reader: fc.GetAPIReader()}, interpreters: interpreter.NewCache()}
	c, err := ctrl.NewControllerManagedBy(mgr).Named("fleet").
		WatchesRawSource(source.Kind[client.Object](fc.GetCache(), &corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(byName))).
		Watches(&workv1alpha1.PlacementManifestWork{}, handler.EnqueueRequestsFromMapFunc(byNameOrPlacement)).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(byGeneratedName)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(byNamespace)).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(byOwner)).
		// A cluster that goes away or comes back changes what its last report counts for (hubView.away): the
		// manager's status tells of a decided cluster, not of one that left the decisions.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.byClusterWorks), builder.WithPredicates(availabilityChanged())).
		Watches(&workv1alpha1.ResourceInterpreter{}, handler.EnqueueRequestsFromMapFunc(r.optedIn)).
		WatchesRawSource(source.Channel(kinds.requeue, &handler.EnqueueRequestForObject{})).
		Build(r)
	if err != nil {
		return err
	}
	kinds.ctrl = c
	return mgr.Add(kinds)
}

// optedIn maps an event that may change every namespace's translation (a ResourceInterpreter) to the opted-in
// fleet namespaces.
func (r *Reconciler) optedIn(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &corev1.NamespaceList{}
	if err := r.Fleet.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the fleet namespaces")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if opt, err := fleet.OptIn(&list.Items[i]); err == nil && opt.OptedIn() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return out
}

func byName(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
}

func byNamespace(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
}

func byGeneratedName(_ context.Context, o client.Object) []reconcile.Request {
	if o.GetName() != workv1alpha1.FleetGeneratedName {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
}

// byNameOrPlacement maps a PlacementManifestWork named workv1alpha1.FleetGeneratedName, or one that uses the
// Placement of that name (which deletePlacement keeps for it), to its namespace.
func byNameOrPlacement(ctx context.Context, o client.Object) []reconcile.Request {
	if pmw, ok := o.(*workv1alpha1.PlacementManifestWork); ok && usesGeneratedPlacement(pmw) {
		return byNamespace(ctx, o)
	}
	return byGeneratedName(ctx, o)
}

// byOwner maps a ManifestWork to the namespace of its PlacementManifestWork, when that is a generated one.
func byOwner(_ context.Context, o client.Object) []reconcile.Request {
	ns, name, ok := strings.Cut(o.GetAnnotations()[workv1alpha1.AnnotationOwner], "/")
	if !ok || name != workv1alpha1.FleetGeneratedName {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ns}}}
}

// byClusterWorks maps a ManagedCluster to the namespaces of the generated PlacementManifestWorks with a work on
// it.
func (r *Reconciler) byClusterWorks(ctx context.Context, o client.Object) []reconcile.Request {
	works := &workv1.ManifestWorkList{}
	if err := r.Hub.List(ctx, works, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManifestWorks for a ManagedCluster event", "cluster", o.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range works.Items {
		for _, req := range byOwner(ctx, &works.Items[i]) {
			if !slices.Contains(out, req) {
				out = append(out, req)
			}
		}
	}
	return out
}

// availabilityChanged passes ManagedCluster updates that change whether it is available, and why.
func availabilityChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
			after, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
			return ok1 && ok2 && health.ManagedClusterUnavailable(before) != health.ManagedClusterUnavailable(after)
		},
	}
}

// inputs is what one reconcile reads.
type inputs struct {
	// ns is the fleet namespace; nil when it is gone.
	ns *corev1.Namespace
	// objects are its objects of Kinds, without those being deleted and the per-namespace ones.
	objects []*unstructured.Unstructured
	// deleting are its objects being deleted that a garbage collector's finalizer holds (fleet.HeldByGC), as
	// metadata with their kind set; owners are the UIDs that its objects' ownerReferences name.
	deleting []*metav1.PartialObjectMetadata
	owners   map[types.UID]bool
	// hubNamespace tells whether the hub has the namespace.
	hubNamespace bool
	// pmw is the hub's PlacementManifestWork named workv1alpha1.FleetGeneratedName; nil when there is none.
	pmw *workv1alpha1.PlacementManifestWork
	// placement is the hub's Placement named workv1alpha1.FleetGeneratedName; nil when there is none.
	placement *clusterv1beta1.Placement
}

// Reconcile brings the hub's generated PlacementManifestWork of one fleet namespace in line with the namespace's
// objects, and their status on the fleet API server in line with their clusters.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	name := req.Name
	if err := r.kinds.ready(ctx); err != nil {
		return ctrl.Result{}, err
	}
	in, err := r.gather(ctx, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if in.ns == nil || in.ns.DeletionTimestamp != nil {
		r.forget(name)
		return ctrl.Result{}, r.optOut(ctx, in)
	}
	opt, err := fleet.OptIn(in.ns)
	if err != nil {
		// Leave what is delivered as it is: a typo is not an opt-out.
		r.record(in.ns, fleet.Key{Kind: "Namespace", Name: name}, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetInvalidOptIn, Message: err.Error()}}, r.Recorder)
		return ctrl.Result{}, nil
	}
	if !opt.OptedIn() {
		r.forget(name)
		return ctrl.Result{}, r.optOut(ctx, in)
	}
	nsKey := fleet.Key{Kind: "Namespace", Name: name}
	if !in.hubNamespace {
		r.record(in.ns, nsKey, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetHubNamespaceMissing,
			Message: fmt.Sprintf("the hub has no namespace %q: nothing is delivered; a hub administrator creates it, with a ManagedClusterSetBinding for the clusters it may use", name)}}, r.Recorder)
		return ctrl.Result{}, nil
	}
	kinds, err := r.interpretersOf(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	generated := in.pmw != nil && in.pmw.Labels[workv1alpha1.LabelFleetGenerated] == "true"
	tr, err := fleet.Translate(name, in.objects, fleet.Options{IncludeNamespace: true, Interpreters: kinds})
	if err != nil {
		r.record(in.ns, nsKey, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetTranslateFailed, Message: err.Error()}}, r.Recorder)
		if generated {
			// What is delivered stays; the condition says why nothing changes.
			return ctrl.Result{}, r.setDelivered(ctx, in.pmw, metav1.Condition{Type: workv1alpha1.ConditionFleetObjectsDelivered,
				Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonFleetTranslateFailed, ObservedGeneration: in.pmw.Generation,
				Message: err.Error() + "; nothing of the namespace is updated until it can be translated"}, nil)
		}
		return ctrl.Result{}, nil
	}
	var nsEvents []fleet.Event
	if in.pmw != nil && !generated {
		nsEvents = append(nsEvents, notGenerated("PlacementManifestWork", name))
	}
	if opt.Generated != nil && in.placement != nil && in.placement.Labels[workv1alpha1.LabelFleetGenerated] != "true" {
		nsEvents = append(nsEvents, notGenerated("Placement", name))
	}
	if len(nsEvents) > 0 {
		r.record(in.ns, nsKey, nsEvents, r.Recorder)
		return ctrl.Result{}, nil
	}
	if held := r.unreadableDelivered(in.pmw); len(held) > 0 {
		// Objects of these kinds may still be there, unseen: a translation without them would remove them from
		// the clusters. Keep the PMW as it is until they can be read.
		msg := fmt.Sprintf("the PlacementManifestWork delivers objects of %s, which the manager cannot read on the fleet API server now "+
			"(not allowed to list or watch them, their watch not synced yet, or their API group not discovered): what it delivers is kept as it is, "+
			"and nothing of the namespace is updated until they can be read", strings.Join(held, ", "))
		r.record(in.ns, nsKey, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetKindsUnreadable, Message: msg}}, r.Recorder)
		if err := r.setDelivered(ctx, in.pmw, metav1.Condition{Type: workv1alpha1.ConditionFleetObjectsDelivered, Status: metav1.ConditionFalse,
			Reason: workv1alpha1.ReasonFleetKindsUnreadable, ObservedGeneration: in.pmw.Generation, Message: msg}, nil); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: 6 * retryDiscovery}, r.writeStatus(ctx, in, tr, in.pmw)
	}
	r.record(in.ns, nsKey, nil, r.Recorder)

	if err := r.applyPlacement(ctx, name, opt, in.placement); err != nil {
		return ctrl.Result{}, err
	}
	pmw, err := r.applyPMW(ctx, name, tr.Spec(opt.Placement))
	if err != nil {
		return ctrl.Result{}, err
	}
	cond, evs := r.deliveredCondition(pmw, tr)
	if err := r.setDelivered(ctx, pmw, cond, evs); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, in, tr, pmw); err != nil {
		return ctrl.Result{}, err
	}
	return r.finishDeletes(ctx, in)
}

// finishDeletes removes the garbage collector's finalizers (fleet.WithoutGCFinalizers) from the namespace's
// objects being deleted, which the generated PlacementManifestWork just applied no longer delivers: the API
// server adds them for a delete with propagationPolicy Foreground or Orphan, and a fleet API server without
// kube-controller-manager has no garbage collector to remove them, so the objects would stay Terminating.
// Safe where a garbage collector runs too: an object other objects name as their owner is left to it, and so
// is every object while a kind the manager cannot read may hold such dependents unseen (tried again later).
func (r *Reconciler) finishDeletes(ctx context.Context, in inputs) (ctrl.Result, error) {
	if len(in.deleting) == 0 {
		return ctrl.Result{}, nil
	}
	if !r.kinds.readsAll() {
		return ctrl.Result{RequeueAfter: 6 * retryDiscovery}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	for _, o := range in.deleting {
		finalizers, ok := fleet.WithoutGCFinalizers(o, in.owners)
		if !ok {
			continue
		}
		key := fleet.Key{Group: o.GroupVersionKind().Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		patched := o.DeepCopy()
		patched.Finalizers = finalizers
		// The whole list is written: the optimistic lock keeps a finalizer added meanwhile.
		switch err := r.Fleet.Patch(ctx, patched, client.MergeFromWithOptions(o, client.MergeFromWithOptimisticLock{})); {
		case apierrors.IsNotFound(err):
		case apierrors.IsForbidden(err):
			log.Info("Not allowed to remove the garbage collector's finalizers from a deleted fleet object, which stays Terminating: grant the fleet kubeconfig patch on its kind",
				"object", key.String(), "error", err.Error())
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("remove the garbage collector's finalizers from %s: %w", key, err)
		default:
			log.Info("Removed the garbage collector's finalizers from a deleted fleet object: no longer delivered, no dependents", "object", key.String())
		}
	}
	return ctrl.Result{}, nil
}

// unreadableDelivered are the kinds of the generated PlacementManifestWork's manifests whose objects the manager
// cannot read on the fleet API server now (kindWatcher.unreadable), sorted.
func (r *Reconciler) unreadableDelivered(pmw *workv1alpha1.PlacementManifestWork) []string {
	if pmw == nil || pmw.Labels[workv1alpha1.LabelFleetGenerated] != "true" {
		return nil
	}
	var out []string
	for _, m := range pmw.Spec.ManifestWorkTemplate.Workload.Manifests {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(m.Raw, &tm); err != nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(tm.APIVersion)
		if err != nil || (gv.Group == "" && tm.Kind == "Namespace") {
			continue
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: tm.Kind}
		if r.kinds.unreadable(gk) && !slices.Contains(out, gk.String()) {
			out = append(out, gk.String())
		}
	}
	sort.Strings(out)
	return out
}

func notGenerated(kind, ns string) fleet.Event {
	return fleet.Event{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetNotGenerated, Message: fmt.Sprintf(
		"the hub's %s %s/%s is not labelled %s=true: it is someone else's and is left alone; rename or remove it", kind, ns, workv1alpha1.FleetGeneratedName, workv1alpha1.LabelFleetGenerated)}
}

// gather reads the fleet namespace, its objects and the hub's generated objects.
func (r *Reconciler) gather(ctx context.Context, name string) (inputs, error) {
	var in inputs
	ns := &corev1.Namespace{}
	if found, err := getIfExists(ctx, r.Fleet, client.ObjectKey{Name: name}, ns, "fleet namespace"); err != nil {
		return in, err
	} else if found {
		in.ns = ns
	}
	if in.ns != nil && in.ns.DeletionTimestamp == nil {
		if opt, err := fleet.OptIn(in.ns); err == nil && opt.OptedIn() {
			if err := r.readObjects(ctx, &in); err != nil {
				return in, err
			}
		}
	}
	found, err := getIfExists(ctx, r.Hub, client.ObjectKey{Name: name}, &corev1.Namespace{}, "hub namespace")
	if err != nil || !found {
		return in, err
	}
	in.hubNamespace = true
	key := client.ObjectKey{Namespace: name, Name: workv1alpha1.FleetGeneratedName}
	pmw := &workv1alpha1.PlacementManifestWork{}
	if found, err := getIfExists(ctx, r.Hub, key, pmw, "hub PlacementManifestWork"); err != nil {
		return in, err
	} else if found {
		in.pmw = pmw
	}
	p := &clusterv1beta1.Placement{}
	if found, err := getIfExists(ctx, r.Hub, key, p, "hub Placement"); err != nil {
		return in, err
	} else if found {
		in.placement = p
	}
	return in, nil
}

// getIfExists reads key into obj: false, and no error, when there is no such object; what names it in an error.
func getIfExists(ctx context.Context, c client.Reader, key client.ObjectKey, obj client.Object, what string) (bool, error) {
	switch err := c.Get(ctx, key, obj); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s %s: %w", what, key, err)
	}
	return true, nil
}

// readObjects reads the opted-in namespace's objects of every watched kind: their metadata from the cache, the
// full objects that changed since the last reconcile from the fleet API server (objectStore).
func (r *Reconciler) readObjects(ctx context.Context, in *inputs) error {
	ns := in.ns.Name
	objects := map[fleet.Key]*unstructured.Unstructured{}
	in.owners = map[types.UID]bool{}
	for _, gvk := range r.kinds.kinds() {
		metas := metadataList(gvk)
		if err := r.Fleet.List(ctx, metas, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("fleet %ss in %s: %w", gvk.Kind, ns, err)
		}
		live := metas.Items[:0]
		for _, m := range metas.Items {
			for _, ref := range m.OwnerReferences {
				in.owners[ref.UID] = true
			}
			switch {
			case clusterOwn(gvk, ns, m.Name):
			case m.DeletionTimestamp != nil:
				if fleet.HeldByGC(&m) {
					d := m.DeepCopy()
					d.SetGroupVersionKind(gvk)
					in.deleting = append(in.deleting, d)
				}
			default:
				live = append(live, m)
			}
		}
		if err := r.objects.read(ctx, ns, gvk, live, objects); err != nil {
			return err
		}
	}
	r.objects.keep(ns, objects)
	keys := slices.SortedFunc(maps.Keys(objects), func(a, b fleet.Key) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		in.objects = append(in.objects, objects[k])
	}
	return nil
}

// interpretersOf resolves the hub's ResourceInterpreters, so a custom kind's objects split over the fields its
// interpreter names; a ResourceInterpreter that does not resolve is its own controller's to report.
func (r *Reconciler) interpretersOf(ctx context.Context) (*health.Interpreters, error) {
	list := &workv1alpha1.ResourceInterpreterList{}
	if err := r.Hub.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing ResourceInterpreters: %w", err)
	}
	set, _ := interpreter.Resolve(list.Items, r.interpreters)
	return set, nil
}

// optOut removes what was generated for a namespace that is no longer opted in (or gone): the
// PlacementManifestWork (whose finalizer, run by the manager, removes its works from the clusters) and the
// generated Placement, unless a PlacementManifestWork handed over to a user uses it (deletePlacement). What is
// not labelled as generated is never removed.
func (r *Reconciler) optOut(ctx context.Context, in inputs) error {
	if in.pmw != nil && in.pmw.Labels[workv1alpha1.LabelFleetGenerated] == "true" && in.pmw.DeletionTimestamp == nil {
		// The status the manager wrote said what the clusters ran; nothing will run there now. Cleared before
		// the PMW goes, so a failure is retried while the PMW still says the namespace was delivered.
		if in.ns != nil && in.ns.DeletionTimestamp == nil {
			if err := r.clearStatuses(ctx, in.ns.Name); err != nil {
				return err
			}
		}
		if err := client.IgnoreNotFound(r.Hub.Delete(ctx, in.pmw)); err != nil {
			return fmt.Errorf("delete the generated PlacementManifestWork: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleted the generated PlacementManifestWork: the namespace is no longer opted in")
	}
	if err := r.deletePlacement(ctx, in.placement); err != nil {
		return fmt.Errorf("delete the generated Placement: %w", err)
	}
	return nil
}

// deletePlacement deletes p, the hub's Placement named workv1alpha1.FleetGeneratedName, when it is generated and
// no PlacementManifestWork that is not generated uses it: a PMW handed over to a user (its generated label
// removed) keeps the Placement it names, as it keeps its works. Once no such PMW names it, the next reconcile
// of the namespace (the PMW's change or deletion brings one) deletes it.
func (r *Reconciler) deletePlacement(ctx context.Context, p *clusterv1beta1.Placement) error {
	if p == nil || p.Labels[workv1alpha1.LabelFleetGenerated] != "true" || p.DeletionTimestamp != nil {
		return nil
	}
	pmws := &workv1alpha1.PlacementManifestWorkList{}
	if err := r.Hub.List(ctx, pmws, client.InNamespace(p.Namespace)); err != nil {
		return fmt.Errorf("list the PlacementManifestWorks: %w", err)
	}
	for _, pmw := range pmws.Items {
		if usesGeneratedPlacement(&pmw) && pmw.Labels[workv1alpha1.LabelFleetGenerated] != "true" && pmw.DeletionTimestamp == nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Kept the generated Placement: a PlacementManifestWork that is not generated uses it", "placementManifestWork", pmw.Name)
			return nil
		}
	}
	return client.IgnoreNotFound(r.Hub.Delete(ctx, p))
}

// usesGeneratedPlacement tells whether pmw names the Placement workv1alpha1.FleetGeneratedName.
func usesGeneratedPlacement(pmw *workv1alpha1.PlacementManifestWork) bool {
	return pmw.Spec.PlacementRef != nil && pmw.Spec.PlacementRef.Name == workv1alpha1.FleetGeneratedName
}

// clearStatuses removes the status the manager wrote on the namespace's objects (fleet.WritesStatus): with the
// namespace opted out, nothing runs them, and a status that says they are available would not be true.
func (r *Reconciler) clearStatuses(ctx context.Context, ns string) error {
	for _, gvk := range r.kinds.kinds() {
		if !fleet.WritesStatus(gvk.GroupKind()) {
			continue
		}
		metas := metadataList(gvk)
		if err := r.Fleet.List(ctx, metas, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("fleet %ss in %s: %w", gvk.Kind, ns, err)
		}
		for i := range metas.Items {
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(gvk)
			o.SetNamespace(ns)
			o.SetName(metas.Items[i].Name)
			if err := r.Fleet.Status().Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"status":null}`))); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("clear the status of %s: %w", fleet.KeyOf(o), err)
			}
		}
	}
	return nil
}

// applyPlacement writes the Placement generated from the namespace's cluster selector, or removes a generated
// one the namespace no longer asks for.
func (r *Reconciler) applyPlacement(ctx context.Context, ns string, opt fleet.OptInSpec, cur *clusterv1beta1.Placement) error {
	if opt.Generated == nil {
		return r.deletePlacement(ctx, cur)
	}
	p := &clusterv1beta1.Placement{Spec: *opt.Generated}
	p.SetGroupVersionKind(schema.GroupVersionKind{Group: clusterv1beta1.GroupName, Version: "v1beta1", Kind: "Placement"})
	p.Name, p.Namespace = workv1alpha1.FleetGeneratedName, ns
	p.Labels = map[string]string{workv1alpha1.LabelFleetGenerated: "true"}
	return r.apply(ctx, p)
}

// applyPMW writes the generated PlacementManifestWork with server-side apply, forcing the fields it sets: an
// edit of them on the hub is reverted, and an apply that changes nothing writes nothing.
func (r *Reconciler) applyPMW(ctx context.Context, ns string, spec workv1alpha1.PlacementManifestWorkSpec) (*workv1alpha1.PlacementManifestWork, error) {
	pmw := &workv1alpha1.PlacementManifestWork{Spec: spec}
	pmw.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
	pmw.Name, pmw.Namespace = workv1alpha1.FleetGeneratedName, ns
	pmw.Labels = map[string]string{workv1alpha1.LabelFleetGenerated: "true"}
	if err := r.apply(ctx, pmw); err != nil {
		return nil, err
	}
	return pmw, nil
}

func (r *Reconciler) apply(ctx context.Context, obj client.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	u := &unstructured.Unstructured{Object: m}
	if err := r.Hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	// Apply fills the object in with the API server's answer.
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

// record records on obj, with recorder, those of evs that were not among the events last recorded for key: an
// event is recorded once while it holds (one cluster recovering does not record the others' again), and again
// when it comes back after it ended.
func (r *Reconciler) record(obj runtime.Object, key fleet.Key, evs []fleet.Event, recorder events.EventRecorder) {
	now := make(map[fleet.Event]bool, len(evs))
	for _, e := range evs {
		now[e] = true
	}
	r.mu.Lock()
	if r.recorded == nil {
		r.recorded = map[fleet.Key]map[fleet.Event]bool{}
	}
	last := r.recorded[key]
	r.recorded[key] = now
	r.mu.Unlock()
	for _, e := range evs {
		if !last[e] {
			recorder.Eventf(obj, relatedCluster(e.Cluster), e.Type, e.Reason, "Reconcile", "%s", e.Message)
		}
	}
}

// relatedCluster is the ManagedCluster an event is about, as its related object; nil for none.
func relatedCluster(name string) runtime.Object {
	if name == "" {
		return nil
	}
	mc := &unstructured.Unstructured{}
	mc.SetGroupVersionKind(schema.GroupVersionKind{Group: clusterv1.GroupName, Version: "v1", Kind: "ManagedCluster"})
	mc.SetName(name)
	return mc
}

// forget drops what is held of a namespace that is not opted in: its objects, its revisions' generations and
// the events recorded on it and its objects.
func (r *Reconciler) forget(ns string) {
	r.objects.keep(ns, nil)
	r.mu.Lock()
	delete(r.generations, ns)
	r.mu.Unlock()
	r.forgetEvents(ns)
}

// forgetEvents drops the recorded events of a namespace and its objects, or of the objects not in keep when
// keep is not nil.
func (r *Reconciler) forgetEvents(ns string, keep ...fleet.Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.recorded {
		if (k.Namespace == ns || (k.Kind == "Namespace" && k.Name == ns)) && !slices.Contains(keep, k) {
			delete(r.recorded, k)
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// equalJSON tells whether a and b encode to the same JSON.
func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
