package faults

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("Security", func() {
	It("reaches only clusters decided for a Placement of the PlacementManifestWork's own namespace", func(ctx SpecContext) {
		teamA, teamB := fw.NewNamespace("team-a"), fw.NewNamespace("team-b")
		clusters := fw.NewClusters(3)
		// Team A's Placement "shared" decides clusters 0 and 1.
		Expect(k8s.Create(ctx, framework.Placement("shared", teamA))).To(Succeed())
		fw.Decide(teamA, "shared", "shared-decision-1", clusters[0], clusters[1])
		fw.StartManager(suite.ManagerOptions{Name: "scope"})

		// Team B names "shared", which exists only in team A's namespace: placementRef has no namespace field,
		// so it resolves in team B's namespace, where it is missing. A decision labelled for "shared" in team
		// B's namespace, with no Placement, is not read either.
		fw.Decide(teamB, "shared", "stray-decision", clusters[2])
		borrower := framework.MakePMW("borrower", teamB).Placement("shared").
			Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, borrower)).To(Succeed())
		Eventually(func(g Gomega) {
			got := fw.Current(g, borrower)
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionPlacementVerified)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonPlacementNotFound))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionStalled)).To(BeTrue())
			g.Expect(got.Status.PlacedManifestWorkSummary.Total).To(BeZero())
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(fw.WorksOf(g, borrower)).To(BeEmpty(), "no cluster is reached")
		}, "2s", interval).Should(Succeed())

		// Team B's own Placement "shared" decides cluster 2; team A's decisions of the same name do not leak in.
		Expect(k8s.Create(ctx, framework.Placement("shared", teamB))).To(Succeed())
		fw.Decide(teamB, "shared", "stray-decision", clusters[2])
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, borrower)).To(ConsistOf(clusters[2]))
			g.Expect(fw.Current(g, borrower).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, borrower)).To(ConsistOf(clusters[2]))
		}, "2s", interval).Should(Succeed())

		fw.DeletePMW(borrower, timeout)
	}, SpecTimeout(3*timeout))

	It("never modifies or deletes a ManifestWork that carries its label and owner annotation but not its UID", func(ctx SpecContext) {
		ns := fw.NewNamespace("impostor")
		clusters := fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		owner := manifestwork.Owner(pmw)

		// Look-alikes, made by hand before the PlacementManifestWork exists, so its UID cannot be on them: the
		// label and owner annotation are right, the UID annotation is not. One has the work's own name in a
		// decided cluster, one another name in a decided cluster, one the work's name in a cluster that is not
		// decided (which a leaving work would have).
		impostor := func(cluster, name string) *workv1.ManifestWork {
			w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: cluster,
				Labels: map[string]string{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(owner)},
				Annotations: map[string]string{
					workv1alpha1.AnnotationOwner:    owner.String(),
					workv1alpha1.AnnotationOwnerUID: "00000000-0000-0000-0000-000000000000",
				},
			}}
			w.Spec.Workload.Manifests = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("someone-elses", "default", nil)).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			Expect(k8s.Create(ctx, w)).To(Succeed())
			return w
		}
		impostors := []*workv1.ManifestWork{
			impostor(clusters[0], manifestwork.WorkName(owner)),
			impostor(clusters[1], "lookalike"),
			impostor(clusters[2], manifestwork.WorkName(owner)),
		}
		unchanged := func(g Gomega) {
			for _, want := range impostors {
				got := &workv1.ManifestWork{}
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(want), got)).To(Succeed(), "%s/%s exists", want.Namespace, want.Name)
				g.Expect(got.ResourceVersion).To(Equal(want.ResourceVersion), "%s/%s is unchanged", want.Namespace, want.Name)
				g.Expect(got.DeletionTimestamp).To(BeNil())
			}
		}

		fw.StartManager(suite.ManagerOptions{Name: "ownership"})
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			applied := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(applied).NotTo(BeNil())
			g.Expect(applied.Reason).To(Equal(workv1alpha1.ReasonManifestWorkConflict))
			g.Expect(applied.Message).To(ContainSubstring(clusters[0]))
			g.Expect(applied.Message).NotTo(ContainSubstring(clusters[1]))
			// Its own work went to cluster 1 next to the look-alike; cluster 0 is blocked by the impostor.
			own := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: clusters[1], Name: manifestwork.WorkName(owner)}, own)).To(Succeed())
			g.Expect(manifestwork.IsOwnedBy(own, got)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		Consistently(unchanged, "2s", interval).Should(Succeed())

		// Nor when cluster 0 leaves the decisions and the PlacementManifestWork is deleted.
		fw.Decide(ns, "p", "p-decision-1", clusters[1])
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied).Reason).To(Equal(workv1alpha1.ReasonWaitingForApply))
		}, timeout, interval).Should(Succeed())
		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &workv1alpha1.PlacementManifestWork{}
			err := k8s.Get(ctx, client.ObjectKeyFromObject(pmw), got)
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "the PlacementManifestWork is gone")
			own := &workv1.ManifestWork{}
			err = k8s.Get(ctx, client.ObjectKey{Namespace: clusters[1], Name: manifestwork.WorkName(owner)}, own)
			g.Expect(err).To(HaveOccurred(), "its own work is deleted")
		}, timeout, interval).Should(Succeed())
		unchanged(Default)
	}, SpecTimeout(3*timeout))
})
