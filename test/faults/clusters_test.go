package faults

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// newManagedCluster registers a ManagedCluster that reports itself available, as a joined cluster does.
func newManagedCluster(name string) *clusterv1.ManagedCluster {
	ctx := context.Background()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	Expect(k8s.Create(ctx, mc)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), mc)).To(Succeed())
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "lease renewed"})
		g.Expect(k8s.Status().Update(ctx, mc)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	return mc
}

var _ = Describe("Clusters that go away", func() {
	T := metav1.ConditionTrue
	appliedAndAvailable := map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T}

	It("drops a cluster deleted from the hub while it holds a work: its work goes, the count drops, nothing errors", func(ctx SpecContext) {
		ns := fw.NewNamespace("gone")
		clusters := fw.NewClusters(3)
		mcs := make([]*clusterv1.ManagedCluster, 0, len(clusters))
		for _, c := range clusters {
			mcs = append(mcs, newManagedCluster(c))
		}
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		// The default move strategy, make before break: a leaving cluster's work is removed once no decided
		// cluster is still progressing.
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		fw.StartManager(suite.ManagerOptions{Name: "gone"})

		Eventually(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		// The agents apply the works, and hold them with their finalizer.
		for _, c := range clusters {
			fw.AgentReports(pmw, c, appliedAndAvailable)
		}
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: clusters[2], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			controllerutil.AddFinalizer(w, agentFinalizer)
			g.Expect(k8s.Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionReady).Status).To(Equal(T))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Available).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		// What OCM does when the third cluster is detached: the placement controller drops it from the
		// decisions, then the ManagedCluster and the cluster namespace are deleted. (envtest runs no namespace
		// controller, so the namespace stays Terminating with its objects, as it does on a hub until they are
		// cleaned up; the agent is gone and never removes its finalizer.)
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		Expect(k8s.Delete(ctx, mcs[2])).To(Succeed())
		Expect(k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusters[2]}})).To(Succeed())

		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}))
			g.Expect(got.Status.LeavingClusters).To(BeZero())
			ready := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionReady)
			g.Expect(ready.Status).To(Equal(T), ready.Message)
			g.Expect(meta.IsStatusConditionFalse(got.Status.Conditions, workv1alpha1.ConditionStalled)).To(BeTrue())
			// The manager deleted the work; only the agent's finalizer, which OCM's hub cleans up with the
			// cluster, keeps it.
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: clusters[2], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			g.Expect(w.DeletionTimestamp).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())

		// Nothing errors forever: the reconciles stop failing (a last one may still meet the Conflict of a status
		// update made on a cache that had not yet seen the previous one, and is retried), and the status holds.
		lastErrors, since := fw.ReconcileErrors(), time.Now()
		Eventually(func() time.Duration {
			if n := fw.ReconcileErrors(); n != lastErrors {
				lastErrors, since = n, time.Now()
			}
			return time.Since(since)
		}, timeout, interval).Should(BeNumerically(">=", 3*time.Second), "no reconcile has failed for 3s")
		Expect(fw.Condition(Default, pmw, workv1alpha1.ConditionReady).Status).To(Equal(T))

		// OCM's cleanup of the detached cluster removes the finalizer; the work is gone and nothing changes.
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: clusters[2], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			controllerutil.RemoveFinalizer(w, agentFinalizer)
			g.Expect(k8s.Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0], clusters[1]))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))

	It("reports a decided cluster without a namespace on the hub, keeps going for the others, and recovers", func(ctx SpecContext) {
		ns := fw.NewNamespace("ghost")
		clusters := fw.NewClusters(2)
		ghost := "ghost-" + rand.String(6)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[0], ghost, clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		fw.StartManager(suite.ManagerOptions{Name: "ghost"})

		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters), "the other clusters get their works")
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(3))
			applied := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(applied).NotTo(BeNil())
			g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(applied.Reason).To(Equal(workv1alpha1.ReasonWriteFailed))
			g.Expect(applied.Message).To(ContainSubstring(ghost), "the message names the missing namespace")
			ready := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionReady)
			g.Expect(ready.Reason).To(Equal(workv1alpha1.ReasonWriteFailed))
		}, timeout, interval).Should(Succeed())

		// The namespace appears (the cluster finished registering): the retries, with backoff, deliver the work.
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ghost}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0], clusters[1], ghost))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonWaitingForApply), c.Message)
		}, longTimeout, interval).Should(Succeed())

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(2*longTimeout))
})
