package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
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
