//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// One PlacementManifestWork through its life: created, its template changed, a cluster dropped by its label,
// deleted. Each step starts from the state the previous one converged to, so the steps run in order; a failed
// step does not stop the later ones (ContinueOnFailure), since each waits for its own end state anyway and a
// status-only failure leaves the spokes as the next step expects.
var _ = Describe("Split a Deployment over three spokes", Ordered, ContinueOnFailure, func() {
	const (
		total = 5
		v1    = "registry.example/api:v1"
		v2    = "registry.example/api:v2"
	)
	var (
		ns      string
		pmw     *workv1alpha1.PlacementManifestWork
		dropped string // the cluster whose label is removed
	)

	// template is the ConfigMap (replicated) and the Deployment (split) at one version.
	template := func(version, image string) *framework.PMWWrapper {
		return framework.MakePMW("api", ns).Placement("api").
			Manifest(framework.ConfigMap("api-config", ns, map[string]string{"version": version})).
			Manifest(deployment("api", ns, total, image)).
			Strategy(workv1alpha1.DistributionStrategy{
				Name: "api", Namespace: ns, Group: "apps", Kind: "Deployment",
				Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
			})
	}

	// rolledOut asserts, on the given spokes, the ConfigMap at version and the Deployment rolled out at image,
	// and returns each spoke's share of the replicas.
	rolledOut := func(ctx context.Context, g Gomega, on []string, version, image string) map[string]int32 {
		shares := map[string]int32{}
		for _, c := range on {
			cm := &corev1.ConfigMap{}
			g.Expect(stk.Spoke(c).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-config"}, cm)).To(Succeed(), "ConfigMap on %s", c)
			g.Expect(cm.Data).To(HaveKeyWithValue("version", version), "ConfigMap on %s", c)
			d := spokeDeployment(ctx, g, c, ns, "api")
			g.Expect(d.Spec.Replicas).NotTo(BeNil())
			shares[c] = *d.Spec.Replicas
			expectRolledOut(g, c, d, shares[c], image)
			g.Expect(readyPods(ctx, g, c, ns, "api")).To(Equal(shares[c]), "ready pods on %s", c)
		}
		return shares
	}

	// hubReports asserts the PlacementManifestWork's status: every one of the clusters available, the split
	// placed in full with the given shares, and the ready replicas summed to the total from feedback.
	hubReports := func(ctx context.Context, g Gomega, clusters int32, shares ...workv1alpha1.ShareCount) {
		got := getPMW(ctx, g, pmw)
		expectAllAvailable(g, got, clusters)
		g.Expect(got.Status.Splits).To(HaveLen(1), "status.splits")
		sp := got.Status.Splits[0]
		g.Expect([]int32{sp.Total, sp.Placed, sp.Unplaced}).To(Equal([]int32{total, total, 0}), "total/placed/unplaced of status.splits[0]")
		g.Expect(sp.Shares).To(ConsistOf(shares), "status.splits[0].shares")
		expectHealthy(g, manifestSummary(g, got, "ConfigMap", "api-config"), clusters)
		d := manifestSummary(g, got, "Deployment", "api")
		expectHealthy(g, d, clusters)
		expectFeedback(g, d, "readyReplicas", total, clusters)
	}

	// objects are the template's objects as the spokes hold them, for checking that they are gone.
	objects := func() []client.Object {
		return []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api"}},
		}
	}

	BeforeAll(func(ctx SpecContext) {
		dropped = clusters[len(clusters)-1]
		ns = newNamespace(ctx, "split")
		Expect(hub.Create(ctx, selectingPlacement("api", ns))).To(Succeed())
		pmw = template("v1", v1).Obj()
	})

	// Whatever happened above: the cluster selectable again for other scenarios, and nothing left behind.
	AfterAll(func(ctx SpecContext) {
		if pmw == nil {
			return // BeforeAll failed
		}
		setSelected(ctx, dropped, true)
		deletePMW(ctx, pmw)
	})

	It("holds 2/2/1 replicas on the spokes, all pods ready, and reports 5 ready replicas", func(ctx SpecContext) {
		start := time.Now()
		Expect(hub.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			shares := rolledOut(ctx, g, clusters, "v1", v1)
			g.Expect(shares).To(HaveLen(3))
			g.Expect([]int32{shares[clusters[0]], shares[clusters[1]], shares[clusters[2]]}).To(ConsistOf(int32(2), int32(2), int32(1)))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			hubReports(ctx, g, 3, workv1alpha1.ShareCount{Share: 2, Clusters: 2}, workv1alpha1.ShareCount{Share: 1, Clusters: 1})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("converges every spoke to a new image and ConfigMap value", func(ctx SpecContext) {
		start := time.Now()
		updateTemplate(ctx, pmw, template("v2", v2).Spec.ManifestWorkTemplate.Workload.Manifests)

		Eventually(func(g Gomega) {
			shares := rolledOut(ctx, g, clusters, "v2", v2)
			var sum int32
			for _, s := range shares {
				sum += s
			}
			g.Expect(sum).To(Equal(int32(total)))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			hubReports(ctx, g, 3, workv1alpha1.ShareCount{Share: 2, Clusters: 2}, workv1alpha1.ShareCount{Share: 1, Clusters: 1})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("removes the objects of a cluster the Placement drops and splits the total over the others", func(ctx SpecContext) {
		remaining := clusters[:len(clusters)-1]
		start := time.Now()
		setSelected(ctx, dropped, false)

		Eventually(func(g Gomega) {
			expectGone(ctx, g, dropped, ns, "api", objects()...)
			shares := rolledOut(ctx, g, remaining, "v2", v2)
			g.Expect([]int32{shares[remaining[0]], shares[remaining[1]]}).To(ConsistOf(int32(3), int32(2)))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			hubReports(ctx, g, 2, workv1alpha1.ShareCount{Share: 3, Clusters: 1}, workv1alpha1.ShareCount{Share: 2, Clusters: 1})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("removes every object from every spoke when deleted", func(ctx SpecContext) {
		start := time.Now()
		Expect(hub.Delete(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectGone(ctx, g, c, ns, "api", objects()...)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		// The manager removes its finalizer once every ManifestWork is gone, i.e. once the agents are done.
		Eventually(func(g Gomega) {
			err := hub.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is still there (%v)", err)
			g.Expect(works(ctx, g, pmw)).To(BeEmpty(), "ManifestWorks left on the hub")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})
})
