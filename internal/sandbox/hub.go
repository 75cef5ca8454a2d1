package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// controlPlaneTimeout bounds the start and the stop of kube-apiserver and etcd; envtest's 20 s default is
// short on a busy two-core machine.
const controlPlaneTimeout = 90 * time.Second

// Scheme is the manager's scheme plus the ManagedClusterSet types the sandbox writes and the manager never reads.
func Scheme() *runtime.Scheme {
	s := controllers.Scheme()
	if err := clusterv1beta2.Install(s); err != nil {
		panic(err) // adding static types cannot fail at run time
	}
	return s
}

// hub is a running kube-apiserver and etcd with the PlacementManifestWork and OCM CRDs.
type hub struct {
	env *envtest.Environment
	// cfg is an administrator's connection, for the in-process controllers.
	cfg *rest.Config
	// kubeconfig is the path of a kubeconfig file for kubectl and the placement controller.
	kubeconfig string
	// markers are strings only the hub's processes have on their command line: their folders.
	markers []string
}

// startHub starts envtest's control plane from the binaries in assets and writes an administrator's
// kubeconfig into dir.
func startHub(assets, dir string) (*hub, error) {
	paths, err := framework.CRDPaths()
	if err != nil {
		return nil, err
	}
	// kube-apiserver's and etcd's folders go in the run's folder (envtest's default is a random one under
	// /tmp), so every process of the run names the run's folder on its command line and can be found by it.
	apiDir, etcdDir := filepath.Join(dir, "kube-apiserver"), filepath.Join(dir, "etcd")
	for _, d := range []string{apiDir, etcdDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	env := &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: &envtest.APIServer{CertDir: apiDir},
			Etcd:      &envtest.Etcd{DataDir: etcdDir},
		},
		CRDDirectoryPaths:        paths,
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: controlPlaneTimeout,
		ControlPlaneStopTimeout:  controlPlaneTimeout,
	}
	cfg, err := env.Start()
	if err != nil {
		// A half-started control plane (etcd up, kube-apiserver not) must not outlive the run.
		return nil, errors.Join(fmt.Errorf("starting kube-apiserver and etcd: %w", err), env.Stop())
	}
	h := &hub{env: env, cfg: cfg, markers: []string{apiDir, etcdDir}}
	// A user in system:masters, as a cluster administrator would have; envtest's own config is a client
	// certificate too, but not one written anywhere kubectl can use it.
	user, err := env.AddUser(envtest.User{Name: "sandbox-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return h, fmt.Errorf("adding the sandbox administrator: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return h, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	h.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(h.kubeconfig, kc, 0o600); err != nil {
		return h, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return h, nil
}

// stop stops kube-apiserver and etcd and waits for them to exit.
func (h *hub) stop() error {
	if err := h.env.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver and etcd: %w", err)
	}
	return nil
}
