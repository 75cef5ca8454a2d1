//go:build e2e

package e2e

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// A template change whose pods can never run: a nodeSelector no kwok node carries keeps the rolling update's
// surge pod Pending (the old pod serves on), and the spoke's Deployment controller gives up after the
// Deployment's short progressDeadlineSeconds (Progressing False, ProgressDeadlineExceeded), which the manager
// reads from the agent's feedback as Degraded. Under a progressive rollout that tolerates no failure and
// failurePolicy Rollback (docs/rollout.md, "When a rollout fails"), the manager records the failed revision and
// brings the one cluster that got it back to the completed revision; kubectl pmw rollout status reports that
// as a failure, and kubectl pmw rollout undo writes the completed template back into the spec.
var _ = Describe("A progressive rollout with failurePolicy Rollback", func() {
	const (
		name  = "rollback"
		image = "registry.example/rollback:v1"
		// nowhere is a node label no kwok node has.
		nowhereKey, nowhereValue = "e2e.example/nowhere", "true"
		// deploymentDeadline is the failing template's progressDeadlineSeconds: how long its Deployment waits
		// for the Pending pod before it reports ProgressDeadlineExceeded.
		deploymentDeadline = 10
		// rolloutDeadline is the rollout strategy's progressDeadline, the manager's own bound on a cluster (a
		// cluster not available by then counts as failed too). It also bounds each cluster of the first
		// revision, so it leaves room for a busy machine; the failure comes from the Deployment's deadline.
		rolloutDeadline = "30s"
	)

	It("rolls a revision whose pods never become ready back on the cluster that got it, and kubectl pmw rollout reports and undoes it", func(ctx SpecContext) {
		ns := newNamespace(ctx, name)
		Expect(hub.Create(ctx, selectingPlacement(name, ns))).To(Succeed())

		good := deployment(name, ns, 1, image)
		bad := deployment(name, ns, 1, image)
		badSpec := bad["spec"].(map[string]any)
		badSpec["progressDeadlineSeconds"] = deploymentDeadline
		badSpec["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{nowhereKey: nowhereValue}

		pmw := framework.MakePMW(name, ns).Placement(name).Manifest(good).Obj()
		pmw.Spec.FailurePolicy = workv1alpha1.FailurePolicyRollback
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromInt32(1),
				RolloutConfig:  clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0), ProgressDeadline: rolloutDeadline},
			},
		}
		goodManifests := pmw.Spec.ManifestWorkTemplate.Workload.Manifests
		badManifests := framework.MakePMW(name, ns).Manifest(bad).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
		Expect(hub.Create(ctx, pmw)).To(Succeed())
		DeferCleanup(deletePMW, pmw)

		// onRevision1 asserts that a spoke's Deployment runs the first template, rolled out and available.
		onRevision1 := func(g Gomega, cluster string) {
			d := spokeDeployment(ctx, g, cluster, ns, name)
			g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty(), "nodeSelector of the Deployment on %s", cluster)
			expectRolledOut(g, cluster, d, 1, image)
		}

		By("revision 1 on every spoke, completed")
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				onRevision1(g, c)
			}
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			expectCondition(g, got, workv1alpha1.ConditionRolloutComplete, metav1.ConditionTrue, workv1alpha1.ReasonRolloutSucceeded)
			g.Expect(got.Status.CompletedRevision).NotTo(BeNil(), "status.completedRevision")
			g.Expect(got.Status.CompletedRevision.Revision).To(BeEquivalentTo(1), "status.completedRevision")
			g.Expect(got.Status.CurrentRevision).To(Equal(got.Status.CompletedRevision), "status.currentRevision")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		// The template hash of revision 1, the same on every cluster's ManifestWork.
		hashes := map[string]string{}
		for _, w := range works(ctx, Default, pmw) {
			hashes[w.Namespace] = w.Annotations[workv1alpha1.AnnotationTemplateHash]
		}
		Expect(hashes).To(HaveLen(len(clusters)))
		revision1 := hashes[clusters[0]]
		Expect(revision1).NotTo(BeEmpty(), "the template hash annotation of the ManifestWorks")
		Expect(hashes).To(HaveEach(revision1), "template hashes of the ManifestWorks, by cluster")
		// OCM's agent reads the template marker back (docs/health.md, "Reports read before the apply"): every
		// spoke's Deployment carries revision 1's hash, and every work's feedback says so.
		Eventually(func(g Gomega) {
			for _, w := range works(ctx, g, pmw) {
				d := spokeDeployment(ctx, g, w.Namespace, ns, name)
				g.Expect(d.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationTemplateHash, revision1), "the Deployment on %s", w.Namespace)
				g.Expect(w.Status.ResourceStatus.Manifests).NotTo(BeEmpty(), "the report of %s", w.Namespace)
				var marker string
				for _, v := range w.Status.ResourceStatus.Manifests[0].StatusFeedbacks.Values {
					if v.Name == health.FeedbackPrefix+health.TemplateHash && v.Value.String != nil {
						marker = *v.Value.String
					}
				}
				g.Expect(marker).To(Equal(revision1), "the template marker the agent reports on %s", w.Namespace)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		// sdk-go's Progressive rollout takes the clusters of decision group 0 in name order: the first is the one
		// revision 2 reaches, and the only one, as it fails there and maxFailures is 0.
		first, others := clusters[0], clusters[1:]
		// neverGot must hold from the template change on: the other clusters' ManifestWorks keep revision 1's
		// template hash and their Deployments never get the nodeSelector.
		neverGot := func(g Gomega) {
			for _, w := range works(ctx, g, pmw) {
				if w.Namespace != first {
					g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationTemplateHash, revision1),
						"the ManifestWork of %s: the rollout went past %s", w.Namespace, first)
				}
			}
			for _, c := range others {
				d := spokeDeployment(ctx, g, c, ns, name)
				g.Expect(d.Spec.Template.Spec.NodeSelector).To(BeEmpty(), "the Deployment on %s got revision 2", c)
			}
		}

		start := time.Now()
		generation := updateTemplate(ctx, pmw, badManifests)

		By("revision 2 on " + first + " only: its Deployment with the nodeSelector, the new pod unschedulable")
		Eventually(func(g Gomega) {
			mustHold(neverGot)
			d := spokeDeployment(ctx, g, first, ns, name)
			g.Expect(d.Spec.Template.Spec.NodeSelector).To(HaveKeyWithValue(nowhereKey, nowhereValue), "nodeSelector of the Deployment on %s", first)
			g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(1), "the Deployment on %s has not created its new pod", first)
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(1), "the old pod on %s serves", first)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		By("revision 2 failed on " + first + ", recorded, and rolled back there: every spoke on revision 1 again")
		Eventually(func(g Gomega) {
			mustHold(neverGot)
			got := getPMW(ctx, g, pmw)
			g.Expect(got.Status.ObservedGeneration).To(Equal(generation), "status.observedGeneration")
			g.Expect(got.Status.CurrentRevision).NotTo(BeNil(), "status.currentRevision")
			g.Expect(got.Status.CurrentRevision.Revision).To(BeEquivalentTo(2), "status.currentRevision: the spec is the user's, still revision 2")
			g.Expect(got.Status.FailedRevision).To(Equal(&workv1alpha1.FailedRevision{
				Revision: 2, Name: got.Status.CurrentRevision.Name, Clusters: []string{first},
			}), "status.failedRevision")
			g.Expect(got.Status.CompletedRevision).NotTo(BeNil(), "status.completedRevision")
			g.Expect(got.Status.CompletedRevision.Revision).To(BeEquivalentTo(1), "status.completedRevision")
			expectCondition(g, got, workv1alpha1.ConditionRolloutComplete, metav1.ConditionFalse, workv1alpha1.ReasonRolledBack)
			g.Expect(condition(got, workv1alpha1.ConditionRolloutComplete).Message).To(
				ContainSubstring("was rolled back to revision 1, the last completed, on every cluster"), "RolloutComplete's message")
			expectCondition(g, got, workv1alpha1.ConditionStalled, metav1.ConditionTrue, workv1alpha1.ReasonRolledBack)
			for _, w := range works(ctx, g, pmw) {
				g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationTemplateHash, revision1),
					"the ManifestWork of %s does not carry revision 1", w.Namespace)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
		Eventually(func(g Gomega) {
			mustHold(neverGot)
			for _, c := range clusters {
				onRevision1(g, c)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)
		GinkgoWriter.Printf("revision 2 failed on %s and every spoke ran revision 1 again %s after the template change\n",
			first, time.Since(start).Round(time.Millisecond))

		// kubectl pmw against the hub, as its administrator.
		plugin := func(args ...string) (stdout, stderr string, code int) {
			return suite.Plugin(ctx, append(args, "-n", ns, "--kubeconfig", stk.Hub.Kubeconfig)...)
		}
		// The timeout only bounds a wrong answer: status returns at once on a failed rollout, and on a finished
		// one as soon as it is finished.
		statusArgs := []string{"rollout", "status", name, "--timeout", convergeTimeout.String()}

		By("kubectl pmw rollout status: the rollout failed (exit 3, RolledBack)")
		stdout, stderr, code := plugin(statusArgs...)
		Expect(code).To(Equal(kubectlpmw.ExitNotReady), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		Expect(stderr).To(And(ContainSubstring(workv1alpha1.ReasonRolledBack), ContainSubstring("(revision 2) failed")),
			"not the timeout's exit 3")

		By("kubectl pmw rollout undo: revision 1's template back in the spec")
		stdout, stderr, code = plugin("rollout", "undo", name)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		Expect(stdout).To(ContainSubstring("placementmanifestwork/%s rolled back to revision 1", name))
		got := getPMW(ctx, Default, pmw)
		Expect(got.Generation).To(BeNumerically(">", generation), "undo changed the spec")
		Expect(got.Spec.ManifestWorkTemplate.Workload.Manifests).To(HaveLen(1))
		Expect(asMap(got.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw)).To(Equal(asMap(goodManifests[0].Raw)),
			"the spec's manifest after undo: revision 1's")

		By("kubectl pmw rollout status: waits, and exits 0 once revision 1 (now 3) is rolled out")
		stdout, stderr, code = plugin(statusArgs...)
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		Expect(stdout).To(ContainSubstring("placementmanifestwork/%s successfully rolled out (revision 3) to 3 clusters", name))
		got = getPMW(ctx, Default, pmw)
		Expect(got.Status.FailedRevision).To(BeNil(), "status.failedRevision after the spec changed")
		Expect(got.Status.CompletedRevision).To(Equal(got.Status.CurrentRevision), "status.completedRevision")
		Expect(got.Status.CurrentRevision.Revision).To(BeEquivalentTo(3), "status.currentRevision: revision 1 renumbered")
		expectCondition(Default, got, workv1alpha1.ConditionStalled, metav1.ConditionFalse, workv1alpha1.ReasonNotStalled)
		for _, c := range clusters {
			onRevision1(Default, c)
		}
		for _, w := range works(ctx, Default, pmw) {
			Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationTemplateHash, revision1), "the ManifestWork of %s", w.Namespace)
		}
	})
})

// asMap decodes a manifest, for comparing manifests whatever their JSON's key order.
func asMap(raw []byte) map[string]any {
	GinkgoHelper()
	out := map[string]any{}
	Expect(json.Unmarshal(raw, &out)).To(Succeed())
	return out
}
