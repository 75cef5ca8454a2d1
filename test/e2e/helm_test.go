//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
)

// A Helm chart installed on the fleet with kubectl-pmw as Helm's post-renderer (docs/cli.md): Helm renders the
// chart, `kubectl-pmw wrap` turns it into one PlacementManifestWork that Helm applies to the hub and tracks as the
// release, and the real work agents bring the Deployment to every spoke. `helm upgrade` changes it there;
// `helm uninstall` deletes the PlacementManifestWork and the spokes' Deployments go.
var _ = Describe("Helm with kubectl-pmw as post-renderer", Ordered, func() {
	var (
		ns    string
		helm  func(ctx context.Context, args ...string)
		chart = filepath.Join(envhub.RepoRoot(), "test", "e2e", "testdata", "chart")
	)

	BeforeAll(func(ctx SpecContext) {
		ns = newNamespace(ctx, "helm")
		Expect(hub.Create(ctx, selectingPlacement("fleet", ns))).To(Succeed())
		home := GinkgoT().TempDir()
		helm = func(ctx context.Context, args ...string) {
			GinkgoHelper()
			cmd := exec.CommandContext(ctx, filepath.Join(bins.HelmDir, "helm"), append(args, "--kubeconfig", stk.Hub.Kubeconfig, "--namespace", ns)...)
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
			out, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "helm %v:\n%s", args, out)
		}
	})

	// postRender are the flags that make kubectl-pmw Helm's post-renderer: the release's PlacementManifestWork
	// is named web, lives in the release's namespace (Helm does not tell a post-renderer) and uses the
	// Placement fleet. Helm installs a chart's crds/ and runs its hooks itself, on the hub: docs/cli.md says to
	// pass --skip-crds and --no-hooks, as here (this chart has neither).
	postRender := func() []string {
		return []string{"--skip-crds", "--no-hooks", "--post-renderer", bins.Plugin, "--post-renderer-args", "wrap",
			"--post-renderer-args", "--name=web", "--post-renderer-args", "--namespace=" + ns, "--post-renderer-args", "--placement=fleet"}
	}

	It("installs the chart's Deployment on every spoke", func(ctx SpecContext) {
		helm(ctx, append([]string{"install", "web", chart, "--set", "image=nginx:1.25"}, postRender()...)...)
		pmw := &workv1alpha1.PlacementManifestWork{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pmw)).To(Succeed(), "helm applied the PlacementManifestWork to the hub")
		Expect(pmw.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"), "Helm tracks it as part of the release")
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "web"), 1, "nginx:1.25")
			}
			expectAllAvailable(g, getPMW(ctx, g, pmw), int32(len(clusters)))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("upgrades it there with helm upgrade", func(ctx SpecContext) {
		helm(ctx, append([]string{"upgrade", "web", chart, "--set", "image=nginx:1.27"}, postRender()...)...)
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "web"), 1, "nginx:1.27")
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("restores the previous template with helm rollback", func(ctx SpecContext) {
		helm(ctx, "rollback", "web", "1")
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "web"), 1, "nginx:1.25")
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("removes it from the spokes with helm uninstall", func(ctx SpecContext) {
		helm(ctx, "uninstall", "web", "--wait")
		Eventually(func(g Gomega) {
			err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &workv1alpha1.PlacementManifestWork{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is gone: %v", err)
			for _, c := range clusters {
				expectGone(ctx, g, c, ns, "web", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})
})
