package placementdecision

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

func decision(name string, clusters ...string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

func reported(selected int32, names ...string) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{}
	p.Status.NumberOfSelectedClusters = selected
	p.Status.Conditions = []metav1.Condition{{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue}}
	if len(names) > 0 {
		p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{{Decisions: names}}
	}
	return p
}

func TestUnsettled(t *testing.T) {
	cases := []struct {
		name      string
		placement *clusterv1beta1.Placement
		decisions []clusterv1beta1.PlacementDecision
		// want is a fragment of the reason; empty means settled.
		want string
	}{
		{
			name:      "status not written by the placement controller: taken as it is",
			placement: &clusterv1beta1.Placement{},
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "a")},
		},
		{
			name:      "settled",
			placement: reported(3, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b"), decision("d-2", "c")},
		},
		{
			name:      "settled without decision groups in the status",
			placement: reported(2),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b")},
		},
		{
			name:      "nothing selected and nothing decided",
			placement: reported(0, "d-1"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1")},
		},
		{
			name:      "a window moving: one cluster in two decisions",
			placement: reported(4, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "c", "d"), decision("d-2", "c", "d")},
			want:      "in more than one decision",
		},
		{
			name:      "decisions rewritten, status not yet",
			placement: reported(4, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b"), decision("d-2", "c")},
			want:      "hold 3 clusters, the Placement's status selected 4",
		},
		{
			name:      "a new decision created but still empty",
			placement: reported(3, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b"), decision("d-2")},
			want:      "hold 2 clusters",
		},
		{
			name:      "a decision named in the status not seen yet",
			placement: reported(2, "d-1", "d-2"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b")},
			want:      "[d-2] named in the Placement's status are missing",
		},
		{
			name:      "a decision the status no longer names, not deleted yet",
			placement: reported(2, "d-1"),
			decisions: []clusterv1beta1.PlacementDecision{decision("d-1", "a", "b"), decision("d-2")},
			want:      "PlacementDecision d-2 is not in the Placement's status",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Unsettled(tc.placement, tc.decisions)
			switch {
			case tc.want == "" && got != "":
				t.Fatalf("Unsettled = %q, want settled", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Fatalf("Unsettled = %q, want it to contain %q", got, tc.want)
			}
		})
	}
}
