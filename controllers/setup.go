package controllers

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
)

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

// SetupWithManager registers the field indexes, the PlacementManifestWork controller and the ResourceInterpreter
// status controller with mgr.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := setupIndexes(ctx, mgr); err != nil {
		return err
	}
	// Interpreters call their webhooks through one client, answers remembered by question; each reconcile
	// through its own session of it.
	webhooks := &interpreterwebhook.Caller{Client: &interpreterwebhook.Client{}}
	cache := interpreter.NewCacheWithWebhooks(webhooks)
	if err := setupInterpreters(mgr, cache); err != nil {
		return err
	}
	r := &PlacementManifestWorkReconciler{
		interpreterCache:      cache,
		webhooks:              webhooks,
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
		// Its revisions: one deleted by someone is written again.
		Owns(&appsv1.ControllerRevision{}).
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.byPlacement)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.byDecision)).
		Watches(&workv1.ManifestWork{}, r.workEvents()).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.byManagedCluster),
			builder.WithPredicates(predicate.Or[client.Object](predicate.LabelChangedPredicate{}, availabilityChanged(), claimsChanged()))).
		Watches(&clusterv1alpha1.AddOnPlacementScore{}, handler.EnqueueRequestsFromMapFunc(r.byScore)).
		Watches(&workv1alpha1.ResourceInterpreter{}, handler.EnqueueRequestsFromMapFunc(r.byInterpreter),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// The hub objects PMWs carry along (spec.propagateDependencies), as metadata only: a change wakes the PMWs
		// of their namespace that carry dependencies, which read them from the API server (cache.go trims them).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.byDependency), builder.OnlyMetadata).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.byDependency), builder.OnlyMetadata).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(r.byDependency), builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.MaxConcurrentReconciles, 1)}).
		Complete(r)
}
