// Package framework starts a real kube-apiserver (envtest) with the PlacementManifestWork and OCM CRDs, and
// builds the objects integration tests read like their scenarios with.
package framework

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
)

// StartHub starts a kube-apiserver and etcd with the hub's CRDs installed (envhub.Start with its defaults);
// stop it with the environment's Stop.
func StartHub() (*envtest.Environment, *rest.Config, error) {
	h, err := envhub.Start(envhub.Options{})
	if err != nil {
		return nil, nil, err
	}
	return h.Env, h.Config, nil
}
