package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Split distribution", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("split")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	splitOf := func(name string, s workv1alpha1.SplitStrategy) workv1alpha1.DistributionStrategy {
		return workv1alpha1.DistributionStrategy{Name: name, Namespace: "default", Type: workv1alpha1.DistributionSplit, Split: &s}
	}

	It("divides 3 replicas 2/1, then 1/1/1 when a cluster joins, and keeps the sum when one leaves", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 3)).
			Manifest(framework.ConfigMap("web", "default", map[string]string{"k": "v"})).
			Strategy(splitOf("web", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance})).Obj()
		pmw.Spec.DistributionStrategy[0].Kind = "Deployment"
		// No agent reports here, so make before break would keep the leaving cluster's work until its timeout.
		pmw.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveImmediate}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			got := shares(g, pmw, "Deployment", "spec", "replicas")
			g.Expect(got).To(HaveLen(2))
			g.Expect([]int64{got[clusters[0]], got[clusters[1]]}).To(ConsistOf(int64(2), int64(1)))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Splits).To(HaveLen(1))
			g.Expect(st.Splits[0]).To(haveSplit(3, 3, 0))
			c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionDistributed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
		// The ConfigMap is replicated unchanged.
		Eventually(func(g Gomega) {
			list := &workv1.ManifestWorkList{}
			g.Expect(k8s.List(ctx, list, client.MatchingLabels{
				workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
			})).To(Succeed())
			g.Expect(list.Items).To(HaveLen(2))
			for _, w := range list.Items {
				g.Expect(w.Spec.Workload.Manifests).To(HaveLen(2))
				g.Expect(string(w.Spec.Workload.Manifests[1].Raw)).To(ContainSubstring(`"data":{"k":"v"}`))
			}
		}, timeout, interval).Should(Succeed())

		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{
				clusters[0]: 1, clusters[1]: 1, clusters[2]: 1,
			}))
		}, timeout, interval).Should(Succeed())

		fw.Decide(ns, "p", "p-decision-1", clusters[1], clusters[2])
		Eventually(func(g Gomega) {
			got := shares(g, pmw, "Deployment", "spec", "replicas")
			g.Expect(got).To(HaveLen(2))
			g.Expect(got[clusters[1]] + got[clusters[2]]).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())
	})

	It("splits .spec.parallelism of a Job: 4 over 2 clusters gives 2 and 2", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("job", ns).Placement("p").
			Manifest(framework.Job("crunch", "default", 4)).
			Strategy(splitOf("crunch", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: ".spec.parallelism"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Job", "spec", "parallelism")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2}))
		}, timeout, interval).Should(Succeed())
	})

	It("reports replicas that exceed limitRange.max as unplaced", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("capped", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 7)).
			Strategy(splitOf("web", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance,
				LimitRange: &workv1alpha1.LimitRange{Max: ptr.To[int32](3)}})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 3, clusters[1]: 3}))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Splits).To(HaveLen(1))
			g.Expect(st.Splits[0]).To(haveSplit(7, 6, 1))
			c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionDistributed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonReplicasUnplaced))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the delivered works when the split field becomes invalid, and says which manifest and path", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("broken", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 4)).
			Strategy(splitOf("web", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2}))
		}, timeout, interval).Should(Succeed())

		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			cur.Spec.DistributionStrategy[0].Split.FieldPath = ".spec.shards"
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
			c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionDistributed)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInvalidSplitField))
			g.Expect(c.Message).To(And(ContainSubstring("Deployment.apps default/web"), ContainSubstring(".spec.shards")))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2}))
		}, "1s", interval).Should(Succeed())
	})

	It("weighs clusters by label with Weighted and follows label changes", func() {
		clusters := fw.NewClusters(2)
		for i, c := range clusters {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c, Labels: map[string]string{"tier": []string{"big", "small"}[i]}}}
			Expect(k8s.Create(ctx, mc)).To(Succeed())
		}
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("weighted", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 8)).
			Strategy(splitOf("web", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{
				{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "big"}}, Weight: 3},
				{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "small"}}, Weight: 1},
			}})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 6, clusters[1]: 2}))
		}, timeout, interval).Should(Succeed())

		mc := &clusterv1.ManagedCluster{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: clusters[1]}, mc)).To(Succeed())
		mc.Labels["tier"] = "big"
		Expect(k8s.Update(ctx, mc)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 4, clusters[1]: 4}))
		}, timeout, interval).Should(Succeed())
	})

	It("weighs clusters by their AddOnPlacementScore and re-divides when scores change", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		setScore := func(cluster string, value int32) {
			score := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "resource-usage", Namespace: cluster}}
			if err := k8s.Create(ctx, score); apierrors.IsAlreadyExists(err) {
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(score), score)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
			score.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "cpuAvailable", Value: value}}
			score.Status.ValidUntil = &metav1.Time{Time: time.Now().Add(time.Hour)}
			Expect(k8s.Status().Update(ctx, score)).To(Succeed())
		}
		setScore(clusters[0], 90)
		setScore(clusters[1], 10)
		pmw := framework.MakePMW("scored", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 10)).
			Strategy(splitOf("web", workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore,
				Score: &workv1alpha1.ScoreSource{ResourceName: "resource-usage", ScoreName: "cpuAvailable"}})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 9, clusters[1]: 1}))
		}, timeout, interval).Should(Succeed())

		setScore(clusters[0], 20)
		setScore(clusters[1], 80)
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 8}))
		}, timeout, interval).Should(Succeed())
	})
})

// haveSplit matches a SplitStatus's total, placed and unplaced.
func haveSplit(total, placed, unplaced int32) OmegaMatcher {
	return And(
		HaveField("Total", total),
		HaveField("Placed", placed),
		HaveField("Unplaced", unplaced),
	)
}
