package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

// sharesMemory keeps, per PlacementManifestWork, the split shares this manager delivered to each cluster: the
// "previous" shares that keep a division stable. They are the manager's own record, not the shares annotation
// of the works, which a cluster's work agent may edit: a forged share must never take replicas from other
// clusters. After a restart (or a leader change) the record is rebuilt from the annotations only when they
// describe exactly the division the PlacementManifestWork's status reports (see sharesMatchStatus).
type sharesMemory struct {
	mu    sync.Mutex
	byPMW map[types.NamespacedName]map[string]map[string]int32
}

// get returns the record, and false when there is none.
func (m *sharesMemory) get(key types.NamespacedName) (map[string]map[string]int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	shares, ok := m.byPMW[key]
	return shares, ok
}

// set replaces the record; the map is not modified afterwards.
func (m *sharesMemory) set(key types.NamespacedName, shares map[string]map[string]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byPMW == nil {
		m.byPMW = map[types.NamespacedName]map[string]map[string]int32{}
	}
	m.byPMW[key] = shares
}

func (m *sharesMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byPMW, key)
}

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
