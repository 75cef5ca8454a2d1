package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("Rollout gates", func() {
	var (
		ctx   context.Context
		ns    string
		admin string
	)
	T := metav1.ConditionTrue

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("gates")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		admin = fw.Kubeconfig("gates-admin-"+ns, "system:masters")
	})

	values := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]string {
		out := map[string]string{}
		for c, w := range fw.WorksByCluster(g, pmw) {
			obj := map[string]any{}
			g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
			data, _ := obj["data"].(map[string]any)
			out[c], _ = data["v"].(string)
		}
		return out
	}
	template := func(v string) workv1.ManifestWorkSpec {
		return framework.MakePMW("x", ns).Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj().Spec.ManifestWorkTemplate
	}
	available := func(pmw *workv1alpha1.PlacementManifestWork, clusters ...string) {
		for _, c := range clusters {
			fw.AgentReports(pmw, c, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
		}
	}
	approve := func(value string) {
		Expect(k8s.Patch(ctx, &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+workv1alpha1.AnnotationApprove+`":"`+value+`"}}}`)))).To(Succeed())
	}
	eventReasons := func(g Gomega, name string) []string {
		list := &eventsv1.EventList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}

	It("stops after the first cluster until the current revision's gate is approved; an approval of another revision approves nothing", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("gated", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(2)}}
		pmw.Spec.RolloutGates = []workv1alpha1.RolloutGate{{Name: "canary", AfterClusters: ptr.To[int32](1)}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("revision 1 also stops at the gate: one cluster of the two maxConcurrency allows")
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "1"}))
		}, timeout, interval).Should(Succeed())
		available(pmw, clusters[0])
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
			g.Expect(eventReasons(g, "gated")).To(ContainElements(workv1alpha1.EventReasonRolloutStarted, workv1alpha1.EventReasonRolloutAwaitingApproval))
		}, timeout, interval).Should(Succeed())

		By("kubectl pmw rollout approve approves the gate the rollout waits at, for revision 1")
		out, errOut, code := suite.Plugin(ctx, "rollout", "approve", "gated", "-n", ns, "--kubeconfig", admin)
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(Equal("placementmanifestwork/gated: gate canary approved for revision 1\n"))
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "1", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		available(pmw, clusters...)
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).NotTo(BeNil())
			g.Expect(cur.Status.CompletedRevision.Revision).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Approvals).To(HaveLen(1))
			g.Expect(cur.Status.Approvals[0].Revision).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Approvals[0].Gate).To(Equal("canary"))
			g.Expect(cur.Status.Rollout.StartedAt).To(BeNil())
			g.Expect(eventReasons(g, "gated")).To(ContainElements(workv1alpha1.EventReasonRolloutApproved, workv1alpha1.EventReasonRolloutCompleted))
		}, timeout, interval).Should(Succeed())

		By("revision 2 stops at the gate again: the approval named revision 1")
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.ManifestWorkTemplate = template("2") })
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		available(pmw, clusters[0])
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.Rollout.AwaitingApproval).To(Equal("canary"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, "2s", interval).Should(Succeed())

		By("an approval naming a gate for another revision changes nothing either")
		approve("1/canary,3/canary")
		Consistently(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
			g.Expect(fw.Current(g, pmw).Status.Approvals).To(HaveLen(1))
		}, "2s", interval).Should(Succeed())

		By("approving revision 2 lets the rest of the fleet have it")
		approve("2/canary")
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "2", clusters[2]: "2"}))
			approvals := fw.Current(g, pmw).Status.Approvals
			g.Expect(approvals).To(HaveLen(2))
			g.Expect(approvals[1].Revision).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		available(pmw, clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Status).To(Equal(T))
		}, timeout, interval).Should(Succeed())
		Expect(fw.HistogramCount("placementmanifestwork_rollout_duration_seconds")).To(BeNumerically(">", 0))
	})

	It("gives a cluster that joins during a rollout the last completed revision at once, then the new one at the strategy's pace", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters[:2]...)
		pmw := framework.MakePMW("joining", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(1)}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(values(g, pmw)).To(HaveKey(clusters[0])) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[0])
		Eventually(func(g Gomega) { g.Expect(values(g, pmw)).To(HaveKey(clusters[1])) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[1])
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.CompletedRevision).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())

		By("revision 2 reaches the first cluster, which is not available yet; a third cluster joins")
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.ManifestWorkTemplate = template("2") })
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1"}))
		}, timeout, interval).Should(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(values(g, pmw)).To(Equal(map[string]string{clusters[0]: "2", clusters[1]: "1", clusters[2]: "1"}))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout.Updated).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Rollout.Total).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		By("the rollout goes on over every cluster, the one that joined included")
		available(pmw, clusters[0])
		Eventually(func(g Gomega) { g.Expect(values(g, pmw)[clusters[1]]).To(Equal("2")) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[1])
		Eventually(func(g Gomega) { g.Expect(values(g, pmw)[clusters[2]]).To(Equal("2")) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[2])
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).To(Equal(cur.Status.CurrentRevision))
			g.Expect(cur.Status.CurrentRevision.Revision).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
	})
})
