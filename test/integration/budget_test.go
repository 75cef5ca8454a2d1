package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Disruption budget", func() {
	ctx := context.Background()
	var ns string
	BeforeEach(func() { ns = placedNamespace(ctx, fw, "budget") })

	workOf := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		return w
	}
	// image and replicas of the Deployment, the PMW's one manifest, in a cluster's work.
	deployment := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) (string, int) {
		obj := map[string]any{}
		g.Expect(json.Unmarshal(workOf(g, pmw, cluster).Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		spec := obj["spec"].(map[string]any)
		containers := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		return containers[0].(map[string]any)["image"].(string), int(spec["replicas"].(float64))
	}
	images := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, clusters []string) []string {
		var out []string
		for _, c := range clusters {
			img, _ := deployment(g, pmw, c)
			out = append(out, img)
		}
		return out
	}
	// report plays a cluster's agent: the Deployment its work carries, with available of its replicas
	// available (all of them when available is negative).
	report := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, available int) {
		Eventually(func(g Gomega) {
			w := workOf(g, pmw, cluster)
			_, share := deployment(g, pmw, cluster)
			if available < 0 {
				available = share
			}
			framework.WorkConditions(w, agentUp)
			deploymentFeedback(w, share, available)
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	setImage := func(pmw *workv1alpha1.PlacementManifestWork, image string) {
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			d := framework.Deployment("web", "default", 10)
			d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = image
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = framework.MakePMW("x", ns).Manifest(d).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
		})
	}

	It("lets a cluster holding most replicas roll alone, then the others within the budget, counted from the agents' availableReplicas", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.Deployment("web", "default", 10)).Obj()
		pmw.Spec.DistributionStrategy = []workv1alpha1.DistributionStrategy{{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{
				{ClusterName: clusters[0], Weight: 6}, {ClusterName: clusters[1], Weight: 2}, {ClusterName: clusters[2], Weight: 2}}}}}
		// Every cluster at once: only the budget paces the rollout.
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromString("100%")}}
		pmw.Spec.DisruptionBudget = &workv1alpha1.DisruptionBudget{MaxUnavailableReplicas: intstr.FromInt32(2)}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			for i, want := range []int{6, 2, 2} {
				_, n := deployment(g, pmw, clusters[i])
				g.Expect(n).To(Equal(want))
			}
		}, timeout, interval).Should(Succeed())
		for _, c := range clusters {
			report(pmw, c, -1)
		}
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.CompletedRevision).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())
		const first = "registry.example/app:1"

		By("the cluster with 6 of 10 replicas rolls alone: nothing else is unavailable, and the others would make 8 unavailable")
		setImage(pmw, "registry.example.com/web:2")
		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw, clusters)).To(Equal([]string{"registry.example.com/web:2", first, first}))
			b := fw.Current(g, pmw).Status.DisruptionBudget
			g.Expect(b).NotTo(BeNil())
			g.Expect(b.MaxUnavailableReplicas).To(BeEquivalentTo(2))
			g.Expect(b.Held).To(Equal([]string{clusters[1], clusters[2]}))
			g.Expect(b.Message).To(ContainSubstring("would make 8 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 2"))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Message).To(ContainSubstring("the disruption budget holds clusters back"))
		}, timeout, interval).Should(Succeed())

		By("while its new pods come up (2 of 6 available), the others still wait")
		report(pmw, clusters[0], 2)
		Eventually(func(g Gomega) {
			b := fw.Current(g, pmw).Status.DisruptionBudget
			g.Expect(b.UnavailableReplicas).To(BeEquivalentTo(4))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(images(g, pmw, clusters)).To(Equal([]string{"registry.example.com/web:2", first, first}))
		}, "2s", interval).Should(Succeed())

		By("once it is available again, one small cluster fits the budget, the other waits for it")
		report(pmw, clusters[0], -1)
		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw, clusters)).To(Equal([]string{"registry.example.com/web:2", "registry.example.com/web:2", first}))
			g.Expect(fw.Current(g, pmw).Status.DisruptionBudget.Held).To(Equal([]string{clusters[2]}))
		}, timeout, interval).Should(Succeed())
		report(pmw, clusters[1], 0)
		Consistently(func(g Gomega) {
			g.Expect(images(g, pmw, clusters)[2]).To(Equal(first))
		}, "2s", interval).Should(Succeed())
		report(pmw, clusters[1], -1)
		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw, clusters)).To(Equal([]string{"registry.example.com/web:2", "registry.example.com/web:2", "registry.example.com/web:2"}))
		}, timeout, interval).Should(Succeed())
		report(pmw, clusters[2], -1)
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.CompletedRevision).To(Equal(cur.Status.CurrentRevision))
			g.Expect(cur.Status.DisruptionBudget.Held).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})

	It("keeps a leaving cluster's work until the replicas it runs are available elsewhere, even with moveStrategy Immediate", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		pmw := framework.MakePMW("move", ns).Placement("p").Manifest(framework.Deployment("web", "default", 4)).Obj()
		pmw.Spec.DistributionStrategy = []workv1alpha1.DistributionStrategy{{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}}
		pmw.Spec.DisruptionBudget = &workv1alpha1.DisruptionBudget{MaxUnavailableReplicas: intstr.FromInt32(0)}
		// Without the budget the leaving work would go at once.
		pmw.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveImmediate}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			_, n := deployment(g, pmw, clusters[1])
			g.Expect(n).To(Equal(2))
		}, timeout, interval).Should(Succeed())
		report(pmw, clusters[0], -1)
		report(pmw, clusters[1], -1)

		By("clusters[1] leaves, clusters[2] joins: none of the new cluster's replicas is available yet")
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[2])
		Eventually(func(g Gomega) {
			_, n := deployment(g, pmw, clusters[2])
			g.Expect(n).To(Equal(2))
		}, timeout, interval).Should(Succeed())
		report(pmw, clusters[2], 0)
		Eventually(func(g Gomega) {
			b := fw.Current(g, pmw).Status.DisruptionBudget
			g.Expect(b).NotTo(BeNil())
			g.Expect(b.Held).To(Equal([]string{clusters[1]}))
			g.Expect(b.Message).To(ContainSubstring("The removal of cluster " + clusters[1] + " waits"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { workOf(g, pmw, clusters[1]) }, "2s", interval).Should(Succeed())

		By("once its replicas run on the new cluster, the leaving work is removed")
		report(pmw, clusters[2], -1)
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).NotTo(HaveKey(clusters[1]))
		}, timeout, interval).Should(Succeed())
	})
})
