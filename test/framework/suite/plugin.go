package suite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
)

// Kubeconfig writes a kubeconfig file for a hub user in the given groups (system:masters for an
// administrator) and returns its path, for what a user runs against the hub, such as kubectl pmw.
func (f *Framework) Kubeconfig(name string, groups ...string) string {
	ginkgo.GinkgoHelper()
	user, err := f.Env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	data, err := user.KubeConfig()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), name+".kubeconfig")
	gomega.Expect(os.WriteFile(path, data, 0o600)).To(gomega.Succeed())
	return path
}

// Plugin runs kubectl pmw with args, as a user runs it (empty stdin), and returns its stdout, stderr and exit
// code.
func Plugin(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = kubectlpmw.Execute(ctx, args, &kubectlpmw.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}
