package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("Pause and failed rollouts", func() {
	ctx := context.Background()
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	var ns string
	BeforeEach(func() { ns = placedNamespace(ctx, fw, "rollback") })

	It("holds a template change on every cluster while paused, and delivers it on resume", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := configMapPMW("paused", ns, "1")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		completedOn(fw, pmw, clusters, "1")

		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.Paused = true
			cur.Spec.ManifestWorkTemplate = configMapTemplate2(ns)
		})
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CurrentRevision).NotTo(BeNil())
			g.Expect(cur.Status.CurrentRevision.Revision).To(BeEquivalentTo(2))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c.Status).To(Equal(F))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolloutPaused))
			g.Expect(c.Message).To(ContainSubstring("revision 2 is held back from 3 of 3 clusters"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters))) }, "2s", interval).Should(Succeed())

		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.Paused = false })
		completedOn(fw, pmw, clusters, "2")
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Status).To(Equal(T))
		}, timeout, interval).Should(Succeed())
	})

	// onV2First brings the PlacementManifestWork, whose template v1 completed on every cluster, to template v2
	// under Progressive maxConcurrency 1, maxFailures 0 and the failure policy, and waits until the first cluster
	// carries v2. It returns each cluster's work generation before the change.
	onV2First := func(pmw *workv1alpha1.PlacementManifestWork, clusters []string, policy workv1alpha1.RolloutFailurePolicy) map[string]int64 {
		completedOn(fw, pmw, clusters, "1")
		before := map[string]int64{}
		Eventually(func(g Gomega) {
			for c, w := range fw.WorksByCluster(g, pmw) {
				before[c] = w.Generation
			}
		}, timeout, interval).Should(Succeed())
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.FailurePolicy = policy
			cur.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromInt32(1), RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)}}}
			cur.Spec.ManifestWorkTemplate = configMapTemplate2(ns)
		})
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		return before
	}
	// failing is onV2First, then the first cluster's agent fails to apply v2 (degraded).
	failing := func(pmw *workv1alpha1.PlacementManifestWork, clusters []string, policy workv1alpha1.RolloutFailurePolicy) map[string]int64 {
		before := onV2First(pmw, clusters, policy)
		fw.AgentReports(pmw, clusters[0], agentDown)
		return before
	}
	// expectAppliedRolledBack: while revision 2 is rolled back to revision 1, ManifestworkApplied says so.
	expectAppliedRolledBack := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) {
		c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
		g.Expect(c.Status).To(Equal(F))
		g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
		g.Expect(c.Message).To(And(ContainSubstring("Revision 2 failed"), ContainSubstring("revision 1, the last completed")))
	}
	retry := func(pmw *workv1alpha1.PlacementManifestWork, n string) {
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			if cur.Annotations == nil {
				cur.Annotations = map[string]string{}
			}
			cur.Annotations[workv1alpha1.AnnotationRetryRevision] = n
		})
	}

	It("rolls a failed revision back on the clusters that had it only, keeps it back, and retries it on request", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := configMapPMW("rollback", ns, "1")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		before := failing(pmw, clusters, workv1alpha1.FailurePolicyRollback)

		// The first cluster goes back to exactly v1's manifests; the others were never written.
		v1 := map[string]*workv1.ManifestWork{}
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete).Message).To(ContainSubstring("rolled back"))
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(cur.Status.FailedRevision).To(Equal(&workv1alpha1.FailedRevision{Revision: 2, Name: cur.Status.CurrentRevision.Name, Clusters: []string{clusters[0]}}))
			g.Expect(cur.Status.CompletedRevision.Revision).To(BeEquivalentTo(1))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c.Status).To(Equal(F))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
			g.Expect(c.Message).To(And(ContainSubstring("Revision 2 failed on clusters "+clusters[0]), ContainSubstring("rolled back to revision 1")))
			stalled := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(T))
			g.Expect(stalled.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
			expectAppliedRolledBack(g, pmw)
			// The spec is the user's: still v2.
			g.Expect(cur.Spec.ManifestWorkTemplate).To(Equal(configMapTemplate2(ns)))
			works := fw.WorksByCluster(g, pmw)
			for _, c := range clusters {
				w := works[c]
				v1[c] = &w
			}
			for _, c := range clusters[1:] {
				g.Expect(v1[c].Generation).To(Equal(before[c]), "cluster %s was written", c)
			}
		}, timeout, interval).Should(Succeed())
		Expect(v1[clusters[0]].Spec.Workload).To(Equal(v1[clusters[1]].Spec.Workload))
		Expect(v1[clusters[0]].Annotations[workv1alpha1.AnnotationTemplateHash]).To(Equal(v1[clusters[1]].Annotations[workv1alpha1.AnnotationTemplateHash]))

		// Not retried by later reconciles, even once the first cluster is available again on v1. Every cluster
		// then applied what it is meant to carry, but not the current template: ManifestworkApplied, which
		// "kubectl wait" recipes gate a delete on, stays False.
		fw.AgentReports(pmw, clusters[0], agentUp)
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(fw.Current(g, pmw).Status.FailedRevision).NotTo(BeNil())
			expectAppliedRolledBack(g, pmw)
		}, "3s", interval).Should(Succeed())

		// A retry of another revision does nothing.
		retry(pmw, "1")
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(fw.Current(g, pmw).Status.FailedRevision).NotTo(BeNil())
		}, "2s", interval).Should(Succeed())

		// kubectl pmw rollout status reports the rolled-back rollout as failed (exit 3), and rollout retry sets
		// the failed revision's number, which retries it: the first cluster gets v2 again, the spec is unchanged.
		kubeconfig := fw.Kubeconfig("rollback-admin-"+ns, "system:masters")
		plugin := func(args ...string) (string, int) {
			stdout, stderr, code := suite.Plugin(ctx, append(args, "-n", ns, "--kubeconfig", kubeconfig)...)
			return stdout + stderr, code
		}
		out, code := plugin("rollout", "status", pmw.Name, "--watch=false")
		Expect(code).To(Equal(kubectlpmw.ExitNotReady), out)
		Expect(out).To(ContainSubstring(workv1alpha1.ReasonRolledBack))
		out, code = plugin("rollout", "retry", pmw.Name)
		Expect(code).To(Equal(kubectlpmw.ExitOK), out)
		Expect(fw.Current(Default, pmw).Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationRetryRevision, "2"))
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.FailedRevision).To(BeNil())
			g.Expect(cur.Status.RetriedRevision).To(BeEquivalentTo(2))
			g.Expect(cur.Spec.ManifestWorkTemplate).To(Equal(configMapTemplate2(ns)))
		}, timeout, interval).Should(Succeed())

		// The revision fails again: it is rolled back again, and a second retry is refused (the manager retries a
		// revision once), saying what moves it on, rather than reporting a retry that does not happen.
		fw.AgentReports(pmw, clusters[0], agentDown)
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.FailedRevision).NotTo(BeNil())
			g.Expect(cur.Status.FailedRevision.Revision).To(BeEquivalentTo(2))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Reason).To(Equal(workv1alpha1.ReasonRolledBack))
		}, timeout, interval).Should(Succeed())
		stdout, stderr, code := suite.Plugin(ctx, "rollout", "retry", pmw.Name, "-n", ns, "--kubeconfig", kubeconfig)
		Expect(code).To(Equal(kubectlpmw.ExitUsage), "stdout: %s\nstderr: %s", stdout, stderr)
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(Equal("Error: revision 2 of placementmanifestwork/" + pmw.Name + " failed again after its retry (status.retriedRevision), and the manager retries a revision once: change the spec (revert it in git) or go back with kubectl pmw rollout undo " + pmw.Name + "\n"))
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
		}, timeout, interval).Should(Succeed())
	})

	It("reports a failure recorded while paused as RolledBack and Stalled, not as paused, and rolls back on resume", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := configMapPMW("paused-failure", ns, "1")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		onV2First(pmw, clusters, workv1alpha1.FailurePolicyRollback)
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.Paused = true })
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Reason).To(Equal(workv1alpha1.ReasonRolloutPaused))
		}, timeout, interval).Should(Succeed())

		// The first cluster fails while paused: the failure is recorded and shows, the pause is mentioned, and
		// the rollback waits for the resume (the pause holds every write of a template).
		fw.AgentReports(pmw, clusters[0], agentDown)
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.FailedRevision).NotTo(BeNil())
			c := fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
			g.Expect(c.Message).To(ContainSubstring("also paused (spec.paused)"))
			stalled := fw.Condition(g, pmw, workv1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(T))
			g.Expect(stalled.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, "2s", interval).Should(Succeed())

		By("kubectl pmw rollout status exits 3 at once rather than waiting for the resume")
		kubeconfig := fw.Kubeconfig("paused-failure-admin-"+ns, "system:masters")
		stdout, stderr, code := suite.Plugin(ctx, "rollout", "status", pmw.Name, "--timeout", "20s", "-n", ns, "--kubeconfig", kubeconfig)
		Expect(code).To(Equal(kubectlpmw.ExitNotReady), "stdout: %s\nstderr: %s", stdout, stderr)
		Expect(stderr).To(HavePrefix("Error: the rollout of placementmanifestwork/" + pmw.Name + " (revision 2) failed: RolledBack: "))

		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.Paused = false })
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Reason).To(Equal(workv1alpha1.ReasonRolledBack))
		}, timeout, interval).Should(Succeed())
	})

	It("stops a failed rollout where it is under failurePolicy Pause", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := configMapPMW("pause-policy", ns, "1")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		failing(pmw, clusters, workv1alpha1.FailurePolicyPause)

		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolloutMaxFailures))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
			g.Expect(fw.Current(g, pmw).Status.FailedRevision).To(BeNil())
		}, "2s", interval).Should(Succeed())
	})
})
