package placementdecision

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// Unknown says why a Placement's decisions cannot be taken as its selection yet, or "" when they can.
//
// OCM's placement controller decides a new Placement in two writes: it creates or updates the
// PlacementDecisions, then writes the Placement's status with the PlacementSatisfied condition. Until then the
// decisions say nothing about this Placement: there may be none, or there may be the decisions of an earlier
// Placement of the same name (deleted and re-created, by kubectl replace --force, a GitOps Replace=true sync or
// a Helm reinstall), which the controller reuses by name and the garbage collector deletes because their owner
// is gone. Acting on any of these would delete delivered ManifestWorks only to create them again seconds
// later, and the agents would delete the workloads (PersistentVolumeClaims included) in between. A Placement
// that is being deleted is not known either.
func Unknown(p *clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) string {
	switch {
	case !p.DeletionTimestamp.IsZero():
		return fmt.Sprintf("Placement %q is being deleted", p.Name)
	case meta.FindStatusCondition(p.Status.Conditions, clusterv1beta1.PlacementConditionSatisfied) == nil:
		return fmt.Sprintf("OCM's placement controller has not decided Placement %q yet", p.Name)
	case len(decisions) == 0:
		return fmt.Sprintf("Placement %q has no PlacementDecision yet", p.Name)
	}
	have := make(map[string]bool, len(decisions))
	for i := range decisions {
		have[decisions[i].Name] = true
	}
	for _, g := range p.Status.DecisionGroups {
		for _, name := range g.Decisions {
			if !have[name] {
				// Deleted by someone, or by the garbage collector, and not yet written again: its clusters are
				// unknown, however long that lasts.
				return fmt.Sprintf("PlacementDecision %s named in the status of Placement %q is missing", name, p.Name)
			}
		}
	}
	for i := range decisions {
		for _, ref := range decisions[i].OwnerReferences {
			if ref.Kind == "Placement" && ref.APIVersion == clusterv1beta1.GroupVersion.String() && ref.Name == p.Name && ref.UID != p.UID {
				return fmt.Sprintf("PlacementDecision %s belongs to an earlier Placement %q and waits for garbage collection", decisions[i].Name, p.Name)
			}
		}
	}
	return ""
}
