package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/yamlobjects"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// `kubectl pmw plan` as a user runs it: the file goes to the API server as a dry run first, then
// controllers.Preview plans it (test/integration/preview_test.go holds Preview to what the manager writes).
var _ = Describe("kubectl pmw plan", func() {
	var (
		ctx context.Context
		ns  string
		dir string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("cliplan")
		dir = GinkgoT().TempDir()
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	kubeconfig := fw.Kubeconfig
	run := func(args ...string) (stdout, stderr string, code int) { return suite.Plugin(ctx, args...) }

	// deliverWeb creates the PlacementManifestWork web (a ConfigMap, v: one) on two decided clusters, waits until
	// both have its work, and returns an administrator's kubeconfig.
	deliverWeb := func() (admin string) {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "one"})).Obj()
		Expect(k8s.Create(ctx, pmw.DeepCopy())).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorkClusters(g, pmw)).To(Equal(clusters)) }, timeout, interval).Should(Succeed())
		return kubeconfig("plan-admin-"+ns, "system:masters")
	}

	// file writes a PlacementManifestWork as a user's file, without status and server fields.
	file := func(pmw *workv1alpha1.PlacementManifestWork) string {
		out := pmw.DeepCopy()
		out.TypeMeta = metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "PlacementManifestWork"}
		data, err := yaml.Marshal(out)
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(dir, pmw.Name+".yaml")
		Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
		return path
	}

	It("plans a changed file against the live works, a live one as it is, and refuses what the API server refuses", func() {
		admin := deliverWeb()

		changed := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "two"})).Obj()
		stdout, stderr, code := run("plan", "-f", file(changed), "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stderr).To(BeEmpty())
		Expect(stdout).To(HavePrefix("PlacementManifestWork " + ns + "/web (on the hub: its spec changed)\n"))
		Expect(stdout).To(ContainSubstring("ManifestWorks: update 2\n"))
		Expect(stdout).To(ContainSubstring("-  v: one\n+  v: two\n"))

		// The live one as it is: nothing to write.
		stdout, stderr, code = run("plan", "web", "-n", ns, "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stdout).To(ContainSubstring("ManifestWorks: unchanged 2\n"))

		// A name over 63 characters without placementRef: the CRD's rule refuses it, so the plan does too.
		long := framework.MakePMW(strings.Repeat("a", 70), ns).Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		stdout, stderr, code = run("plan", "-f", file(long), "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(HavePrefix("Error: the hub refuses PlacementManifestWork " + ns + "/" + long.Name + ": "))
		Expect(stderr).To(ContainSubstring("use a name of at most 63 characters"))
	})

	It("keeps what kubectl apply keeps of a live one the file does not set: a paused rollout plans no update", func() {
		admin := deliverWeb()
		_, stderr, code := run("rollout", "pause", "web", "-n", ns, "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)

		// The file, as a chart or a repository holds it, has no spec.paused: kubectl apply and helm upgrade
		// leave the field as it is, so the paused rollout holds every cluster on what it runs.
		changed := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "two"})).Obj()
		stdout, stderr, code := run("plan", "-f", file(changed), "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stdout).To(HavePrefix("PlacementManifestWork " + ns + "/web (on the hub: its spec changed)\n"))
		Expect(stdout).To(ContainSubstring("ManifestWorks: held 2\n"))

		// A file that sets spec.paused: false resumes it, as applying it would.
		resumed := file(changed)
		data, err := os.ReadFile(resumed)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(resumed, []byte(strings.Replace(string(data), "\nspec:\n", "\nspec:\n  paused: false\n", 1)), 0o600)).To(Succeed())
		stdout, stderr, code = run("plan", "-f", resumed, "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stdout).To(ContainSubstring("ManifestWorks: update 2\n"))
	})

	It("plans the file as written, with a warning, for a user who may not write it, and exits 2 without read access", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Expect(k8s.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{workv1alpha1.GroupVersion.Group, "cluster.open-cluster-management.io"},
				Resources: []string{"placementmanifestworks", "placements", "placementdecisions", "manifestworks"},
				Verbs:     []string{"get", "list", "watch"},
			}},
		})).To(Succeed())
		reader := "plan-reader-" + ns
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: reader}},
		})).To(Succeed())
		pmw := framework.MakePMW("new", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		path := file(pmw)

		// The reader may not create it (no dry run) nor list ManifestWorks and clusters beyond its namespace,
		// which the manager's gather reads: exit 2, and the message says it is forbidden.
		stdout, stderr, code := run("plan", "-f", path, "--kubeconfig", kubeconfig(reader))
		Expect(stderr).To(ContainSubstring("Warning: no dry run of PlacementManifestWork " + ns + "/new"))
		Expect(code).To(Equal(kubectlpmw.ExitHub), "stdout: %s\nstderr: %s", stdout, stderr)
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(ContainSubstring("Error: forbidden"))
		Expect(stderr).To(ContainSubstring("ask your hub admin for the read-only ClusterRole of docs/cli.md#plan"))

		// With the shipped planner ClusterRole bound, the same reader plans it.
		roles, err := yamlobjects.ReadFile(filepath.Join(envhub.RepoRoot(), "config", "rbac", "planner_clusterrole.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(roles).To(HaveLen(1))
		planner := roles[0]
		planner.SetName(planner.GetName() + "-" + ns)
		Expect(k8s.Create(ctx, planner)).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: planner.GetName()},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: planner.GetName()},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: reader}},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			stdout, stderr, code := run("plan", "-f", path, "--kubeconfig", kubeconfig(reader))
			g.Expect(code).To(Equal(kubectlpmw.ExitOK), "stdout: %s\nstderr: %s", stdout, stderr)
			g.Expect(stdout).To(ContainSubstring("ManifestWorks: create 1\n"))
		}, timeout, interval).Should(Succeed())
	})

	It("prints the plan of a spec the manager would refuse, and exits 1", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		admin := kubeconfig("plan-admin-"+ns, "system:masters")
		svc := framework.MakePMW("svc", ns).Placement("p").
			Manifest(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "default"},
				"spec": map[string]any{"ports": []any{map[string]any{"port": 80}}}}).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Service", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		stdout, stderr, code := run("plan", "-f", file(svc), "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitUsage), "stdout: %s\nstderr: %s", stdout, stderr)
		Expect(stdout).To(ContainSubstring("InvalidSplitField"))
		Expect(stderr).To(HavePrefix("Error: the manager would write nothing for this PlacementManifestWork: InvalidSplitField: cannot split Service"))
	})
})
