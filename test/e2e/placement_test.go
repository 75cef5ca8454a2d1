//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// A Placement that OCM's placement controller has not decided yet says nothing about the clusters it selects:
// one just created again has no decisions, or still the decisions of the deleted one, which the placement
// controller reuses by name until the hub's garbage collector removes them. The manager keeps every delivered
// ManifestWork until the Placement is decided (PlacementVerified=False, PlacementNotDecided): deleting them
// would make the agents delete the workloads only to create them again seconds later. Decisions that drop to
// none for a moment keep the works too, for the move timeout.
//
// Each spec records the UIDs of the hub's ManifestWorks and of the spokes' Deployments once everything is
// available; a work deleted and created again, or a workload removed by its agent, would show as a new UID.
var _ = Describe("Re-creating the Placement keeps every ManifestWork", func() {
	const image = "registry.example/keep:v1"

	// deliver creates the PlacementManifestWork (a 1-replica Deployment) and waits until every cluster is
	// available, then records what it delivered.
	deliver := func(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) delivered {
		Expect(hub.Create(ctx, pmw)).To(Succeed())
		DeferCleanup(deletePMW, pmw)
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, pmw.Namespace, "keep"), 1, image)
			}
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			expectCondition(g, got, workv1alpha1.ConditionPlacementVerified, metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecided)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		return recordDelivered(ctx, pmw, "keep")
	}

	// decidedAgain waits until OCM's placement controller has decided the Placement of the given UID (its
	// decisions owned by it, so the old Placement's were garbage-collected and made anew) and the hub reports
	// every cluster available again, the works kept all along; then watches for holdWindow that they stay.
	decidedAgain := func(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, kept delivered, placement types.UID, start time.Time) {
		sawNotDecided := false
		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) { kept.expectKept(ctx, g, pmw) })
			got := getPMW(ctx, g, pmw)
			if c := condition(got, workv1alpha1.ConditionPlacementVerified); c != nil && c.Reason == workv1alpha1.ReasonPlacementNotDecided {
				sawNotDecided = true
			}
			decisions := placementDecisions(ctx, g, pmw.Namespace, pmw.PlacementName())
			g.Expect(decisions).NotTo(BeEmpty(), "PlacementDecisions of the new Placement")
			for _, d := range decisions {
				g.Expect(d.OwnerReferences).To(ContainElement(HaveField("UID", placement)),
					"PlacementDecision %s is not the new Placement's yet (the garbage collector removes the old one's)", d.Name)
			}
			expectCondition(g, got, workv1alpha1.ConditionPlacementVerified, metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecided)
			expectAllAvailable(g, got, 3)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
		GinkgoWriter.Printf("the new Placement was decided %s after the old one was deleted; PlacementNotDecided seen in between: %v\n",
			time.Since(start).Round(time.Millisecond), sawNotDecided)

		Consistently(func(g Gomega) {
			kept.expectKept(ctx, g, pmw)
			expectAllAvailable(g, getPMW(ctx, g, pmw), 3)
		}).WithContext(ctx).WithTimeout(holdWindow).WithPolling(poll).Should(Succeed())
	}

	// backAndKept waits until every cluster is decided again (check says how) and available, none leaving, the
	// works kept all along; then watches for holdWindow that they stay.
	backAndKept := func(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, kept delivered, start time.Time,
		check func(g Gomega, got *workv1alpha1.PlacementManifestWork)) {
		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) { kept.expectKept(ctx, g, pmw) })
			got := getPMW(ctx, g, pmw)
			check(g, got)
			expectAllAvailable(g, got, 3)
			g.Expect(got.Status.LeavingClusters).To(BeZero(), "status.leavingClusters")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
		Consistently(func(g Gomega) {
			kept.expectKept(ctx, g, pmw)
			expectAllAvailable(g, getPMW(ctx, g, pmw), 3)
		}).WithContext(ctx).WithTimeout(holdWindow).WithPolling(poll).Should(Succeed())
	}

	It("keeps the works when the placementRef's Placement is deleted and created again at once (kubectl replace --force)", func(ctx SpecContext) {
		ns := newNamespace(ctx, "replace")
		Expect(hub.Create(ctx, selectingPlacement("keep", ns))).To(Succeed())
		pmw := framework.MakePMW("keep", ns).Placement("keep").Manifest(deployment("keep", ns, 1, image)).Obj()
		kept := deliver(ctx, pmw)

		old := &clusterv1beta1.Placement{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keep"}, old)).To(Succeed())
		start := time.Now()
		// What kubectl replace --force does: delete, wait until gone (a Placement has no finalizer), create.
		Expect(hub.Delete(ctx, old, client.Preconditions{UID: &old.UID})).To(Succeed())
		replacement := &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: ns, Labels: old.Labels, Annotations: old.Annotations},
			Spec:       old.Spec,
		}
		Eventually(func() error { return hub.Create(ctx, replacement) }).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		Expect(replacement.UID).NotTo(Equal(old.UID))

		decidedAgain(ctx, pmw, kept, replacement.UID, start)
	})

	It("keeps the works when the user deletes the generated Placement and the manager creates it again", func(ctx SpecContext) {
		ns := newNamespace(ctx, "generated")
		// No placementRef: the manager creates an empty Placement of the PlacementManifestWork's name, which
		// selects every cluster of the sets bound to the namespace.
		pmw := framework.MakePMW("keep", ns).Manifest(deployment("keep", ns, 1, image)).Obj()
		kept := deliver(ctx, pmw)

		old := &clusterv1beta1.Placement{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: pmw.Name}, old)).To(Succeed())
		Expect(metav1.GetControllerOf(old)).To(HaveField("UID", getPMW(ctx, Default, pmw).UID), "the generated Placement's controller")
		start := time.Now()
		Expect(hub.Delete(ctx, old, client.Preconditions{UID: &old.UID})).To(Succeed())

		recreated := &clusterv1beta1.Placement{}
		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) { kept.expectKept(ctx, g, pmw) })
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: pmw.Name}, recreated)).To(Succeed())
			g.Expect(recreated.UID).NotTo(Equal(old.UID), "the manager has not created the Placement again")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		Expect(metav1.GetControllerOf(recreated)).To(HaveField("UID", getPMW(ctx, Default, pmw).UID), "the re-created Placement's controller")

		decidedAgain(ctx, pmw, kept, recreated.UID, start)
	})

	It("keeps the works while the namespace's ManagedClusterSetBinding is deleted and bound again, its decisions dropping to none", func(ctx SpecContext) {
		ns := newNamespace(ctx, "rebind")
		Expect(hub.Create(ctx, selectingPlacement("keep", ns))).To(Succeed())
		pmw := framework.MakePMW("keep", ns).Placement("keep").Manifest(deployment("keep", ns, 1, image)).Obj()
		kept := deliver(ctx, pmw)

		start := time.Now()
		binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: stack.ClusterSet, Namespace: ns}}
		Expect(hub.Delete(ctx, binding)).To(Succeed())
		// OCM decides the Placement to nothing; the works wait out the move timeout (10 minutes by default).
		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) { kept.expectKept(ctx, g, pmw) })
			var decided int
			for _, d := range placementDecisions(ctx, g, ns, "keep") {
				decided += len(d.Status.Decisions)
			}
			g.Expect(decided).To(BeZero(), "clusters decided without a ManagedClusterSetBinding")
			got := getPMW(ctx, g, pmw)
			expectCondition(g, got, workv1alpha1.ConditionPlacementVerified, metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionEmpty)
			g.Expect(got.Status.LeavingClusters).To(BeEquivalentTo(3), "status.leavingClusters")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		GinkgoWriter.Printf("the Placement was decided to no cluster %s after the binding was deleted\n", time.Since(start).Round(time.Millisecond))

		// Gone by now (the placement controller decided without it), so it is bound again as at the start.
		Expect(stk.BindClusterSet(ctx, ns)).To(Succeed())
		backAndKept(ctx, pmw, kept, start, func(g Gomega, got *workv1alpha1.PlacementManifestWork) {
			expectCondition(g, got, workv1alpha1.ConditionPlacementVerified, metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecided)
		})
	})

	It("keeps the work of a cluster whose lease expired while OCM's placement controller drops it, and when it is back", func(ctx SpecContext) {
		ns := newNamespace(ctx, "unreachable")
		Expect(hub.Create(ctx, selectingPlacement("keep", ns))).To(Succeed())
		pmw := framework.MakePMW("keep", ns).Placement("keep").Manifest(deployment("keep", ns, 1, image)).Obj()
		kept := deliver(ctx, pmw)

		away := clusters[0]
		start := time.Now()
		// What OCM's registration does when the cluster's agent stops renewing its lease: Available Unknown and
		// the unreachable taint (NoSelect), which the Placement does not tolerate.
		Expect(ocmsim.SetReachable(ctx, hub, away, false)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(ocmsim.SetReachable(ctx, hub, away, true)).To(Succeed()) })
		Eventually(func(g Gomega) {
			mustHold(func(g Gomega) { kept.expectKept(ctx, g, pmw) })
			g.Expect(decidedClusters(ctx, g, ns, "keep")).To(HaveLen(2), "OCM's placement controller drops the unreachable cluster")
			g.Expect(decidedClusters(ctx, g, ns, "keep")).NotTo(ContainElement(away))
			g.Expect(getPMW(ctx, g, pmw).Status.LeavingClusters).To(BeEquivalentTo(1), "status.leavingClusters")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		GinkgoWriter.Printf("the placement controller dropped %s %s after it became unreachable\n", away, time.Since(start).Round(time.Millisecond))
		Consistently(func(g Gomega) {
			kept.expectKept(ctx, g, pmw)
		}).WithContext(ctx).WithTimeout(holdWindow).WithPolling(poll).Should(Succeed())

		// Back: the placement controller decides it again, and its work and workload were never removed.
		start = time.Now()
		Expect(ocmsim.SetReachable(ctx, hub, away, true)).To(Succeed())
		backAndKept(ctx, pmw, kept, start, func(g Gomega, _ *workv1alpha1.PlacementManifestWork) {
			g.Expect(decidedClusters(ctx, g, ns, "keep")).To(ContainElement(away))
		})
	})
})

// decidedClusters are the clusters a Placement's PlacementDecisions name.
func decidedClusters(ctx context.Context, g Gomega, namespace, placement string) []string {
	var out []string
	for _, d := range placementDecisions(ctx, g, namespace, placement) {
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
	}
	return out
}

// placementDecisions lists a Placement's PlacementDecisions on the hub.
func placementDecisions(ctx context.Context, g Gomega, namespace, placement string) []clusterv1beta1.PlacementDecision {
	list := &clusterv1beta1.PlacementDecisionList{}
	g.Expect(hub.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement})).To(Succeed())
	return list.Items
}
