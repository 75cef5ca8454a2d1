package ocmsim_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// clusters are n cluster names, cluster-001.., given in reverse so that sorting them shows.
func clusters(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[n-1-i] = fmt.Sprintf("cluster-%03d", i+1)
	}
	return out
}

// decided is what a decision says: its name and its first and last cluster and how many.
type decided struct {
	Name, First, Last string
	Count             int
}

func TestDecisions(t *testing.T) {
	cases := map[string]struct {
		clusters []string
		want     []decided
	}{
		"none: one empty decision": {want: []decided{{Name: "p-decision-1"}}},
		"one":                      {clusters: []string{"c1"}, want: []decided{{Name: "p-decision-1", First: "c1", Last: "c1", Count: 1}}},
		"sorted": {clusters: []string{"b", "c", "a"},
			want: []decided{{Name: "p-decision-1", First: "a", Last: "c", Count: 3}}},
		"exactly 100": {clusters: clusters(100),
			want: []decided{{Name: "p-decision-1", First: "cluster-001", Last: "cluster-100", Count: 100}}},
		"101: a second decision": {clusters: clusters(101), want: []decided{
			{Name: "p-decision-1", First: "cluster-001", Last: "cluster-100", Count: 100},
			{Name: "p-decision-2", First: "cluster-101", Last: "cluster-101", Count: 1},
		}},
		"250": {clusters: clusters(250), want: []decided{
			{Name: "p-decision-1", First: "cluster-001", Last: "cluster-100", Count: 100},
			{Name: "p-decision-2", First: "cluster-101", Last: "cluster-200", Count: 100},
			{Name: "p-decision-3", First: "cluster-201", Last: "cluster-250", Count: 50},
		}},
	}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []decided
			for _, d := range ocmsim.Decisions(p, tc.clusters) {
				g := decided{Name: d.Name, Count: len(d.Status.Decisions)}
				if n := len(d.Status.Decisions); n > 0 {
					g.First, g.Last = d.Status.Decisions[0].ClusterName, d.Status.Decisions[n-1].ClusterName
				}
				got = append(got, g)
				wantLabels := map[string]string{clusterv1beta1.PlacementLabel: "p",
					clusterv1beta1.DecisionGroupIndexLabel: "0", clusterv1beta1.DecisionGroupNameLabel: ""}
				if diff := cmp.Diff(wantLabels, d.Labels); diff != "" || d.Namespace != "ns" {
					t.Errorf("%s in %q, labels (-want +got):\n%s", d.Name, d.Namespace, diff)
				}
				if len(d.OwnerReferences) != 0 {
					t.Errorf("%s is owned by %v, but the Placement has no UID", d.Name, d.OwnerReferences)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecisionsOwnedByThePlacement(t *testing.T) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}}
	d := ocmsim.Decisions(p, []string{"c1"})[0]
	want := []metav1.OwnerReference{{APIVersion: "cluster.open-cluster-management.io/v1beta1", Kind: "Placement", Name: "p",
		UID: "uid-1", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	if diff := cmp.Diff(want, d.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

func TestPlacementStatus(t *testing.T) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	satisfied := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		msg := "All cluster decisions scheduled"
		if status == metav1.ConditionFalse {
			msg = "No ManagedCluster matches any of the cluster predicate"
		}
		return []metav1.Condition{
			{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse, Reason: "Succeedconfigured",
				Message: "Placement configurations check pass"},
			{Type: clusterv1beta1.PlacementConditionSatisfied, Status: status, Reason: reason, Message: msg},
		}
	}
	group := func(selected int32, decisions ...string) []clusterv1beta1.DecisionGroupStatus {
		return []clusterv1beta1.DecisionGroupStatus{{Decisions: append([]string{}, decisions...), ClustersCount: selected}}
	}
	cases := map[string]struct {
		decisions []clusterv1beta1.PlacementDecision
		want      clusterv1beta1.PlacementStatus
	}{
		"nothing selected": {
			decisions: ocmsim.Decisions(p, nil),
			want: clusterv1beta1.PlacementStatus{DecisionGroups: group(0, "p-decision-1"),
				Conditions: satisfied(metav1.ConditionFalse, ocmsim.ReasonNoManagedClusterMatched)},
		},
		"no decision at all: one empty group": {
			want: clusterv1beta1.PlacementStatus{DecisionGroups: group(0),
				Conditions: satisfied(metav1.ConditionFalse, ocmsim.ReasonNoManagedClusterMatched)},
		},
		"decisions in the order of their number": {
			decisions: reversed(ocmsim.Decisions(p, clusters(1001))),
			want: clusterv1beta1.PlacementStatus{NumberOfSelectedClusters: 1001,
				DecisionGroups: group(1001, "p-decision-1", "p-decision-2", "p-decision-3", "p-decision-4", "p-decision-5",
					"p-decision-6", "p-decision-7", "p-decision-8", "p-decision-9", "p-decision-10", "p-decision-11"),
				Conditions: satisfied(metav1.ConditionTrue, ocmsim.ReasonAllDecisionsScheduled)},
		},
		"decisions written by name, one cluster in two": {
			decisions: []clusterv1beta1.PlacementDecision{
				ocmsim.Decision(p, "p-decision-2", []string{"c2", "c3"}),
				ocmsim.Decision(p, "p-decision-1", []string{"c1", "c2"}),
			},
			want: clusterv1beta1.PlacementStatus{NumberOfSelectedClusters: 3, DecisionGroups: group(4, "p-decision-1", "p-decision-2"),
				Conditions: satisfied(metav1.ConditionTrue, ocmsim.ReasonAllDecisionsScheduled)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ocmsim.PlacementStatus(clusterv1beta1.PlacementStatus{}, tc.decisions)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// A status computed again from the same decisions is the same, transition times included, so Placed does not
// write it again.
func TestPlacementStatusIsStable(t *testing.T) {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	ds := ocmsim.Decisions(p, clusters(3))
	first := ocmsim.PlacementStatus(clusterv1beta1.PlacementStatus{}, ds)
	if diff := cmp.Diff(first, ocmsim.PlacementStatus(first, ds)); diff != "" {
		t.Errorf("status changed without cause (-first +again):\n%s", diff)
	}
}

func reversed[T any](s []T) []T {
	out := make([]T, 0, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		out = append(out, s[i])
	}
	return out
}
