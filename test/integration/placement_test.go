package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// A delivered ManifestWork goes only when the user's intent says so: a Placement that is briefly unknown (being
// re-created, not yet decided by OCM's placement controller, its decisions still those of an earlier Placement
// of the same name, or decided to nothing for a moment) never removes one.
var _ = Describe("Placement briefly unknown", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("unknown")
	})

	// uids are the UIDs of a PMW's works by cluster: a work deleted and created again has a new UID.
	uids := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]types.UID {
		out := map[string]types.UID{}
		for c, w := range fw.WorksByCluster(g, pmw) {
			out[c] = w.UID
		}
		return out
	}

	// delivered creates the PMW and waits for one work per cluster; it returns their UIDs.
	delivered := func(pmw *workv1alpha1.PlacementManifestWork, clusters []string) map[string]types.UID {
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		var out map[string]types.UID
		Eventually(func(g Gomega) {
			out = uids(g, pmw)
			g.Expect(out).To(HaveLen(len(clusters)))
			for _, c := range clusters {
				g.Expect(out).To(HaveKey(c))
			}
		}, timeout, interval).Should(Succeed())
		return out
	}

	// kept checks for a while that the PMW's works are exactly the given ones, none deleted or replaced, and
	// that PlacementVerified says why with the given reason.
	kept := func(pmw *workv1alpha1.PlacementManifestWork, want map[string]types.UID, reason string) {
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified)
			g.Expect(c.Reason).To(Equal(reason))
			g.Expect(c.Message).To(ContainSubstring("kept"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(uids(g, pmw)).To(Equal(want))
		}, 2*settleTimeout, interval).Should(Succeed())
	}

	// collectGarbage deletes what Kubernetes' garbage collector deletes once a Placement is gone: its decisions.
	collectGarbage := func(placement string) {
		Expect(k8s.DeleteAllOf(ctx, &clusterv1beta1.PlacementDecision{}, client.InNamespace(ns),
			client.MatchingLabels{clusterv1beta1.PlacementLabel: placement})).To(Succeed())
	}

	// deletePlacement deletes a Placement and waits until it is gone or, for a generated one, created again.
	deletePlacement := func(name string) {
		old := &clusterv1beta1.Placement{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, old)).To(Succeed())
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Eventually(func() bool {
			p := &clusterv1beta1.Placement{}
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
			return apierrors.IsNotFound(err) || (err == nil && p.UID != old.UID)
		}, timeout, interval).Should(BeTrue())
	}

	It("keeps every work while a referenced Placement is deleted and re-created, and uses it once decided", func() {
		clusters := fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).
			Move(workv1alpha1.MoveImmediate).Obj()
		before := delivered(pmw, clusters)

		// kubectl replace --force: the Placement goes, the garbage collector takes its decisions, and the new
		// Placement exists before OCM's placement controller has decided it.
		deletePlacement("p")
		collectGarbage("p")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		kept(pmw, before, workv1alpha1.ReasonPlacementNotDecided)
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(3), "status describes the kept works")
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse), "nothing for the user to do")
		}, timeout, interval).Should(Succeed())

		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		Eventually(func(g Gomega) {
			g.Expect(uids(g, pmw)).To(Equal(map[string]types.UID{clusters[0]: before[clusters[0]], clusters[1]: before[clusters[1]]}),
				"a real shrink, once decided, removes the work of the cluster that left")
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified).Reason).To(Equal(workv1alpha1.ReasonPlacementDecided))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps every work while the decisions still belong to the deleted Placement of the same name", func() {
		clusters := fw.NewClusters(2)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		before := delivered(pmw, clusters)

		// Re-created before the garbage collector ran: OCM's placement controller reuses the old decision by name
		// (it updates its status, not its owner) and writes the new Placement's status.
		deletePlacement("p")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1")
		kept(pmw, before, workv1alpha1.ReasonPlacementNotDecided)

		// The garbage collector removes the old decision; the placement controller writes it anew.
		collectGarbage("p")
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified).Reason).To(Equal(workv1alpha1.ReasonPlacementDecided))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(uids(g, pmw)).To(Equal(before))
		}, settleTimeout, interval).Should(Succeed())
	})

	It("keeps every work when the user deletes the generated Placement, which the manager creates again", func() {
		clusters := fw.NewClusters(2)
		pmw := framework.MakePMW("gen", ns).Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gen"}, &clusterv1beta1.Placement{})
		}, timeout, interval).Should(Succeed())
		fw.Decide(ns, "gen", "gen-decision-1", clusters...)
		var before map[string]types.UID
		Eventually(func(g Gomega) {
			before = uids(g, pmw)
			g.Expect(before).To(HaveLen(2))
		}, timeout, interval).Should(Succeed())

		deletePlacement("gen")
		collectGarbage("gen")
		kept(pmw, before, workv1alpha1.ReasonPlacementNotDecided)
		fw.Decide(ns, "gen", "gen-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified).Reason).To(Equal(workv1alpha1.ReasonPlacementDecided))
			g.Expect(uids(g, pmw)).To(Equal(before))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the works of a PlacementManifestWork re-created at once while the old generated Placement is collected", func() {
		clusters := fw.NewClusters(2)
		pmw := framework.MakePMW("again", ns).Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "again"}, &clusterv1beta1.Placement{})
		}, timeout, interval).Should(Succeed())
		fw.Decide(ns, "again", "again-decision-1", clusters...)
		Eventually(func(g Gomega) { g.Expect(uids(g, pmw)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())

		// Deleted (its works go: the user's intent) and created again under the same name at once: it finds the
		// old generated Placement, decided, owned by the old PlacementManifestWork.
		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{}))
		}, timeout, interval).Should(BeTrue())
		again := framework.MakePMW("again", ns).Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		before := delivered(again, clusters)

		// Then the garbage collector deletes the old Placement and its decisions; the manager creates the
		// Placement again, which OCM's placement controller has yet to decide.
		deletePlacement("again")
		collectGarbage("again")
		kept(again, before, workv1alpha1.ReasonPlacementNotDecided)
		fw.Decide(ns, "again", "again-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, again, workv1alpha1.ConditionPlacementVerified).Reason).To(Equal(workv1alpha1.ReasonPlacementDecided))
			g.Expect(uids(g, again)).To(Equal(before))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the works of a decision that the Placement's status names but that is missing, however long", func() {
		clusters := fw.NewClusters(2)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[0])
		fw.Decide(ns, "p", "p-decision-2", clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).
			Move(workv1alpha1.MoveImmediate).Obj()
		before := delivered(pmw, clusters)

		// Someone deletes the second decision; the placement controller has not written it again.
		Expect(k8s.Delete(ctx, framework.Decision("p-decision-2", ns, "p"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionPlacementVerified).Message).To(ContainSubstring("p-decision-2"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(uids(g, pmw)).To(Equal(before)) }, 2*settleTimeout, interval).Should(Succeed())
	})

	It("forgets a PlacementManifestWork deleted with its finalizer removed by hand: no metric series stays", func() {
		clusters := fw.NewClusters(1)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("forced", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		delivered(pmw, clusters)
		series := map[string]string{"namespace": ns, "name": "forced"}
		Eventually(func() float64 { return fw.Gauge("placementmanifestwork_manifestworks", series) }, timeout, interval).Should(BeEquivalentTo(1))

		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			cur.Finalizers = nil
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		Eventually(func() float64 { return fw.Gauge("placementmanifestwork_manifestworks", series) }, timeout, interval).Should(BeEquivalentTo(-1))
		Eventually(func() float64 {
			return fw.Gauge("placementmanifestwork_clusters", map[string]string{"namespace": ns, "name": "forced", "health": "progressing"})
		}, timeout, interval).Should(BeEquivalentTo(-1))
	})

	It("keeps the works while the decisions drop to nothing for a moment, and removes them once that lasts beyond the move timeout", func() {
		clusters := fw.NewClusters(2)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		pmw.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveMakeBeforeBreak, Timeout: &metav1.Duration{Duration: 3 * settleTimeout}}
		before := delivered(pmw, clusters)

		// A ManagedClusterSetBinding re-created, say: the placement controller decides nothing, then decides again.
		fw.Decide(ns, "p", "p-decision-1")
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.LeavingClusters).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(uids(g, pmw)).To(Equal(before)) }, settleTimeout, interval).Should(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.LeavingClusters).To(BeZero())
			g.Expect(uids(g, pmw)).To(Equal(before))
		}, timeout, interval).Should(Succeed())

		// Nothing decided for longer than the move timeout is the user's intent: the works go.
		start := time.Now()
		fw.Decide(ns, "p", "p-decision-1")
		Eventually(func(g Gomega) { g.Expect(uids(g, pmw)).To(BeEmpty()) }, timeout, interval).Should(Succeed())
		Expect(time.Since(start)).To(BeNumerically(">=", 3*settleTimeout-time.Second))
	})
})
