package sandbox

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// Scheme is the hub's scheme: the manager's, the ManagedClusterSet types and the score generators.
func Scheme() *runtime.Scheme {
	s := ocmsim.WithClusterSets(controllers.Scheme())
	if err := scoresv1alpha1.AddToScheme(s); err != nil {
		panic(err) // adding static types cannot fail at run time
	}
	return s
}

// hub is a running kube-apiserver and etcd with the PlacementManifestWork and OCM CRDs.
type hub struct {
	env *envhub.Hub
	// cfg is an administrator's connection, for the in-process controllers.
	cfg *rest.Config
	// kubeconfig is the path of a kubeconfig file for kubectl and the placement controller.
	kubeconfig string
	// markers are strings only the hub's processes have on their command line: their folders.
	markers []string
}

// The folders of kube-apiserver's certificates and of etcd's data in the run's folder (envtest's default is a
// random one under /tmp), so every process of the run names the run's folder on its command line and can be
// found by it.
const (
	certDir = "kube-apiserver"
	etcdDir = "etcd"
)

// startHub starts envtest's control plane from the binaries in assets and writes an administrator's
// kubeconfig into dir. On error the hub has only its markers, to look for processes that outlived it.
func startHub(assets, dir string) (*hub, error) {
	h := &hub{markers: []string{filepath.Join(dir, certDir), filepath.Join(dir, etcdDir)}}
	eh, err := envhub.Start(envhub.Options{
		Dir:     dir,
		CertDir: certDir,
		EtcdDir: etcdDir,
		Assets:  assets,
		// A user in system:masters, as a cluster administrator would have; envtest's own config is a client
		// certificate too, but not one written anywhere kubectl can use it.
		Users: []envhub.User{{Name: sandboxAdmin, Kubeconfig: "kubeconfig"}},
	})
	if err != nil {
		return h, err
	}
	h.env, h.cfg, h.kubeconfig = eh, eh.Config, eh.Kubeconfig(sandboxAdmin)
	return h, nil
}

// sandboxAdmin is the user of the run's kubeconfig.
const sandboxAdmin = "sandbox-admin"

// stop stops kube-apiserver and etcd and waits for them to exit.
func (h *hub) stop() error {
	if h.env == nil {
		return nil
	}
	return h.env.Stop()
}
