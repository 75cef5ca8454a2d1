package controllers

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
)

// observed is how many rollouts the duration histogram has seen with result, and their sum in seconds.
func observed(t *testing.T, result string) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := metrics.RolloutSeconds.WithLabelValues(result).(prometheus.Histogram).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// TestObserveRollouts: a rollout's duration is observed once when it ends, completed or rolled back on every
// cluster, from status.rollout.startedAt; a rollback is counted once when the failure is recorded.
func TestObserveRollouts(t *testing.T) {
	key := types.NamespacedName{Namespace: "rollout-metrics", Name: "web"}
	start := metav1.NewTime(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	now := start.Add(90 * time.Second)
	rev := func(n int64) *workv1alpha1.RevisionReference {
		return &workv1alpha1.RevisionReference{Revision: n, Name: "web-" + string(rune('a'+n))}
	}
	rolling := workv1alpha1.PlacementManifestWorkStatus{CurrentRevision: rev(2), CompletedRevision: rev(1),
		Rollout: &workv1alpha1.RolloutStatus{Total: 3, Updated: 1, StartedAt: &start}}

	completed := rolling
	completed.CompletedRevision = rev(2)
	completed.Rollout = &workv1alpha1.RolloutStatus{Total: 3, Updated: 3}
	n, sum := observed(t, "completed")
	observeRollouts(key, &statusChange{before: rolling, after: completed}, now)
	if n2, sum2 := observed(t, "completed"); n2 != n+1 || sum2-sum != 90 {
		t.Errorf("completed: %d observations (%v s), want %d (+90 s)", n2, sum2-sum, n+1)
	}
	observeRollouts(key, &statusChange{before: completed, after: completed}, now)
	if n2, _ := observed(t, "completed"); n2 != n+1 {
		t.Errorf("completed observed again when nothing changed: %d", n2)
	}

	failed := rolling
	failed.FailedRevision = &workv1alpha1.FailedRevision{Revision: 2, Name: rev(2).Name}
	meta.SetStatusCondition(&failed.Conditions, metav1.Condition{Type: workv1alpha1.ConditionRolloutComplete,
		Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonRolledBack})
	back := failed
	back.Rollout = &workv1alpha1.RolloutStatus{Total: 3, Updated: 3, StartedAt: &start}
	n, _ = observed(t, "rolled_back")
	rollbacks := counterValue(t, key)
	observeRollouts(key, &statusChange{before: rolling, after: failed}, now)
	if got := counterValue(t, key); got != rollbacks+1 {
		t.Errorf("rollbacks_total = %v, want %v once the failure is recorded", got, rollbacks+1)
	}
	if n2, _ := observed(t, "rolled_back"); n2 != n {
		t.Errorf("rolled_back observed before every cluster is back: %d", n2)
	}
	observeRollouts(key, &statusChange{before: failed, after: back}, now)
	if n2, _ := observed(t, "rolled_back"); n2 != n+1 {
		t.Errorf("rolled_back: %d observations, want %d once every cluster is back", n2, n+1)
	}
	if got := counterValue(t, key); got != rollbacks+1 {
		t.Errorf("rollbacks_total = %v, want it counted once", got)
	}
}

func counterValue(t *testing.T, key types.NamespacedName) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := metrics.Rollbacks.WithLabelValues(key.Namespace, key.Name).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
