package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// specOrDeletionChanged passes creations, deletions, and updates that change the spec, start deletion or ask
// for a retry (workv1alpha1.AnnotationRetryRevision); the controller's own status and finalizer writes do not
// wake it again.
func specOrDeletionChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() ||
				e.ObjectOld.GetAnnotations()[workv1alpha1.AnnotationRetryRevision] != e.ObjectNew.GetAnnotations()[workv1alpha1.AnnotationRetryRevision] ||
				e.ObjectOld.GetAnnotations()[workv1alpha1.AnnotationApprove] != e.ObjectNew.GetAnnotations()[workv1alpha1.AnnotationApprove]
		},
	})
}

// byPlacement maps a Placement to the PlacementManifestWorks of its namespace that use it.
func (r *PlacementManifestWorkReconciler) byPlacement(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requestsFor(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexPlacement: o.GetName()})
}

// byDecision maps a PlacementDecision to the PlacementManifestWorks that use its Placement.
func (r *PlacementManifestWorkReconciler) byDecision(ctx context.Context, o client.Object) []reconcile.Request {
	placement, ok := o.GetLabels()[clusterv1beta1.PlacementLabel]
	if !ok {
		return nil
	}
	return r.requestsFor(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexPlacement: placement})
}

// byScore maps an AddOnPlacementScore to the PlacementManifestWorks whose Score splits read it.
func (r *PlacementManifestWorkReconciler) byScore(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requestsFor(ctx, client.MatchingFields{IndexScoreResource: o.GetName()})
}

// byManagedCluster maps a ManagedCluster whose labels, claims or availability changed to the
// PlacementManifestWorks with a work in its namespace, whose health it changes, and to those that read clusters'
// labels or claims (Weighted splits by label, overrides).
func (r *PlacementManifestWorkReconciler) byManagedCluster(ctx context.Context, o client.Object) []reconcile.Request {
	out := r.requestsFor(ctx, client.MatchingFields{IndexClusterLabels: "true"})
	works := &workv1.ManifestWorkList{}
	if err := r.List(ctx, works, client.InNamespace(o.GetName()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ManifestWorks for a ManagedCluster event", "cluster", o.GetName())
		return out
	}
	for i := range works.Items {
		out = append(out, byOwnerAnnotation(ctx, &works.Items[i])...)
	}
	return out
}

// availabilityChanged passes ManagedCluster updates that change its Available condition's status.
func availabilityChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
			after, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
			return ok1 && ok2 && health.ManagedClusterUnavailable(before) != health.ManagedClusterUnavailable(after)
		},
	}
}

// claimsChanged passes ManagedCluster updates that change its ClusterClaims (names or values), which overrides
// select by and read; the agent's other status updates (capacity, conditions' heartbeats) are dropped.
func claimsChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*clusterv1.ManagedCluster)
			after, ok2 := e.ObjectNew.(*clusterv1.ManagedCluster)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(claims(before), claims(after))
		},
	}
}

// claims are a ManagedCluster's ClusterClaims by name.
func claims(mc *clusterv1.ManagedCluster) map[string]string {
	out := make(map[string]string, len(mc.Status.ClusterClaims))
	for _, c := range mc.Status.ClusterClaims {
		out[c.Name] = c.Value
	}
	return out
}

func (r *PlacementManifestWorkReconciler) requestsFor(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &workv1alpha1.PlacementManifestWorkList{}
	// Only names are read, so the cache's objects are not copied.
	if err := r.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing PlacementManifestWorks for an event")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
	}
	return out
}

// workEvents records how far the cache of ManifestWorks has come (memory.works) and wakes a ManifestWork's
// PlacementManifestWork (byOwnerAnnotation; on an update the old object's too, whose owner may have changed),
// after its pace when it is held back (memory.reconciled): the agents' reports that arrive during a hold then
// wait in the queue as one, instead of each waking a reconcile that only finds it is held.
func (r *PlacementManifestWorkReconciler) workEvents() handler.EventHandler {
	enqueue := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objects ...client.Object) {
		// The last object is the newest: the cache holds it now.
		r.memory.works.observed(objects[len(objects)-1].GetResourceVersion(), time.Now())
		seen := map[reconcile.Request]bool{}
		for _, o := range objects {
			for _, req := range byOwnerAnnotation(context.Background(), o) {
				if seen[req] {
					continue
				}
				seen[req] = true
				if wait := r.memory.paced(req.NamespacedName, time.Now()); wait > 0 {
					q.AddAfter(req, wait)
				} else {
					q.Add(req)
				}
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(q, e.Object)
		},
	}
}

// byOwnerAnnotation maps a ManifestWork to the PlacementManifestWork its owner annotation names.
func byOwnerAnnotation(_ context.Context, o client.Object) []reconcile.Request {
	owner, ok := manifestwork.OwnerOf(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: owner}}
}

// byInterpreter maps a ResourceInterpreter to the PlacementManifestWorks with a manifest of its kind.
func (r *PlacementManifestWorkReconciler) byInterpreter(ctx context.Context, o client.Object) []reconcile.Request {
	ri, ok := o.(*workv1alpha1.ResourceInterpreter)
	if !ok {
		return nil
	}
	return r.requestsFor(ctx, client.MatchingFields{IndexTemplateKind: templateKindKey(ri.Spec.Target.Group, ri.Spec.Target.Kind)})
}

// byDependency maps a ConfigMap, Secret or ServiceAccount (its metadata) to the PlacementManifestWorks of its
// namespace that carry dependencies along: which of them name it is known only by evaluating their
// interpreters, which their reconcile does.
func (r *PlacementManifestWorkReconciler) byDependency(ctx context.Context, o client.Object) []reconcile.Request {
	return r.requestsFor(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{IndexPropagatesDependencies: "true"})
}
