package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/metrics"
)

// unavailableClusters says, for every ManagedCluster whose Available condition is False, Unknown or not yet
// reported, why it is not available. A decided cluster without a ManagedCluster is not listed: OCM only
// decides clusters that exist, so its absence is a deletion in progress, reported through its work instead.
func (r *PlacementManifestWorkReconciler) unavailableClusters(ctx context.Context) (map[string]string, error) {
	list := &clusterv1.ManagedClusterList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy, client.MatchingFields{IndexUnavailable: "true"}); err != nil {
		return nil, fmt.Errorf("listing unavailable ManagedClusters: %w", err)
	}
	out := map[string]string{}
	for i := range list.Items {
		if why := unavailable(&list.Items[i]); why != "" {
			out[list.Items[i].Name] = why
		}
	}
	return out, nil
}

// unavailable says why a ManagedCluster is not available, or "" when it is.
func unavailable(mc *clusterv1.ManagedCluster) string {
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	switch {
	case c == nil:
		return "the ManagedCluster has not reported availability yet"
	case c.Status == metav1.ConditionTrue:
		return ""
	case c.Status == metav1.ConditionUnknown:
		return fmt.Sprintf("the ManagedCluster's availability is Unknown: %s", c.Message)
	default:
		return fmt.Sprintf("the ManagedCluster is not available: %s", c.Message)
	}
}

// fanOutClock remembers when each PlacementManifestWork generation was first seen, to measure fan-out latency.
type fanOutClock struct {
	mu    sync.Mutex
	start map[types.NamespacedName]generationStart
}

type generationStart struct {
	generation int64
	at         time.Time
}

func (f *fanOutClock) seen(key types.NamespacedName, generation int64, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.start == nil {
		f.start = map[types.NamespacedName]generationStart{}
	}
	if s, ok := f.start[key]; !ok || s.generation != generation {
		f.start[key] = generationStart{generation: generation, at: now}
	}
}

// done returns how long ago the generation was first seen, once; false when it was already measured.
func (f *fanOutClock) done(key types.NamespacedName, generation int64, now time.Time) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.start[key]
	if !ok || s.generation != generation || s.at.IsZero() {
		return 0, false
	}
	f.start[key] = generationStart{generation: generation}
	return now.Sub(s.at), true
}

func (f *fanOutClock) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.start, key)
}

// observeMetrics updates the PlacementManifestWork's gauges and, when every decided cluster has this
// generation's work, the fan-out latency.
func (r *PlacementManifestWorkReconciler) observeMetrics(key types.NamespacedName, generation int64, obs *observation, st workv1alpha1.PlacementManifestWorkStatus) {
	works := len(obs.owned)
	for cluster := range obs.written {
		if _, ok := obs.owned[cluster]; !ok {
			works++
		}
	}
	metrics.ManifestWorks.WithLabelValues(key.Namespace, key.Name).Set(float64(works))
	s := st.PlacedManifestWorkSummary
	metrics.Clusters.WithLabelValues(key.Namespace, key.Name, "available").Set(float64(s.Available))
	metrics.Clusters.WithLabelValues(key.Namespace, key.Name, "progressing").Set(float64(s.Progressing))
	metrics.Clusters.WithLabelValues(key.Namespace, key.Name, "degraded").Set(float64(s.Degraded))
	if obs.plan != nil && len(obs.writeErrors) == 0 && len(obs.conflicts) == 0 {
		if d, ok := r.fanOut.done(key, generation, r.now()); ok {
			metrics.FanOutSeconds.Observe(d.Seconds())
		}
	}
}
