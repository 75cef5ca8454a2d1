package controllers

import (
	"k8s.io/apimachinery/pkg/api/equality"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

// sharesMatchStatus reports whether shares read from the works' annotations describe the division the
// status reports: per split the same count of clusters per share, the same named clusters and the same placed
// and failed-over sums. One agent that changes its own share changes the count of two share values, so its
// forgery is caught; the record is then dropped and the division starts afresh. The status is the manager's
// (agents cannot write it), from its last reconcile.
func sharesMatchStatus(plan *planner.Plan, shares map[string]map[string]int32, clusters []string, failedOver map[string]bool, reported []workv1alpha1.SplitStatus) bool {
	got := planner.DeliveredSplits(plan, shares, clusters, failedOver)
	if len(got) != len(reported) {
		return false
	}
	for i := range got {
		g, r := got[i], reported[i]
		g.Total, g.Unplaced, r.Total, r.Unplaced = 0, 0, 0, 0
		if !equality.Semantic.DeepEqual(g, r) {
			return false
		}
	}
	return true
}
