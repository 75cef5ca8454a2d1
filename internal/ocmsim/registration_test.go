package ocmsim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

func TestManagedCluster(t *testing.T) {
	cases := map[string]struct {
		clusterSet string
		labels     map[string]string
		want       map[string]string
	}{
		"no set":       {want: map[string]string{"name": "c1"}},
		"in a set":     {clusterSet: "s", want: map[string]string{"name": "c1", clusterv1beta2.ClusterSetLabel: "s"}},
		"extra labels": {clusterSet: "s", labels: map[string]string{"region": "eu"}, want: map[string]string{"name": "c1", clusterv1beta2.ClusterSetLabel: "s", "region": "eu"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := ocmsim.ManagedCluster("c1", tc.clusterSet, tc.labels)
			if diff := cmp.Diff(tc.want, mc.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if !mc.Spec.HubAcceptsClient {
				t.Errorf("the hub does not accept the cluster")
			}
		})
	}
}

// The placement controller decides only clusters that are available; the status says so as OCM's does.
func TestManagedClusterStatus(t *testing.T) {
	s := ocmsim.ManagedClusterStatus(metav1.Now())
	got := map[string]string{}
	for _, c := range s.Conditions {
		got[c.Type] = string(c.Status) + " " + c.Reason
	}
	want := map[string]string{
		clusterv1.ManagedClusterConditionHubAccepted: "True HubClusterAdminAccepted",
		clusterv1.ManagedClusterConditionJoined:      "True ManagedClusterJoined",
		clusterv1.ManagedClusterConditionAvailable:   "True ManagedClusterAvailable",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}
