package integration

import (
	"context"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// `kubectl pmw status` against the hub, as a user runs it: a kubeconfig file, the command's stdout, stderr and
// exit code.
var _ = Describe("kubectl pmw status", func() {
	var (
		ctx context.Context
		ns  string
	)
	T, F := metav1.ConditionTrue, metav1.ConditionFalse

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("cli")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	kubeconfig := fw.Kubeconfig
	run := func(args ...string) (stdout, stderr string, code int) { return suite.Plugin(ctx, args...) }

	// agent plays a cluster's work agent: applied and available with every replica of its share ready, or
	// not applied.
	agent := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, ok bool) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			if !ok {
				framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: F})
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
				return
			}
			share := int(manifestwork.Shares(w)["Deployment.apps default/web .spec.replicas"])
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
			framework.Feedback(w, 0, map[string]any{
				health.FeedbackPrefix + health.Generation: 1, health.FeedbackPrefix + health.ObservedGeneration: 1,
				health.FeedbackPrefix + health.Replicas: share, health.FeedbackPrefix + health.UpdatedReplicas: share,
				health.FeedbackPrefix + health.ReadyReplicas: share, health.FeedbackPrefix + health.AvailableReplicas: share,
			})
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	It("prints the summary, the conditions and a row per cluster, the degraded one with its reason, and exits 3", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 3)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorkClusters(g, pmw)).To(Equal(clusters)) }, timeout, interval).Should(Succeed())
		agent(pmw, clusters[0], true)
		agent(pmw, clusters[1], true)
		agent(pmw, clusters[2], false)
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{
				Total: 3, Applied: 2, Available: 2, Degraded: 1}))
		}, timeout, interval).Should(Succeed())
		hash := shortOf(fw.WorksByCluster(Default, pmw)[clusters[0]].Annotations[workv1alpha1.AnnotationTemplateHash])
		work := manifestwork.WorkName(manifestwork.Owner(pmw))
		admin := kubeconfig("cli-admin", "system:masters")

		stdout, stderr, code := run("status", "web", "-n", ns, "--kubeconfig", admin)
		Expect(code).To(Equal(kubectlpmw.ExitNotReady), "stderr: %s", stderr)
		Expect(stderr).To(BeEmpty())
		GinkgoWriter.Print(stdout)
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		Expect(lines[0]).To(Equal("PlacementManifestWork " + ns + "/web: not Ready (generation 1, observed 1), placement p"))
		Expect(lines[1]).To(Equal("Clusters: 3 decided, 2 available, 0 progressing, 1 degraded, 2 applied"))
		Expect(stdout).To(ContainSubstring("Current template: " + hash + "\n"))
		Expect(stdout).To(ContainSubstring("Split Deployment default/web .spec.replicas: total 3, placed 3, unplaced 0\n"))
		Expect(stdout).To(MatchRegexp(`(?m)^Ready +False +ClustersDegraded +`))
		Expect(cellsOf(lines[len(lines)-4])).To(Equal([]string{"CLUSTER", "WORK", "APPLIED", "HEALTH", "REASON", "SHARES", "TEMPLATE", "REVISION"}))
		Expect(cellsOf(lines[len(lines)-3])).To(Equal([]string{clusters[0], work, "True", "Available", "Deployment/web=1", hash, "current", "1"}))
		Expect(cellsOf(lines[len(lines)-2])).To(Equal([]string{clusters[1], work, "True", "Available", "Deployment/web=1", hash, "current", "1"}))
		Expect(cellsOf(lines[len(lines)-1])).To(Equal([]string{clusters[2], work, "False", "Degraded", "ApplyFailed", "Deployment/web=1", hash, "current", "1"}))

		stdout, _, code = run("status", "web", "-n", ns, "--kubeconfig", admin, "-o", "json")
		Expect(code).To(Equal(kubectlpmw.ExitNotReady))
		var report kubectlpmw.StatusReport
		Expect(json.Unmarshal([]byte(stdout), &report)).To(Succeed())
		Expect(report.Clusters).To(HaveLen(3))
		Expect(report.Clusters[2]).To(Equal(kubectlpmw.ClusterRow{
			Cluster: clusters[2], Work: work, Decided: true, Applied: "False", Available: "Unknown",
			Health: kubectlpmw.HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed,
			Message:      report.Clusters[2].Message,
			HealthSource: kubectlpmw.SourceManager, Shares: map[string]int32{"Deployment.apps default/web .spec.replicas": 1},
			TemplateHash: report.TemplateHashes[0], Template: kubectlpmw.TemplateCurrent, Revision: 1,
		}))
		Expect(report.CurrentRevision).NotTo(BeNil())
		Expect(report.CurrentRevision.Revision).To(BeEquivalentTo(1))
		Expect(report.Clusters[2].Message).To(ContainSubstring("not applied"))

		// The degraded cluster recovers: Ready, exit 0.
		agent(pmw, clusters[2], true)
		Eventually(func(g Gomega) {
			stdout, stderr, code := run("status", "web", "-n", ns, "--kubeconfig", admin)
			g.Expect(code).To(Equal(kubectlpmw.ExitOK), "stdout: %s\nstderr: %s", stdout, stderr)
			g.Expect(stdout).To(ContainSubstring(": Ready (generation 1, observed 1)"))
		}, timeout, interval).Should(Succeed())

		// Shell completion (cobra's __complete, what the completion scripts call) offers the namespace's
		// PlacementManifestWorks for NAME and the hub's namespaces for -n.
		stdout, _, code = run("__complete", "status", "-n", ns, "--kubeconfig", admin, "w")
		Expect(code).To(Equal(kubectlpmw.ExitOK))
		Expect(strings.Split(stdout, "\n")[0]).To(Equal("web"))
		stdout, _, _ = run("__complete", "plan", "--kubeconfig", admin, "-n", ns[:len(ns)-2])
		Expect(strings.Split(stdout, "\n")).To(ContainElement(ns))
	})

	It("shows what the status says to a user who may not read the cluster namespaces, and warns", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"k": "v"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorkClusters(g, pmw)).To(Equal(clusters)) }, timeout, interval).Should(Succeed())
		fw.AgentReports(pmw, clusters[0], map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
		fw.AgentReports(pmw, clusters[1], map[string]metav1.ConditionStatus{workv1.WorkApplied: F})
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Degraded).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())

		// The user guide's Role for PMW authors, in their namespace only.
		Expect(k8s.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "pmw-author", Namespace: ns},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{workv1alpha1.GroupVersion.Group}, Resources: []string{"placementmanifestworks"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"placementdecisions"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"get", "list", "watch"}},
			},
		})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "pmw-author", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pmw-author"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "cli-author-" + ns}},
		})).To(Succeed())
		author := kubeconfig("cli-author-" + ns)

		Eventually(func(g Gomega) {
			stdout, stderr, code := run("status", "web", "-n", ns, "--kubeconfig", author)
			g.Expect(code).To(Equal(kubectlpmw.ExitNotReady), "stdout: %s\nstderr: %s", stdout, stderr)
			g.Expect(stderr).To(ContainSubstring("Warning: you may not list ManifestWorks"))
			g.Expect(stderr).NotTo(ContainSubstring("ControllerRevisions"), "the user guide's Role may read the PMW's revisions")
			g.Expect(stdout).To(ContainSubstring("Note: the ManifestWorks could not be listed"))
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			work := manifestwork.WorkName(manifestwork.Owner(pmw))
			g.Expect(cellsOf(lines[len(lines)-2])).To(Equal([]string{clusters[0], work, "-", "Available", "-"}))
			g.Expect(cellsOf(lines[len(lines)-1])).To(Equal([]string{clusters[1], work, "-", "Degraded", "ApplyFailed", "-"}))
		}, timeout, interval).Should(Succeed())

		// Another namespace's PMW is forbidden to them: exit 2, one line that says so, nothing on stdout.
		stdout, stderr, code := run("status", "web", "-n", "default", "--kubeconfig", author)
		Expect(code).To(Equal(kubectlpmw.ExitHub))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(HavePrefix("Error: reading PlacementManifestWork default/web is forbidden"))
		Expect(strings.Count(stderr, "\n")).To(Equal(1))

		// A name that does not exist is bad input: exit 1.
		stdout, stderr, code = run("status", "nope", "-n", ns, "--kubeconfig", author)
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(ContainSubstring("PlacementManifestWork " + ns + "/nope not found"))
	})
})

// cellsOf splits a table row into its cells (no cell of these tables holds a space).
func cellsOf(line string) []string { return strings.Fields(line) }

// shortOf is a template hash as the table prints it.
func shortOf(h string) string { return h[:8] }
