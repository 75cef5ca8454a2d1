//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// regionLabel is the ManagedCluster label the override reads; the scenario sets it and removes it again.
const regionLabel = "region"

// setRegion sets a ManagedCluster's region label, or removes it when region is empty.
func setRegion(ctx context.Context, cluster, region string) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		if region == "" {
			delete(mc.Labels, regionLabel)
		} else {
			mc.Labels[regionLabel] = region
		}
		return hub.Update(ctx, mc)
	})).To(Succeed())
}

// One PlacementManifestWork, one Deployment, different images per cluster: an override with the image short form
// rewrites the registry from each ManagedCluster's region label. The real work agents apply each cluster's
// variant and the spokes' Deployment controllers roll it out; a region label changed on one ManagedCluster rolls
// a new image to that spoke alone.
var _ = Describe("Overrides: a region-specific image per cluster", Ordered, func() {
	const (
		image  = "nginx:1.25"
		euWest = "registry-eu-west.example.com/nginx:1.25"
		usEast = "registry-us-east.example.com/nginx:1.25"
		apSout = "registry-ap-south.example.com/nginx:1.25"
	)
	var (
		ns         string
		pmw        *workv1alpha1.PlacementManifestWork
		eu, us, no string // clusters[0] labelled eu-west, clusters[1] us-east, clusters[2] without a region
	)

	BeforeAll(func(ctx SpecContext) {
		eu, us, no = clusters[0], clusters[1], clusters[2]
		setRegion(ctx, eu, "eu-west")
		setRegion(ctx, us, "us-east")
		// Whatever happens below: no region label left for other scenarios.
		DeferCleanup(func(ctx SpecContext) {
			for _, c := range []string{eu, us} {
				setRegion(ctx, c, "")
			}
		})
		ns = newNamespace(ctx, "overrides")
		Expect(hub.Create(ctx, selectingPlacement("web", ns))).To(Succeed())
		pmw = framework.MakePMW("web", ns).Placement("web").
			Manifest(deployment("web", ns, 1, image)).
			Overrides(workv1alpha1.ClusterOverride{
				Name: "regional-registry",
				Clusters: &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: regionLabel, Operator: metav1.LabelSelectorOpExists}},
				}},
				Manifests: []workv1alpha1.OverrideManifest{{Group: "apps", Kind: "Deployment", Name: "web", Namespace: ns}},
				Image: &workv1alpha1.ImageOverride{
					Registry: &workv1alpha1.OverrideValue{Expression: `"registry-" + cluster.labels["region"] + ".example.com"`},
				},
			}).Obj()
	})

	AfterAll(func(ctx SpecContext) {
		if pmw != nil {
			deletePMW(ctx, pmw)
		}
	})

	// rolledOut asserts each spoke's Deployment at the image given for it, rolled out with its pod ready.
	rolledOut := func(ctx context.Context, g Gomega, images map[string]string) {
		for _, c := range clusters {
			expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "web"), 1, images[c])
			g.Expect(readyPods(ctx, g, c, ns, "web")).To(Equal(int32(1)), "ready pods on %s", c)
		}
	}

	// hubReports asserts every cluster available and the override counted on the two labelled clusters.
	hubReports := func(ctx context.Context, g Gomega) {
		got := getPMW(ctx, g, pmw)
		expectAllAvailable(g, got, 3)
		g.Expect(got.Status.Overrides).To(Equal([]workv1alpha1.OverrideStatus{{Name: "regional-registry", Clusters: 2}}), "status.overrides")
	}

	It("gives the two labelled spokes their region's image and the unlabelled one the template's", func(ctx SpecContext) {
		start := time.Now()
		Expect(hub.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			rolledOut(ctx, g, map[string]string{eu: euWest, us: usEast, no: image})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			hubReports(ctx, g)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("rolls a changed region label to that spoke alone", func(ctx SpecContext) {
		// The other spokes' Deployments and hub works as they are now: neither may be written again.
		generations := map[string]int64{}
		workGenerations := map[string]int64{}
		for _, c := range []string{eu, no} {
			generations[c] = spokeDeployment(ctx, Default, c, ns, "web").Generation
		}
		for _, w := range works(ctx, Default, pmw) {
			workGenerations[w.Namespace] = w.Generation
		}
		Expect(workGenerations).To(HaveLen(3), "ManifestWorks on the hub")

		start := time.Now()
		setRegion(ctx, us, "ap-south")

		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) {
				for _, c := range []string{eu, no} {
					d := spokeDeployment(ctx, g, c, ns, "web")
					g.Expect(d.Generation).To(Equal(generations[c]), "the Deployment on %s was changed", c)
				}
			})
			rolledOut(ctx, g, map[string]string{eu: euWest, us: apSout, no: image})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			ws := works(ctx, g, pmw)
			mustHold(func(g Gomega) {
				for _, w := range ws {
					if w.Namespace != us {
						g.Expect(w.Generation).To(Equal(workGenerations[w.Namespace]), "the ManifestWork of %s was written", w.Namespace)
					}
				}
			})
			for _, w := range ws {
				if w.Namespace == us {
					g.Expect(w.Generation).To(BeNumerically(">", workGenerations[us]), "the ManifestWork of %s", us)
					// The agent's report of the new generation, not of the old one.
					available := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
					g.Expect(available).NotTo(BeNil(), "Available of the ManifestWork of %s", us)
					g.Expect([]any{available.Status, available.ObservedGeneration}).To(Equal([]any{metav1.ConditionTrue, w.Generation}),
						"Available of the ManifestWork of %s", us)
				}
			}
			hubReports(ctx, g)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})
})
