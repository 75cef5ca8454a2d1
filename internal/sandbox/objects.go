package sandbox

import (
	"fmt"

	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

const (
	// ClusterSetName is the ManagedClusterSet every sandbox cluster joins.
	ClusterSetName = "sandbox"
	// SampleNamespace is the namespace of the samples; the clusterset is bound to it.
	SampleNamespace = "default"
	// HubNamespace is where the placement controller records its events, as on a real hub.
	HubNamespace = "open-cluster-management-hub"

	// LabelRegion and LabelEnvironment give Placements something to select on.
	LabelRegion      = "region"
	LabelEnvironment = "environment"
)

var (
	regions      = []string{"us-east", "eu-west", "ap-south"}
	environments = []string{"production", "staging"}
)

// ClusterNames are the names of n sandbox clusters: cluster1..clusterN.
func ClusterNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cluster%d", i+1)
	}
	return out
}

// ClusterLabels are the labels of the i-th (0-based) sandbox cluster besides its name and clusterset: regions
// and environments round-robin, so any number of clusters spreads over all of them.
func ClusterLabels(_ string, i int) map[string]string {
	return map[string]string{
		LabelRegion:      regions[i%len(regions)],
		LabelEnvironment: environments[i%len(environments)],
	}
}

// ManagedCluster is the i-th (0-based) sandbox cluster's ManagedCluster, as registration leaves it.
func ManagedCluster(name string, i int) *clusterv1.ManagedCluster {
	return ocmsim.ManagedCluster(name, ClusterSetName, ClusterLabels(name, i))
}
