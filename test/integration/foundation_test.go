package integration

import (
	"context"
	"maps"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("PlacementManifestWork", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("app")
	})

	summary := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) workv1alpha1.PlacedManifestWorkSummary {
		return fw.Current(g, pmw).Status.PlacedManifestWorkSummary
	}

	Context("placement resolution", func() {
		It("uses the referenced Placement and the union of all its PlacementDecisions", func() {
			clusters := fw.NewClusters(3)
			Expect(k8s.Create(ctx, framework.Placement("web", ns))).To(Succeed())
			fw.Decide(ns, "web", "web-decision-1", clusters[0], clusters[1])
			fw.Decide(ns, "web", "web-decision-2", clusters[1], clusters[2]) // cluster 2 twice: deduplicated
			fw.Decide(ns, "other", "other-decision-1", fw.NewClusters(1)...) // another placement's decision is ignored

			pmw := framework.MakePMW("web", ns).Placement("web").
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"k": "v"})).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())

			Eventually(func(g Gomega) {
				g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
				c := fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonPlacementDecided))
				g.Expect(summary(g, pmw).Total).To(BeEquivalentTo(3))
			}, timeout, interval).Should(Succeed())
		})

		It("creates an owned, empty Placement named like the PlacementManifestWork and keeps the user's edits", func() {
			pmw := framework.MakePMW("gen", ns).Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())

			placement := &clusterv1beta1.Placement{}
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "gen"}, placement)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			Expect(placement.OwnerReferences).To(HaveLen(1))
			Expect(placement.OwnerReferences[0].UID).To(Equal(pmw.UID))
			Expect(placement.Spec.Predicates).To(BeEmpty())

			n := int32(2)
			placement.Spec.NumberOfClusters = &n
			Expect(k8s.Update(ctx, placement)).To(Succeed())

			clusters := fw.NewClusters(1)
			fw.Decide(ns, "gen", "gen-decision-1", clusters...) // a decision event reconciles the PMW again
			Eventually(func(g Gomega) {
				g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
			}, timeout, interval).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(placement), placement)).To(Succeed())
				g.Expect(placement.Spec.NumberOfClusters).To(HaveValue(BeEquivalentTo(2)))
			}, "1s", interval).Should(Succeed())
		})

		It("reports a missing Placement and an empty decision set with their own reasons", func() {
			pmw := framework.MakePMW("missing", ns).Placement("nowhere").
				Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) {
				c := fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified)
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonPlacementNotFound))
				g.Expect(c.Message).To(ContainSubstring(`"nowhere"`))
			}, timeout, interval).Should(Succeed())

			Expect(k8s.Create(ctx, framework.Placement("nowhere", ns))).To(Succeed())
			fw.Decide(ns, "nowhere", "nowhere-decision-1")
			Eventually(func(g Gomega) {
				c := fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified)
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonPlacementDecisionEmpty))
				g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied).Reason).To(Equal(workv1alpha1.ReasonNoClusters))
			}, timeout, interval).Should(Succeed())
		})
	})

	Context("ManifestWorks", func() {
		It("writes one labelled work per cluster, distinct across namespaces, valid for long names, and no writes once converged", func() {
			clusters := fw.NewClusters(2)
			otherNS := fw.NewNamespace("app")
			longName := strings.Repeat("a", 240)
			var pmws []*workv1alpha1.PlacementManifestWork
			for _, n := range []string{ns, otherNS} {
				Expect(k8s.Create(ctx, framework.Placement("p", n))).To(Succeed())
				fw.Decide(n, "p", "p-decision-1", clusters...)
			}
			for _, target := range []struct{ ns, name string }{{ns, "same"}, {otherNS, "same"}, {ns, longName}} {
				pmw := framework.MakePMW(target.name, target.ns).Placement("p").
					Manifest(framework.ConfigMap("cfg", "default", map[string]string{"from": target.ns})).Obj()
				Expect(k8s.Create(ctx, pmw)).To(Succeed())
				pmws = append(pmws, pmw)
			}
			names := map[string]bool{}
			Eventually(func(g Gomega) {
				for _, pmw := range pmws {
					works := fw.WorksByCluster(g, pmw)
					g.Expect(slices.Collect(maps.Keys(works))).To(ConsistOf(clusters))
					for _, w := range works {
						g.Expect(len(w.Name)).To(BeNumerically("<=", 188))
						names[w.Name] = true
					}
				}
			}, timeout, interval).Should(Succeed())
			Expect(names).To(HaveLen(3), "each PlacementManifestWork has its own work name")

			// Converged: a reconcile triggered by an unrelated change writes nothing.
			isWorkWrite := func(w framework.Write) bool {
				return w.Kind == "ManifestWork" && (w.Namespace == clusters[0] || w.Namespace == clusters[1])
			}
			Eventually(func(g Gomega) {
				g.Expect(fw.Condition(g, pmws[0], workv1alpha1.ConditionManifestworkApplied).Reason).To(Equal(workv1alpha1.ReasonWaitingForApply))
			}, timeout, interval).Should(Succeed())
			before := len(mgr.Recorder.Writes(isWorkWrite))
			count := fw.Reconciles()
			d := &clusterv1beta1.PlacementDecision{}
			Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "p-decision-1"}, d)).To(Succeed())
			d.Labels["unrelated"] = "touch"
			Expect(k8s.Update(ctx, d)).To(Succeed())
			// The reconcile count is the manager's, any PMW's: the window after it lets these PMWs' reconciles run.
			Eventually(fw.Reconciles, timeout, interval).Should(BeNumerically(">", count))
			Consistently(func() []framework.Write { return mgr.Recorder.Writes(isWorkWrite) }, "2s", interval).Should(HaveLen(before))
		})

		It("removes the work of a cluster that leaves the decisions and adds one for a cluster that joins", func() {
			clusters := fw.NewClusters(3)
			Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
			fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
			// Immediate removal; the default, make before break, has its own scenario in rollout_test.go.
			pmw := framework.MakePMW("move", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).
				Move(workv1alpha1.MoveImmediate).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0], clusters[1]))
			}, timeout, interval).Should(Succeed())

			fw.Decide(ns, "p", "p-decision-1", clusters[1], clusters[2])
			Eventually(func(g Gomega) {
				g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[1], clusters[2]))
				g.Expect(summary(g, pmw).Total).To(BeEquivalentTo(2))
			}, timeout, interval).Should(Succeed())
		})

		It("deletes its works before letting the PlacementManifestWork go, and never touches a foreign work", func() {
			clusters := fw.NewClusters(2)
			Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
			fw.Decide(ns, "p", "p-decision-1", clusters...)
			pmw := framework.MakePMW("owned", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()

			// Someone else's ManifestWork already has the name this PMW would use in the second cluster.
			foreign := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
				Name: manifestwork.WorkName(manifestwork.Owner(pmw)), Namespace: clusters[1],
				Labels: map[string]string{"team": "other"},
			}}
			Expect(k8s.Create(ctx, foreign)).To(Succeed())
			foreignVersion := foreign.ResourceVersion

			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) {
				c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
				g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonManifestWorkConflict))
				g.Expect(c.Message).To(ContainSubstring(clusters[1]))
				g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0]))
			}, timeout, interval).Should(Succeed())

			Expect(k8s.Delete(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) {
				err := k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is gone")
				g.Expect(fw.WorksByCluster(g, pmw)).To(BeEmpty())
			}, timeout, interval).Should(Succeed())
			got := &workv1.ManifestWork{}
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), got)).To(Succeed())
			Expect(got.ResourceVersion).To(Equal(foreignVersion), "the foreign work was not modified")
		})

		It("waits for works that are slow to go away before releasing the finalizer", func() {
			clusters := fw.NewClusters(1)
			Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
			fw.Decide(ns, "p", "p-decision-1", clusters...)
			pmw := framework.MakePMW("slow", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			work := &workv1.ManifestWork{}
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: clusters[0], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, work)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			// The work agent's finalizer holds the work until the workload is removed from the cluster.
			work.Finalizers = append(work.Finalizers, "cluster.open-cluster-management.io/manifest-work-cleanup")
			Expect(k8s.Update(ctx, work)).To(Succeed())

			Expect(k8s.Delete(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(work), work)).To(Succeed())
				g.Expect(work.DeletionTimestamp).NotTo(BeNil())
			}, timeout, interval).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})).To(Succeed())
			}, "1s", interval).Should(Succeed())

			work.Finalizers = nil
			Expect(k8s.Update(ctx, work)).To(Succeed())
			Eventually(func(g Gomega) {
				err := k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
			}, timeout, interval).Should(Succeed())
		})
	})

	Context("status", func() {
		It("counts conditions of the works' current generation only, and a template change resets the counts", func() {
			clusters := fw.NewClusters(3)
			Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
			fw.Decide(ns, "p", "p-decision-1", clusters...)
			pmw := framework.MakePMW("status", ns).Placement("p").
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			Eventually(func(g Gomega) { g.Expect(fw.WorksByCluster(g, pmw)).To(HaveLen(3)) }, timeout, interval).Should(Succeed())

			t, f := metav1.ConditionTrue, metav1.ConditionFalse
			fw.AgentReports(pmw, clusters[0], map[string]metav1.ConditionStatus{workv1.WorkApplied: t, workv1.WorkAvailable: t})
			fw.AgentReports(pmw, clusters[1], map[string]metav1.ConditionStatus{workv1.WorkApplied: t, workv1.WorkProgressing: t})
			fw.AgentReports(pmw, clusters[2], map[string]metav1.ConditionStatus{workv1.WorkApplied: f, workv1.WorkDegraded: t})
			Eventually(func(g Gomega) {
				g.Expect(summary(g, pmw)).To(Equal(workv1alpha1.PlacedManifestWorkSummary{
					Total: 3, Applied: 2, Available: 1, Progressing: 1, Degraded: 1,
				}))
				c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonApplyFailed))
				g.Expect(c.Message).To(ContainSubstring(clusters[2]))
			}, timeout, interval).Should(Succeed())

			// A template change updates every work; conditions of the old generation no longer count.
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), pmw)).To(Succeed())
				pmw.Spec.ManifestWorkTemplate = framework.MakePMW("x", ns).
					Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
				g.Expect(k8s.Update(ctx, pmw)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			Eventually(func(g Gomega) {
				for _, w := range fw.WorksByCluster(g, pmw) {
					g.Expect(string(w.Spec.Workload.Manifests[0].Raw)).To(ContainSubstring(`"v":"2"`))
					g.Expect(w.Generation).To(BeEquivalentTo(2))
				}
				g.Expect(summary(g, pmw)).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 3, Progressing: 3}))
			}, timeout, interval).Should(Succeed())

			for _, c := range clusters {
				fw.AgentReports(pmw, c, map[string]metav1.ConditionStatus{workv1.WorkApplied: t, workv1.WorkAvailable: t})
			}
			Eventually(func(g Gomega) {
				g.Expect(summary(g, pmw)).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 3, Applied: 3, Available: 3}))
				c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonAsExpected))
			}, timeout, interval).Should(Succeed())
		})
	})
})
