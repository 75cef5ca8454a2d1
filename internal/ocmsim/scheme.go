package ocmsim

import (
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
)

// Scheme is the manager's scheme plus the ManagedClusterSet types the registration stand-in writes and the
// manager never reads: the hub's scheme for the sandbox and the e2e stack.
func Scheme() *runtime.Scheme {
	s := controllers.Scheme()
	if err := clusterv1beta2.Install(s); err != nil {
		panic(err) // adding static types cannot fail at run time
	}
	return s
}
