package integration

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Placement changes and the manager's own writes", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("churn")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// placed writes the Placement's status as OCM's placement controller does once it has written the
	// decisions: the selected count and the decisions of its one group.
	placed := func(selected int32, decisions ...string) {
		Eventually(func(g Gomega) {
			p := &clusterv1beta1.Placement{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "p"}, p)).To(Succeed())
			p.Status.NumberOfSelectedClusters = selected
			p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{{Decisions: decisions, ClustersCount: selected}}
			meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
				Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: "AllDecisionsScheduled",
			})
			g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	// replicas reads each cluster's Deployment replicas from the PMW's works.
	replicas := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]int64 {
		return shares(g, pmw, "Deployment", "spec", "replicas")
	}

	splitPMW := func(name string, total int) *workv1alpha1.PlacementManifestWork {
		pmw := framework.MakePMW(name, ns).Placement("p").Manifest(framework.Deployment("web", "default", total)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Deployment",
				Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		// No agent reports here: leaving works go at once, so each step's result is plain.
		pmw.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveImmediate}
		return pmw
	}

	It("acts on a Placement's decisions only once the placement controller has finished rewriting them", func() {
		c := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", c[0])
		fw.Decide(ns, "p", "p-decision-2", c[1])
		placed(2, "p-decision-1", "p-decision-2")
		pmw := splitPMW("web", 4)
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(Equal(map[string]int64{c[0]: 2, c[1]: 2}))
		}, timeout, interval).Should(Succeed())

		// The window moves from {c0, c1} to {c1, c2} one decision at a time: first both decisions hold c1. Acting
		// on that union would give c1 all 4 replicas and remove c0's work.
		fw.Decide(ns, "p", "p-decision-1", c[1])
		Consistently(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(Equal(map[string]int64{c[0]: 2, c[1]: 2}))
		}, "1s", interval).Should(Succeed())

		fw.Decide(ns, "p", "p-decision-2", c[2])
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(Equal(map[string]int64{c[1]: 2, c[2]: 2}))
		}, timeout, interval).Should(Succeed())
		// c1 kept its 2 replicas all along: its work was never rewritten.
		Expect(mgr.Recorder.Writes(func(w framework.Write) bool {
			return w.Kind == "ManifestWork" && w.Namespace == c[1] && w.Verb == "update"
		})).To(BeEmpty())
	})

	It("waits for the Placement's status when the decisions changed first", func() {
		c := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", c[0], c[1])
		placed(2, "p-decision-1")
		pmw := splitPMW("grow", 6)
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(Equal(map[string]int64{c[0]: 3, c[1]: 3}))
		}, timeout, interval).Should(Succeed())

		// Three clusters decided; the status still says two.
		Eventually(func() error {
			_, err := framework.WriteDecision(ctx, k8s, ns, "p", "p-decision-1", c...)
			return err
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(HaveLen(2))
		}, "1s", interval).Should(Succeed())
		placed(3, "p-decision-1")
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, pmw)).To(Equal(map[string]int64{c[0]: 2, c[1]: 2, c[2]: 2}))
		}, timeout, interval).Should(Succeed())
	})

	It("acts on decisions that stay inconsistent once the settle timeout passes", func() {
		c := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", c...)
		placed(1, "p-decision-1") // a status that never matches: someone other than the placement controller decides
		pmw := framework.MakePMW("stuck", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).To(BeEmpty())
		}, settleTimeout/2, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).To(HaveLen(2))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
	})

	It("caches its works without managedFields or manifests and its PlacementManifestWorks without managedFields, and its updates keep the API server's", func() {
		c := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", c...)
		pmw := framework.MakePMW("slim", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		key := client.ObjectKey{Namespace: c[0], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}
		Eventually(func(g Gomega) {
			cached := &workv1.ManifestWork{}
			g.Expect(mgr.GetCache().Get(ctx, key, cached)).To(Succeed())
			g.Expect(cached.ManagedFields).To(BeEmpty())
			g.Expect(cached.Spec.Workload.Manifests).To(BeEmpty())
			g.Expect(cached.Annotations).To(HaveKey(workv1alpha1.AnnotationSpecHash))
			cachedPMW := &workv1alpha1.PlacementManifestWork{}
			g.Expect(mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(pmw), cachedPMW)).To(Succeed())
			g.Expect(cachedPMW.Status.ObservedGeneration).To(Equal(cachedPMW.Generation))
			g.Expect(cachedPMW.ManagedFields).To(BeEmpty())
		}, timeout, interval).Should(Succeed())

		// A template change makes the manager update the work from its cached copy: the update carries every
		// manifest, and the API server keeps the work's managedFields (an update without them leaves them as
		// they are).
		updated := &workv1alpha1.PlacementManifestWork{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), updated)).To(Succeed())
		updated.Spec.ManifestWorkTemplate = framework.MakePMW("x", ns).
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
		Expect(k8s.Update(ctx, updated)).To(Succeed())
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, key, w)).To(Succeed())
			g.Expect(w.Spec.Workload.Manifests).To(HaveLen(1))
			g.Expect(string(w.Spec.Workload.Manifests[0].Raw)).To(ContainSubstring(`"v":"2"`))
			g.Expect(w.ManagedFields).NotTo(BeEmpty())
			var operations []metav1.ManagedFieldsOperationType
			for _, f := range w.ManagedFields {
				operations = append(operations, f.Operation)
			}
			g.Expect(operations).To(ContainElement(metav1.ManagedFieldsOperationUpdate))
		}, timeout, interval).Should(Succeed())
	})

	It("caches of a ManagedCluster only its labels and conditions", func() {
		c := fw.NewClusters(1)
		mc := &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: c[0], Labels: map[string]string{"region": "east"}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, ManagedClusterClientConfigs: []clusterv1.ClientConfig{
				{URL: "https://" + c[0] + ".example:6443", CABundle: []byte("not a real bundle")}}},
		}
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, mc))).To(Succeed()) })
		mc.Status.Version = clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.0"}
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: metav1.ConditionFalse, Reason: "Test", Message: "lease not renewed"})
		Expect(k8s.Status().Update(ctx, mc)).To(Succeed())

		Eventually(func(g Gomega) {
			cached := &clusterv1.ManagedCluster{}
			g.Expect(mgr.GetCache().Get(ctx, client.ObjectKeyFromObject(mc), cached)).To(Succeed())
			g.Expect(cached.Labels).To(HaveKeyWithValue("region", "east"))
			g.Expect(meta.IsStatusConditionFalse(cached.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue())
			g.Expect(cached.Spec.ManagedClusterClientConfigs).To(BeEmpty())
			g.Expect(cached.Status.Version.Kubernetes).To(BeEmpty())
			g.Expect(cached.ManagedFields).To(BeEmpty())
			// The unavailable ones are indexed, so a reconcile lists them alone.
			unavailable := &clusterv1.ManagedClusterList{}
			g.Expect(mgr.GetCache().List(ctx, unavailable, client.MatchingFields{controllers.IndexUnavailable: "true"})).To(Succeed())
			g.Expect(unavailable.Items).To(ContainElement(HaveField("Name", c[0])))
		}, timeout, interval).Should(Succeed())
	})

	It("writes each ManifestWork of a 300-cluster fan-out once, none refused", func() {
		c := fw.NewClusters(300)
		for i := range 3 {
			fw.Decide(ns, "p", fmt.Sprintf("p-decision-%d", i+1), c[i*100:(i+1)*100]...)
		}
		placed(300, "p-decision-1", "p-decision-2", "p-decision-3")
		pmw := framework.MakePMW("wide", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(300))
			g.Expect(fw.WorksByCluster(g, pmw)).To(HaveLen(300))
		}, timeout, interval).Should(Succeed())

		name := manifestwork.WorkName(manifestwork.Owner(pmw))
		writes := mgr.Recorder.Writes(func(w framework.Write) bool { return w.Kind == "ManifestWork" && w.Name == name })
		creates := map[string]int{}
		for _, w := range writes {
			Expect(w.Refused).To(BeEmpty(), "%s of %s/%s", w.Verb, w.Namespace, w.Name)
			Expect(w.Verb).To(Equal("create"))
			creates[w.Namespace]++
		}
		Expect(creates).To(HaveLen(300))
		for cluster, n := range creates {
			Expect(n).To(Equal(1), "creates in %s", cluster)
		}
	})
})
