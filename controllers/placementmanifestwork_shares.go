package controllers

import (
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
		if !equalSplit(g, r) {
			return false
		}
	}
	return true
}

func equalSplit(a, b workv1alpha1.SplitStatus) bool {
	if a.Name != b.Name || a.Namespace != b.Namespace || a.Group != b.Group || a.Kind != b.Kind || a.FieldPath != b.FieldPath ||
		a.Placed != b.Placed || a.FailedOver != b.FailedOver || a.ClustersNotListed != b.ClustersNotListed ||
		len(a.Shares) != len(b.Shares) || len(a.Clusters) != len(b.Clusters) {
		return false
	}
	for i := range a.Shares {
		if a.Shares[i] != b.Shares[i] {
			return false
		}
	}
	for i := range a.Clusters {
		if a.Clusters[i] != b.Clusters[i] {
			return false
		}
	}
	return true
}
