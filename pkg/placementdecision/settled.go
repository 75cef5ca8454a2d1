// Package placementdecision reads a Placement's decisions as OCM's placement controller publishes them.
package placementdecision

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// Unsettled says why a Placement's decisions are in the middle of a rewrite, or "" when they are settled.
//
// OCM's placement controller rewrites the PlacementDecisions one at a time and then the Placement's status
// (selected count and the decisions of each group). Between those writes the union of the decisions is neither
// the old selection nor the new one: a window of clusters that moves holds some clusters twice and misses
// others. Acting on it would create, split and delete for clusters only to undo it a moment later. The
// decisions are settled when they are exactly the ones the status names, hold no cluster twice, and hold as
// many clusters as the status selected. A Placement whose status the placement controller has not written
// (no PlacementSatisfied condition) is taken as it is.
func Unsettled(p *clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) string {
	if meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied) == nil {
		return ""
	}
	named := map[string]bool{}
	for _, g := range p.Status.DecisionGroups {
		for _, n := range g.Decisions {
			named[n] = true
		}
	}
	if len(named) > 0 {
		have := map[string]bool{}
		for i := range decisions {
			if !named[decisions[i].Name] {
				return fmt.Sprintf("PlacementDecision %s is not in the Placement's status", decisions[i].Name)
			}
			have[decisions[i].Name] = true
		}
		var missing []string
		for n := range named {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return fmt.Sprintf("PlacementDecisions %v named in the Placement's status are missing", missing)
		}
	}
	clusters := map[string]bool{}
	for i := range decisions {
		for _, d := range decisions[i].Status.Decisions {
			if d.ClusterName == "" {
				continue
			}
			if clusters[d.ClusterName] {
				return fmt.Sprintf("cluster %s is in more than one decision", d.ClusterName)
			}
			clusters[d.ClusterName] = true
		}
	}
	if want := int(p.Status.NumberOfSelectedClusters); len(clusters) != want {
		return fmt.Sprintf("the decisions hold %d clusters, the Placement's status selected %d", len(clusters), want)
	}
	return ""
}
