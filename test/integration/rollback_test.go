package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Pause and failed rollouts", func() {
	var (
		ctx context.Context
		ns  string
	)
	T, F := metav1.ConditionTrue, metav1.ConditionFalse

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("rollback")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// values are the value of the ConfigMap, the PMW's one manifest, in each cluster's work.
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
	all := func(clusters []string, v string) map[string]string {
		out := map[string]string{}
		for _, c := range clusters {
			out[c] = v
		}
		return out
	}
	template := func(v string) workv1.ManifestWorkSpec {
		return framework.MakePMW("x", ns).Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj().Spec.ManifestWorkTemplate
	}
	// completed waits until every cluster's work carries v, plays the agents (applied and available) and waits
	// until the current revision completed.
	completed := func(pmw *workv1alpha1.PlacementManifestWork, clusters []string, v string) {
		Eventually(func(g Gomega) { g.Expect(values(g, pmw)).To(Equal(all(clusters, v))) }, timeout, interval).Should(Succeed())
		for _, c := range clusters {
			fw.AgentReports(pmw, c, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
		}
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).NotTo(BeNil())
			g.Expect(cur.Status.CompletedRevision).To(Equal(cur.Status.CurrentRevision))
		}, timeout, interval).Should(Succeed())
	}

	It("holds a template change on every cluster while paused, and delivers it on resume", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("paused", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		completed(pmw, clusters, "1")

		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.Paused = true
			cur.Spec.ManifestWorkTemplate = template("2")
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
		Consistently(func(g Gomega) { g.Expect(values(g, pmw)).To(Equal(all(clusters, "1"))) }, "2s", interval).Should(Succeed())

		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) { cur.Spec.Paused = false })
		completed(pmw, clusters, "2")
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Status).To(Equal(T))
		}, timeout, interval).Should(Succeed())
	})
})
