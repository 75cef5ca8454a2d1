package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Revisions", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("revisions")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// revisions are the PMW's ControllerRevisions, number by name.
	revisions := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]int64 {
		list := &appsv1.ControllerRevisionList{}
		g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
			workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
		})).To(Succeed())
		out := map[string]int64{}
		for _, cr := range list.Items {
			out[cr.Name] = cr.Revision
		}
		return out
	}

	setValue := func(pmw *workv1alpha1.PlacementManifestWork, v string, change func(*workv1alpha1.PlacementManifestWork)) {
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			if change != nil {
				change(cur)
			}
		})
	}

	It("numbers templates, re-uses a template that comes back, prunes beyond the history limit and reports the current and completed revisions", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("the first template is revision 1, owned by the PMW")
		first := rolledOut(ctx, pmw, clusters, 1)
		cr := &appsv1.ControllerRevision{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: first}, cr)).To(Succeed())
		ref := metav1.GetControllerOf(cr)
		Expect(ref).NotTo(BeNil())
		Expect(ref.Kind).To(Equal("PlacementManifestWork"))
		Expect(ref.UID).To(Equal(fw.Current(Default, pmw).UID))
		Expect(ref.BlockOwnerDeletion).To(HaveValue(BeTrue()), "the garbage collector removes revisions with their PMW")

		By("a template change is revision 2; revision 1 stays completed until it is rolled out")
		setValue(pmw, "2", nil)
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.CurrentRevision).NotTo(BeNil())
			g.Expect(st.CurrentRevision.Revision).To(Equal(int64(2)))
			g.Expect(st.CompletedRevision).To(Equal(&workv1alpha1.RevisionReference{Revision: 1, Name: first}))
		}, timeout, interval).Should(Succeed())
		second := rolledOut(ctx, pmw, clusters, 2)
		Expect(revisions(Default, pmw)).To(Equal(map[string]int64{first: 1, second: 2}))

		By("going back to the first template re-uses its ControllerRevision, renumbered to 3")
		setValue(pmw, "1", nil)
		Expect(rolledOut(ctx, pmw, clusters, 3)).To(Equal(first))
		Expect(revisions(Default, pmw)).To(Equal(map[string]int64{first: 3, second: 2}))

		By("with revisionHistoryLimit 0 only the current and the completed revisions are kept")
		setValue(pmw, "3", func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.RevisionHistoryLimit = new(int32)
		})
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.CurrentRevision).NotTo(BeNil())
			g.Expect(st.CurrentRevision.Revision).To(Equal(int64(4)))
			g.Expect(revisions(g, pmw)).To(Equal(map[string]int64{first: 3, st.CurrentRevision.Name: 4}))
		}, timeout, interval).Should(Succeed())

		By("no status write and no revision write at rest")
		rv := fw.Current(Default, pmw).ResourceVersion
		before := revisions(Default, pmw)
		Consistently(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).ResourceVersion).To(Equal(rv))
			g.Expect(revisions(g, pmw)).To(Equal(before))
		}, "2s", interval).Should(Succeed())

		fw.DeletePMW(pmw, timeout)
	})
})

// rolledOut waits until the current revision is the given number, every cluster's work carries its
// template hash (the ControllerRevision's label), and then plays the agents: applied and available, so the
// revision completes. It returns the revision's name.
func rolledOut(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, clusters []string, number int64) string {
	var name string
	Eventually(func(g Gomega) {
		cur := fw.Current(g, pmw)
		g.Expect(cur.Status.ObservedGeneration).To(Equal(cur.Generation))
		g.Expect(cur.Status.CurrentRevision).NotTo(BeNil())
		g.Expect(cur.Status.CurrentRevision.Revision).To(Equal(number))
		name = cur.Status.CurrentRevision.Name
		cr := &appsv1.ControllerRevision{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: pmw.Namespace, Name: name}, cr)).To(Succeed())
		g.Expect(cr.Revision).To(Equal(number))
		works := fw.WorksByCluster(g, pmw)
		g.Expect(works).To(HaveLen(len(clusters)))
		for _, w := range works {
			g.Expect(w.Annotations[workv1alpha1.AnnotationTemplateHash]).To(Equal(cr.Labels[workv1alpha1.LabelTemplateHash]))
		}
	}, timeout, interval).Should(Succeed())
	for _, c := range clusters {
		fw.AgentReports(pmw, c, map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
	}
	Eventually(func(g Gomega) {
		g.Expect(fw.Current(g, pmw).Status.CompletedRevision).To(Equal(&workv1alpha1.RevisionReference{Revision: number, Name: name}))
	}, timeout, interval).Should(Succeed())
	return name
}
