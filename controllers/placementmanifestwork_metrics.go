package controllers

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
)

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
		if d, ok := r.memory.fanOutDone(key, generation, r.now()); ok {
			metrics.FanOutSeconds.Observe(d.Seconds())
		}
	}
}

// observeRollouts counts a rollback when the stored status records a failed revision the previous one did
// not (failurePolicy Rollback), and observes a rollout's duration when it ends: completed, or rolled back on
// every cluster.
func observeRollouts(key types.NamespacedName, change *statusChange, now time.Time) {
	before, after := &change.before, &change.after
	if newlyFailed(before, after) {
		metrics.Rollbacks.WithLabelValues(key.Namespace, key.Name).Inc()
	}
	switch {
	case justCompleted(before, after):
		metrics.RolloutSeconds.WithLabelValues("completed").Observe(now.Sub(before.Rollout.StartedAt.Time).Seconds())
	case rolledBack(after) && !rolledBack(before) && started(after):
		metrics.RolloutSeconds.WithLabelValues("rolled_back").Observe(now.Sub(after.Rollout.StartedAt.Time).Seconds())
	}
}
