package ocmsim

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
)

// WithClusterSets adds to s the ManagedClusterSet types the registration stand-in writes (and the manager never
// reads): the sandbox's and the e2e stack's hub scheme is WithClusterSets(controllers.Scheme()).
func WithClusterSets(s *runtime.Scheme) *runtime.Scheme {
	if err := clusterv1beta2.Install(s); err != nil {
		panic(err) // adding static types cannot fail at run time
	}
	return s
}
