package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// Field index keys on PlacementManifestWorks and ManagedClusters.
const (
	// IndexPlacement indexes a PlacementManifestWork by the name of the Placement it uses.
	IndexPlacement = "placementManifestWork.placement"
	// IndexScoreResource indexes a PlacementManifestWork by the AddOnPlacementScore names its Score splits read.
	IndexScoreResource = "placementManifestWork.scoreResource"
	// IndexClusterLabels indexes, under "true", the PlacementManifestWorks whose Weighted splits select clusters
	// by label, so a ManagedCluster's label change reaches them.
	IndexClusterLabels = "placementManifestWork.clusterLabels"
	// IndexUnavailable indexes, under "true", the ManagedClusters that are not available, so a reconcile reads
	// those instead of every cluster of the hub.
	IndexUnavailable = "managedCluster.unavailable"
)

// CacheOptions restricts the manager's ManifestWork cache to the works PlacementManifestWorks own, so memory
// follows this manager's works, not every ManifestWork on the hub, and drops what the manager never reads from
// a cached object: managedFields (about a tenth of the cache at thousands of clusters), a work's manifests,
// which can reach hundreds of KiB per work (whether a work needs writing is decided by its spec-hash
// annotation, and a write always carries the whole desired spec), and all of a ManagedCluster but its labels
// and conditions. Updates of cached objects keep the API server's managedFields: an object without them
// leaves them as they are.
func CacheOptions() cache.Options {
	owned, err := labels.NewRequirement(workv1alpha1.LabelPlacementManifestWork, selection.Exists, nil)
	if err != nil {
		panic(err) // the key is a constant; an error here is a programming error
	}
	stripManagedFields := cache.TransformStripManagedFields()
	return cache.Options{
		DefaultTransform: stripManagedFields,
		ByObject: map[client.Object]cache.ByObject{
			// The manager reads a ManagedCluster's labels and Available condition, nothing of its spec (client
			// configs with CA bundles) or the rest of its status (capacity, versions, claims).
			&clusterv1.ManagedCluster{}: {
				Transform: func(o any) (any, error) {
					if mc, ok := o.(*clusterv1.ManagedCluster); ok {
						mc.Spec = clusterv1.ManagedClusterSpec{}
						mc.Status = clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions}
					}
					return stripManagedFields(o)
				},
			},
			&workv1.ManifestWork{}: {
				Label: labels.NewSelector().Add(*owned),
				Transform: func(o any) (any, error) {
					if w, ok := o.(*workv1.ManifestWork); ok {
						w.Spec.Workload.Manifests = nil
					}
					return stripManagedFields(o)
				},
			},
		},
	}
}

// Options tunes the controller.
type Options struct {
	// MaxConcurrentReconciles is how many PlacementManifestWorks are reconciled at once.
	MaxConcurrentReconciles int
	// MaxConcurrentWrites is how many ManifestWork writes one reconcile runs in parallel.
	MaxConcurrentWrites int
	// MaxManifestBytes bounds the manifests of one ManifestWork, as OCM's hub does; 500 KiB when 0.
	MaxManifestBytes int
	// DecisionSettleTimeout bounds how long a Placement's decisions may stay in the middle of a rewrite before
	// they are acted on as they are; 30 s when 0.
	DecisionSettleTimeout time.Duration
}

// SetupWithManager registers the field indexes and the PlacementManifestWork controller with mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := setupIndexes(ctx, mgr); err != nil {
		return err
	}
	r := &PlacementManifestWorkReconciler{
		Client:                mgr.GetClient(),
		MaxConcurrentWrites:   opts.MaxConcurrentWrites,
		MaxManifestBytes:      opts.MaxManifestBytes,
		DecisionSettleTimeout: opts.DecisionSettleTimeout,
		APIReader:             mgr.GetAPIReader(),
		Recorder:              mgr.GetEventRecorder("placementmanifestwork-controller"),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("placementmanifestwork").
		For(&workv1alpha1.PlacementManifestWork{}, builder.WithPredicates(specOrDeletionChanged())).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.byPlacement)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.byDecision)).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(byOwnerAnnotation)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.byManagedCluster),
			builder.WithPredicates(predicate.Or[client.Object](predicate.LabelChangedPredicate{}, availabilityChanged()))).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, handler.EnqueueRequestsFromMapFunc(r.byScore)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.MaxConcurrentReconciles, 1)}).
		Complete(r)
}

func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexPlacement, func(o client.Object) []string {
		return []string{o.(*workv1alpha1.PlacementManifestWork).PlacementName()}
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by placement: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexScoreResource, func(o client.Object) []string {
		var out []string
		for _, s := range o.(*workv1alpha1.PlacementManifestWork).Spec.DistributionStrategy {
			if s.Split != nil && s.Split.Type == workv1alpha1.SplitScore && s.Split.Score != nil {
				out = append(out, s.Split.Score.ResourceName)
			}
		}
		return out
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by score: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexClusterLabels, func(o client.Object) []string {
		for _, s := range o.(*workv1alpha1.PlacementManifestWork).Spec.DistributionStrategy {
			if s.Split != nil && s.Split.Type == workv1alpha1.SplitWeighted && usesSelector(s.Split.Weights) {
				return []string{"true"}
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by cluster labels: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1.ManagedCluster{}, IndexUnavailable, func(o client.Object) []string {
		if unavailable(o.(*clusterv1.ManagedCluster)) != "" {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing ManagedClusters by availability: %w", err)
	}
	return nil
}

// specOrDeletionChanged passes creations, deletions, and updates that change the spec or start deletion; the
// controller's own status and finalizer writes do not wake it again.
func specOrDeletionChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
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

// byManagedCluster maps a ManagedCluster whose labels or availability changed to the PlacementManifestWorks
// with a work in its namespace, whose health it changes, and to those weighing clusters by label.
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
			return ok1 && ok2 && unavailable(before) != unavailable(after)
		},
	}
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

// byOwnerAnnotation maps a ManifestWork to the PlacementManifestWork its owner annotation names.
func byOwnerAnnotation(_ context.Context, o client.Object) []reconcile.Request {
	owner, ok := manifestwork.OwnerOf(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: owner}}
}
