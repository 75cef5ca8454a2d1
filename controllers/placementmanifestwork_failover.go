package controllers

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// failoverPolicy is the PlacementManifestWork's failover policy with its defaults, and false when failover does
// not apply: it moves split shares only, and may be disabled.
func failoverPolicy(pmw *workv1alpha1.PlacementManifestWork) (failover.Policy, bool) {
	policy := pmw.Spec.Failover
	if !hasSplit(pmw) || (policy != nil && policy.Disabled) {
		return failover.Policy{}, false
	}
	p := failover.Policy{Grace: failover.DefaultGracePeriod, Recovery: failover.DefaultRecoveryPeriod}
	if policy != nil && policy.GracePeriod != nil {
		p.Grace = policy.GracePeriod.Duration
	}
	if policy != nil && policy.RecoveryPeriod != nil {
		p.Recovery = policy.RecoveryPeriod.Duration
	}
	return p, true
}

// failoverStates moves the failover state of every decided cluster forward from its health now. A cluster
// without a work yet has no state. It returns the new states, the clusters whose shares others carry, and when
// time alone changes the outcome. It never fails over every cluster: with no available cluster left there is
// nobody to carry the shares.
func failoverStates(p failover.Policy, clusters []string, current map[string]health.ClusterResult, previous map[string]failover.State, now time.Time) (map[string]failover.State, map[string]bool, time.Duration) {
	states := make(map[string]failover.State, len(previous))
	failedOver := map[string]bool{}
	var recheck time.Duration
	for _, cluster := range clusters {
		result, ok := current[cluster]
		if !ok {
			continue
		}
		h := failover.Progressing
		switch result.State {
		case health.Healthy:
			h = failover.Available
		case health.Degraded:
			h = failover.Unhealthy
		}
		s, after := failover.Next(p, now, h, previous[cluster])
		if s != (failover.State{}) {
			states[cluster] = s
		}
		if s.FailedOver {
			failedOver[cluster] = true
		}
		recheck = minPositive(recheck, after)
	}
	if len(failedOver) == len(clusters) {
		failedOver = map[string]bool{}
	}
	return states, failedOver, recheck
}

// failedOverStatus lists the failed-over clusters for status, sorted, with second precision as stored.
func failedOverStatus(states map[string]failover.State, failedOver map[string]bool) []workv1alpha1.FailedOverCluster {
	out := make([]workv1alpha1.FailedOverCluster, 0, len(failedOver))
	for c := range failedOver {
		out = append(out, workv1alpha1.FailedOverCluster{Cluster: c, Since: metav1.NewTime(states[c].FailedOverSince.UTC().Truncate(time.Second))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	if len(out) == 0 {
		return nil
	}
	return out
}
