package faults

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// OCM lets a work agent edit its own ManifestWork (it adds finalizers). Whatever it writes there affects its
// own cluster at most.
var _ = Describe("A work agent", func() {
	// replicas reads each cluster's Deployment replicas from the PMW's works.
	replicas := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]int64 {
		out := map[string]int64{}
		for _, w := range fw.WorksOf(g, pmw) {
			obj := map[string]any{}
			g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
			out[w.Namespace] = int64(obj["spec"].(map[string]any)["replicas"].(float64))
		}
		return out
	}
	// agentEdits lets the cluster's agent change the annotations of its own work.
	agentEdits := func(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, cluster string, edit func(map[string]string)) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			edit(w.Annotations)
			g.Expect(k8s.Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	It("cannot take other clusters' replicas by forging its work's shares, before or after a restart", func(ctx SpecContext) {
		ns, _ := placedNamespace(ctx, "forged", 3)
		// 6 replicas, at least 3 per cluster that gets any: two clusters get 3, one gets none. Which one is
		// left out follows the previous shares first, so a forged previous share would win the place.
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.Deployment("web", "default", 6)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, LimitRange: &workv1alpha1.LimitRange{Min: ptr.To[int32](3)}}}).Obj()
		first := fw.StartManager(suite.ManagerOptions{Name: "forged-1"})
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		var before map[string]int64
		Eventually(func(g Gomega) {
			before = replicas(g, pmw)
			g.Expect(before).To(HaveLen(3))
			g.Expect(fw.Current(g, pmw).Status.Splits).To(HaveLen(1))
		}, timeout, interval).Should(Succeed())
		var outsider string
		for c, n := range before {
			if n == 0 {
				outsider = c
			}
		}
		Expect(outsider).NotTo(BeEmpty(), "one cluster is left out: %v", before)

		// The left-out cluster's agent claims all 6 as its previous share.
		key := "Deployment.apps default/web .spec.replicas"
		agentEdits(ctx, pmw, outsider, func(a map[string]string) { a[workv1alpha1.AnnotationShares] = `{"` + key + `":6}` })
		Consistently(func(g Gomega) { g.Expect(replicas(g, pmw)).To(Equal(before)) }, "2s", interval).Should(Succeed())

		// A restarted manager has no record of its own: it must not take the forged annotation for one.
		first.Stop()
		fw.StartManager(suite.ManagerOptions{Name: "forged-2"})
		Consistently(func(g Gomega) { g.Expect(replicas(g, pmw)).To(Equal(before)) }, "3s", interval).Should(Succeed())
		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(4*timeout))

	It("that removes its work's UID annotation blocks only its own cluster, and never stalls the PlacementManifestWork", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "unowned", 3)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		fw.StartManager(suite.ManagerOptions{Name: "unowned"})
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(3)) }, timeout, interval).Should(Succeed())

		agentEdits(ctx, pmw, clusters[0], func(a map[string]string) { delete(a, workv1alpha1.AnnotationOwnerUID) })
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(meta.IsStatusConditionFalse(got.Status.Conditions, workv1alpha1.ConditionStalled)).To(BeTrue(), "not Stalled")
			g.Expect(got.Status.PlacedManifestWorkSummary.Degraded).To(BeEquivalentTo(1))
			g.Expect(got.Status.UnhealthyClusters).To(ContainElement(workv1alpha1.ClusterHealth{Cluster: clusters[0], State: "Degraded",
				Reason: workv1alpha1.ReasonManifestWorkConflict, Message: got.Status.UnhealthyClusters[0].Message}))
		}, timeout, interval).Should(Succeed())

		// Deleting the PlacementManifestWork removes its own works; the one that is no longer provably its own
		// is left alone.
		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is gone")
			left := fw.WorksOf(g, pmw)
			g.Expect(left).To(HaveLen(1))
			g.Expect(left[0].Namespace).To(Equal(clusters[0]))
			g.Expect(left[0].DeletionTimestamp).To(BeNil())
		}, timeout, interval).Should(Succeed())
	}, SpecTimeout(3*timeout))
})
