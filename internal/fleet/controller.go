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
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

// fieldOwner is the server-side apply field manager of what the controller writes on the hub.
const fieldOwner = "placement-manifestwork-fleet"

// Event reasons on the fleet API server's namespaces and objects.
const (
	// EventHubNamespaceMissing (Warning, on the fleet namespace): the hub has no namespace of the same name, so
	// nothing is delivered; an administrator creates it with a ManagedClusterSetBinding (the security boundary).
	EventHubNamespaceMissing = "HubNamespaceMissing"
	// EventInvalidOptIn (Warning, on the fleet namespace): its opt-in label or annotations do not parse.
	EventInvalidOptIn = "InvalidOptIn"
	// EventNotGenerated (Warning, on the fleet namespace): the hub namespace holds a PlacementManifestWork or
	// Placement named workv1alpha1.FleetGeneratedName that the controller did not generate; it is left alone.
	EventNotGenerated = "NotGenerated"
	// EventTranslateFailed (Warning, on the fleet namespace): the namespace's objects cannot be translated.
	EventTranslateFailed = "TranslateFailed"
	// EventNotDelivered (Warning, on the fleet object): the object is left out (fleet.Unsupported).
	EventNotDelivered = "NotDelivered"
)

// Kinds are the built-in kinds whose objects the controller watches (as unstructured objects, from the fleet
// cluster's cache) and translates. A fixed list for the first slice: other kinds are not read at all.
var Kinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
}

// perNamespace are the objects an API server's own controllers make in every namespace: a copy would
// overwrite each cluster's own (its CA bundle, its default ServiceAccount), and removing the fleet's would
// remove theirs.
var perNamespace = map[fleet.Key]bool{
	{Kind: "ConfigMap", Name: "kube-root-ca.crt"}: true,
	{Kind: "ServiceAccount", Name: "default"}:     true,
}

// The fleet controller's permissions on the hub (only used when the manager runs with --fleet-kubeconfig): it
// reads whether the hub namespace exists through the manager's cache, server-side applies and deletes the
// generated PlacementManifestWork and Placement, and reads their decisions and works (cached).
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=get;list;watch

// Reconciler writes one fleet namespace's PlacementManifestWork on the hub and its objects' status on the
// fleet API server. The request's name is the fleet namespace.
type Reconciler struct {
	// Hub reads (cached) and writes the hub.
	Hub client.Client
	// Fleet reads (cached, unstructured too) and writes the fleet API server.
	Fleet client.Client
	// Recorder records events on the fleet API server.
	Recorder events.EventRecorder
	// Now is the clock of condition times; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// recorded holds the events last recorded per fleet object (or namespace), joined: an event is recorded
	// again only when they change.
	recorded map[fleet.Key]string
}

// SetupWithManager adds the fleet API server reached with fleetConfig to mgr as a second cluster and registers
// the controller.
func SetupWithManager(mgr ctrl.Manager, fleetConfig *rest.Config) error {
	fc, err := cluster.New(fleetConfig, func(o *cluster.Options) {
		o.Scheme = runtime.NewScheme()
		o.Client.Cache = &client.CacheOptions{Unstructured: true}
	})
	if err != nil {
		return fmt.Errorf("fleet API server: %w", err)
	}
	if err := corev1.AddToScheme(fc.GetScheme()); err != nil {
		return err
	}
	if err := mgr.Add(fc); err != nil {
		return err
	}
	r := &Reconciler{Hub: mgr.GetClient(), Fleet: fc.GetClient(), Recorder: fc.GetEventRecorder("placement-manifestwork-fleet")}
	b := ctrl.NewControllerManagedBy(mgr).Named("fleet").
		WatchesRawSource(source.Kind[client.Object](fc.GetCache(), &corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(byName))).
		Watches(&workv1alpha1.PlacementManifestWork{}, handler.EnqueueRequestsFromMapFunc(byGeneratedName)).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(byGeneratedName)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(byNamespace)).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(byOwner))
	for _, gvk := range Kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		b = b.WatchesRawSource(source.Kind[client.Object](fc.GetCache(), u, handler.EnqueueRequestsFromMapFunc(byNamespace)))
	}
	return b.Complete(r)
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

// byOwner maps a ManifestWork to the namespace of its PlacementManifestWork, when that is a generated one.
func byOwner(_ context.Context, o client.Object) []reconcile.Request {
	ns, name, ok := strings.Cut(o.GetAnnotations()[workv1alpha1.AnnotationOwner], "/")
	if !ok || name != workv1alpha1.FleetGeneratedName {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: ns}}}
}

// inputs is what one reconcile reads.
type inputs struct {
	// ns is the fleet namespace; nil when it is gone.
	ns *corev1.Namespace
	// objects are its objects of Kinds, without those being deleted and the per-namespace ones.
	objects []*unstructured.Unstructured
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
		r.record(in.ns, fleet.Key{Kind: "Namespace", Name: name}, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: EventInvalidOptIn, Message: err.Error()}})
		return ctrl.Result{}, nil
	}
	if !opt.OptedIn() {
		r.forget(name)
		return ctrl.Result{}, r.optOut(ctx, in)
	}
	nsKey := fleet.Key{Kind: "Namespace", Name: name}
	if !in.hubNamespace {
		r.record(in.ns, nsKey, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: EventHubNamespaceMissing,
			Message: fmt.Sprintf("the hub has no namespace %q: nothing is delivered; a hub administrator creates it, with a ManagedClusterSetBinding for the clusters it may use", name)}})
		return ctrl.Result{}, nil
	}
	tr, err := fleet.Translate(name, in.objects, fleet.Options{IncludeNamespace: true})
	if err != nil {
		r.record(in.ns, nsKey, []fleet.Event{{Type: corev1.EventTypeWarning, Reason: EventTranslateFailed, Message: err.Error()}})
		return ctrl.Result{}, nil
	}
	var nsEvents []fleet.Event
	if in.pmw != nil && in.pmw.Labels[workv1alpha1.LabelFleetGenerated] != "true" {
		nsEvents = append(nsEvents, notGenerated("PlacementManifestWork", name))
	}
	if opt.Generated != nil && in.placement != nil && in.placement.Labels[workv1alpha1.LabelFleetGenerated] != "true" {
		nsEvents = append(nsEvents, notGenerated("Placement", name))
	}
	r.record(in.ns, nsKey, nsEvents)
	if len(nsEvents) > 0 {
		return ctrl.Result{}, nil
	}

	if err := r.applyPlacement(ctx, name, opt, in.placement); err != nil {
		return ctrl.Result{}, err
	}
	pmw, err := r.applyPMW(ctx, name, tr.Spec(opt.Placement))
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.writeStatus(ctx, in, tr, pmw)
}

func notGenerated(kind, ns string) fleet.Event {
	return fleet.Event{Type: corev1.EventTypeWarning, Reason: EventNotGenerated, Message: fmt.Sprintf(
		"the hub's %s %s/%s is not labelled %s=true: it is someone else's and is left alone; rename or remove it", kind, ns, workv1alpha1.FleetGeneratedName, workv1alpha1.LabelFleetGenerated)}
}

// gather reads the fleet namespace, its objects and the hub's generated objects.
func (r *Reconciler) gather(ctx context.Context, name string) (inputs, error) {
	var in inputs
	ns := &corev1.Namespace{}
	switch err := r.Fleet.Get(ctx, client.ObjectKey{Name: name}, ns); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("fleet namespace %s: %w", name, err)
	default:
		in.ns = ns
	}
	if in.ns != nil {
		for _, gvk := range Kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := r.Fleet.List(ctx, list, client.InNamespace(name)); err != nil {
				return in, fmt.Errorf("fleet %ss in %s: %w", gvk.Kind, name, err)
			}
			for i := range list.Items {
				o := &list.Items[i]
				o.SetGroupVersionKind(gvk)
				if o.GetDeletionTimestamp() != nil || perNamespace[fleet.Key{Group: gvk.Group, Kind: gvk.Kind, Name: o.GetName()}] {
					continue
				}
				in.objects = append(in.objects, o)
			}
		}
	}
	switch err := r.Hub.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}); {
	case apierrors.IsNotFound(err):
		return in, nil
	case err != nil:
		return in, fmt.Errorf("hub namespace %s: %w", name, err)
	}
	in.hubNamespace = true
	key := client.ObjectKey{Namespace: name, Name: workv1alpha1.FleetGeneratedName}
	pmw := &workv1alpha1.PlacementManifestWork{}
	switch err := r.Hub.Get(ctx, key, pmw); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("hub PlacementManifestWork %s: %w", key, err)
	default:
		in.pmw = pmw
	}
	p := &clusterv1beta1.Placement{}
	switch err := r.Hub.Get(ctx, key, p); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("hub Placement %s: %w", key, err)
	default:
		in.placement = p
	}
	return in, nil
}

// optOut removes what was generated for a namespace that is no longer opted in (or gone): the
// PlacementManifestWork (whose finalizer, run by the manager, removes its works from the clusters) and the
// generated Placement. What is not labelled as generated is never removed.
func (r *Reconciler) optOut(ctx context.Context, in inputs) error {
	if in.pmw != nil && in.pmw.Labels[workv1alpha1.LabelFleetGenerated] == "true" && in.pmw.DeletionTimestamp == nil {
		if err := client.IgnoreNotFound(r.Hub.Delete(ctx, in.pmw)); err != nil {
			return fmt.Errorf("delete the generated PlacementManifestWork: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleted the generated PlacementManifestWork: the namespace is no longer opted in")
	}
	if in.placement != nil && in.placement.Labels[workv1alpha1.LabelFleetGenerated] == "true" && in.placement.DeletionTimestamp == nil {
		if err := client.IgnoreNotFound(r.Hub.Delete(ctx, in.placement)); err != nil {
			return fmt.Errorf("delete the generated Placement: %w", err)
		}
	}
	return nil
}

// applyPlacement writes the Placement generated from the namespace's cluster selector, or removes a generated
// one the namespace no longer asks for.
func (r *Reconciler) applyPlacement(ctx context.Context, ns string, opt fleet.OptInSpec, cur *clusterv1beta1.Placement) error {
	if opt.Generated == nil {
		if cur != nil && cur.Labels[workv1alpha1.LabelFleetGenerated] == "true" && cur.DeletionTimestamp == nil {
			return client.IgnoreNotFound(r.Hub.Delete(ctx, cur))
		}
		return nil
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

// record records evs on obj when they differ from what was last recorded for key.
func (r *Reconciler) record(obj runtime.Object, key fleet.Key, evs []fleet.Event) {
	parts := make([]string, 0, len(evs))
	for _, e := range evs {
		parts = append(parts, e.Type+"/"+e.Reason+"/"+e.Message)
	}
	joined := strings.Join(parts, "\n")
	r.mu.Lock()
	if r.recorded == nil {
		r.recorded = map[fleet.Key]string{}
	}
	last, seen := r.recorded[key]
	r.recorded[key] = joined
	r.mu.Unlock()
	if seen && last == joined {
		return
	}
	for _, e := range evs {
		r.Recorder.Eventf(obj, nil, e.Type, e.Reason, "Reconcile", "%s", e.Message)
	}
}

// forget drops the recorded events of a namespace and its objects, or of the objects not in keep when keep is
// not nil.
func (r *Reconciler) forget(ns string, keep ...fleet.Key) {
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
