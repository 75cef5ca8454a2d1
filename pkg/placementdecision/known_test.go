package placementdecision

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

func ownedBy(d clusterv1beta1.PlacementDecision, uid types.UID) clusterv1beta1.PlacementDecision {
	d.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement", Name: "p", UID: uid,
	}}
	return d
}

func TestUnknown(t *testing.T) {
	decided := reported(2, "d-1")
	decided.Name, decided.UID = "p", "new"
	deleting := decided.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	undecided := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "new"}}
	unsatisfied := decided.DeepCopy()
	unsatisfied.Status.Conditions[0].Status = metav1.ConditionFalse

	cases := map[string]struct {
		placement *clusterv1beta1.Placement
		decisions []clusterv1beta1.PlacementDecision
		// want is a fragment of the reason; empty means known.
		want string
	}{
		"decided, decisions of this Placement": {
			placement: decided,
			decisions: []clusterv1beta1.PlacementDecision{ownedBy(decision("d-1", "a", "b"), "new")},
		},
		"decided, decisions without an owner (written by another scheduler)": {
			placement: decided,
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b")},
		},
		"decided to nothing: one empty decision, as OCM writes it": {
			placement: unsatisfied,
			decisions: []clusterv1beta1.PlacementDecision{ownedBy(decision("d-1"), "new")},
		},
		"not decided yet: no PlacementSatisfied condition": {
			placement: undecided,
			decisions: []clusterv1beta1.PlacementDecision{ownedBy(decision("d-1", "a"), "new")},
			want:      "has not decided",
		},
		"not decided yet, and no decisions": {
			placement: undecided,
			want:      "has not decided",
		},
		"status written but no decisions": {
			placement: decided,
			want:      "no PlacementDecision",
		},
		"re-created: the decisions belong to the deleted Placement": {
			placement: decided,
			decisions: []clusterv1beta1.PlacementDecision{ownedBy(decision("d-1", "a", "b"), "old")},
			want:      "earlier Placement",
		},
		"a decision the status names is missing": {
			placement: reported(3, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b")},
			want:      "d-2 named in the status",
		},
		"being deleted": {
			placement: deleting,
			decisions: []clusterv1beta1.PlacementDecision{ownedBy(decision("d-1", "a", "b"), "new")},
			want:      "being deleted",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Unknown(tc.placement, tc.decisions)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Unknown() = %q, want a reason containing %q", got, tc.want)
			}
		})
	}
}
