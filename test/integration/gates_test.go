package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("Rollout gates", func() {
	ctx := context.Background()
	T := metav1.ConditionTrue
	var ns, admin string
	BeforeEach(func() {
		ns = placedNamespace(ctx, fw, "gates")
		admin = fw.Kubeconfig("gates-admin-"+ns, "system:masters")
	})

	approve := func(value string) {
		Expect(k8s.Patch(ctx, &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+workv1alpha1.AnnotationApprove+`":"`+value+`"}}}`)))).To(Succeed())
	}

	It("stops after the first cluster until the current revision's gate is approved; an approval of another revision approves nothing", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := configMapPMW("gated", ns, "1")
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(2)}}
		pmw.Spec.RolloutGates = []workv1alpha1.RolloutGate{{Name: "canary", AfterClusters: ptr.To[int32](1)}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("revision 1 also stops at the gate: one cluster of the two maxConcurrency allows")
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "1"}))
		}, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[0])
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout).NotTo(BeNil())
			g.Expect(cur.Status.Rollout.AwaitingApproval).To(Equal("canary"))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolloutAwaitingApproval))
			g.Expect(c.Message).To(ContainSubstring("waits for approval at gate canary: 1 of 3 clusters carry it, 1 of them available"))
			g.Expect(c.Message).To(ContainSubstring("kubectl pmw rollout approve gated --gate canary"))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionReady).Reason).To(Equal(workv1alpha1.ReasonRolloutAwaitingApproval))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(eventReasons(ctx, g, ns, "gated")).To(ContainElements(workv1alpha1.EventReasonRolloutStarted, workv1alpha1.EventReasonRolloutAwaitingApproval))
		}, timeout, interval).Should(Succeed())

		By("kubectl pmw rollout approve approves the gate the rollout waits at, for revision 1")
		out, errOut, code := suite.Plugin(ctx, "rollout", "approve", "gated", "-n", ns, "--kubeconfig", admin)
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(Equal("placementmanifestwork/gated: gate canary approved for revision 1\n"))
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "1", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters...)
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).NotTo(BeNil())
			g.Expect(cur.Status.CompletedRevision.Revision).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Approvals).To(HaveLen(1))
			g.Expect(cur.Status.Approvals[0].Revision).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Approvals[0].Gate).To(Equal("canary"))
			g.Expect(cur.Status.Rollout.StartedAt).To(BeNil())
			g.Expect(eventReasons(ctx, g, ns, "gated")).To(ContainElements(workv1alpha1.EventReasonRolloutApproved, workv1alpha1.EventReasonRolloutCompleted))
		}, timeout, interval).Should(Succeed())

		By("revision 2 stops at the gate again: the approval named revision 1")
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.ManifestWorkTemplate = configMapTemplate2(ns)
		})
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[0])
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.Rollout.AwaitingApproval).To(Equal("canary"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, "2s", interval).Should(Succeed())

		By("an approval naming a gate for another revision changes nothing either")
		approve("1/canary,3/canary")
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
			g.Expect(fw.Current(g, pmw).Status.Approvals).To(HaveLen(1))
		}, "2s", interval).Should(Succeed())

		By("approving revision 2 lets the rest of the fleet have it")
		approve("2/canary")
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "2", clusters[2]: "2"}))
			approvals := fw.Current(g, pmw).Status.Approvals
			g.Expect(approvals).To(HaveLen(2))
			g.Expect(approvals[1].Revision).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Status).To(Equal(T))
		}, timeout, interval).Should(Succeed())
		Expect(fw.HistogramCount("placementmanifestwork_rollout_duration_seconds")).To(BeNumerically(">", 0))
	})

	It("gives a cluster that joins during a rollout the last completed revision at once, then the new one at the strategy's pace", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters[:2]...)
		pmw := configMapPMW("joining", ns, "1")
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(1)}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(configMapValues(g, fw, pmw)).To(HaveKey(clusters[0])) }, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[0])
		Eventually(func(g Gomega) { g.Expect(configMapValues(g, fw, pmw)).To(HaveKey(clusters[1])) }, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[1])
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.CompletedRevision).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())

		By("revision 2 reaches the first cluster, which is not available yet; a third cluster joins")
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.ManifestWorkTemplate = configMapTemplate2(ns)
		})
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1"}))
		}, timeout, interval).Should(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, fw, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout.Updated).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Rollout.Total).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		By("the rollout goes on over every cluster, the one that joined included")
		reportAvailable(fw, pmw, clusters[0])
		Eventually(func(g Gomega) { g.Expect(configMapValues(g, fw, pmw)[clusters[1]]).To(Equal("2")) }, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[1])
		Eventually(func(g Gomega) { g.Expect(configMapValues(g, fw, pmw)[clusters[2]]).To(Equal("2")) }, timeout, interval).Should(Succeed())
		reportAvailable(fw, pmw, clusters[2])
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).To(Equal(cur.Status.CurrentRevision))
			g.Expect(cur.Status.CurrentRevision.Revision).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
	})
})
