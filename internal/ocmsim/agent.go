package ocmsim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Agent plays OCM's work agent for many clusters at once: it reports on each ManifestWork in a cluster's
// namespace the status a real agent would (Simulate), without applying anything anywhere.
type Agent struct {
	client.Client
	// Spokes says how each cluster's agent behaves; works in other namespaces are left alone.
	Spokes map[string]Spoke
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// seen records when the agent first saw each work's current generation, which is when a real agent would
	// have applied it and its pods would have started.
	seen map[types.NamespacedName]seenGeneration
}

type seenGeneration struct {
	uid        types.UID
	generation int64
	at         time.Time
}

// SetupWithManager registers the agent with a manager whose cache sees every ManifestWork of the cluster
// namespaces (not the PlacementManifestWork manager's label-filtered cache: a real agent sees every work).
func (a *Agent) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("simulated-work-agent").
		// The agent's own status writes do not change the generation, so they do not wake it again; workloads
		// becoming ready later are a RequeueAfter.
		For(&workv1.ManifestWork{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(a)
}

// Reconcile writes the simulated status of one ManifestWork.
func (a *Agent) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	spoke, ok := a.Spokes[req.Namespace]
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1.ManifestWork{}
	if err := a.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			a.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() {
		// The simulated agent puts no finalizer on works, so there is nothing to clean up.
		return ctrl.Result{}, nil
	}
	now := a.now()
	since := a.firstSeen(work, now)
	sim := Simulate(work, spoke, since, now)
	if !equality.Semantic.DeepEqual(work.Status, sim.Status) {
		work.Status = sim.Status
		if err := a.Status().Update(ctx, work); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating the status of ManifestWork %s: %w", req, err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Reported ManifestWork status", "cluster", req.Namespace, "generation", work.Generation)
	}
	return ctrl.Result{RequeueAfter: sim.RequeueAfter}, nil
}

func (a *Agent) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// firstSeen returns when the agent first saw the work's current generation, recording now if this is it.
func (a *Agent) firstSeen(work *workv1.ManifestWork, now time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[types.NamespacedName]seenGeneration{}
	}
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	s, ok := a.seen[key]
	if !ok || s.uid != work.UID || s.generation != work.Generation {
		s = seenGeneration{uid: work.UID, generation: work.Generation, at: now}
		a.seen[key] = s
	}
	return s.at
}

func (a *Agent) forget(key types.NamespacedName) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.seen, key)
}

// ReadyDelays staggers the clusters' ready delays (base, 1.25×base, 1.5×base, round-robin) so that clusters
// become ready one after another, as they would.
func ReadyDelays(clusters []string, base time.Duration) map[string]time.Duration {
	out := make(map[string]time.Duration, len(clusters))
	for i, c := range clusters {
		out[c] = base + time.Duration(i%3)*base/4
	}
	return out
}
