package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Health", func() {
	var (
		ctx context.Context
		ns  string
	)
	T := metav1.ConditionTrue

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("health")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// report acts as the work agent of one cluster: it applies the work and reports the feedback that
	// values(share) returns for the manifest at ordinal, share being the cluster's .spec.replicas.
	report := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, ordinal int, values func(share int) map[string]any) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			obj := map[string]any{}
			g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[ordinal].Raw, &obj)).To(Succeed())
			share := 0
			if spec, ok := obj["spec"].(map[string]any); ok {
				if r, ok := spec["replicas"].(float64); ok {
					share = int(r)
				}
			}
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
			prefixed := map[string]any{}
			for k, v := range values(share) {
				prefixed[health.FeedbackPrefix+k] = v
			}
			framework.Feedback(w, ordinal, prefixed)
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	deploymentFeedback := func(ready func(share int) int) func(int) map[string]any {
		return func(share int) map[string]any {
			return map[string]any{
				health.Generation: 1, health.ObservedGeneration: 1, health.Replicas: share, health.UpdatedReplicas: share,
				health.ReadyReplicas: ready(share), health.AvailableReplicas: ready(share),
			}
		}
	}

	It("asks for feedback, keeps the user's rules, and is available only when a split Deployment's replicas are ready", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 5)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		pmw.Spec.ManifestWorkTemplate.ManifestConfigs = []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "web", Namespace: "default"},
			FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: clusters[0], Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			g.Expect(w.Spec.ManifestConfigs).To(HaveLen(1))
			rules := w.Spec.ManifestConfigs[0].FeedbackRules
			g.Expect(rules).To(HaveLen(2))
			g.Expect(rules[0].Type).To(Equal(workv1.WellKnownStatusType), "the user's rule is kept")
			g.Expect(rules[1].Type).To(Equal(workv1.JSONPathsType))
		}, timeout, interval).Should(Succeed())

		// Applied, but no replica ready: not available.
		for _, c := range clusters {
			report(pmw, c, 0, deploymentFeedback(func(int) int { return 0 }))
		}
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Progressing: 2}))
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)).To(BeFalse())
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReconciling)).To(BeTrue())
			g.Expect(st.UnhealthyClusters).To(HaveLen(2))
			g.Expect(st.UnhealthyClusters[0].Reason).To(Equal(workv1alpha1.ReasonManifestProgressing))
		}, timeout, interval).Should(Succeed())

		// Every share ready: available, Ready, and the ready replicas add up to the total.
		for _, c := range clusters {
			report(pmw, c, 0, deploymentFeedback(func(share int) int { return share }))
		}
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}))
			ready := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(T))
			g.Expect(st.UnhealthyClusters).To(BeEmpty())
			g.Expect(st.Manifests).To(HaveLen(1))
			g.Expect(st.Manifests[0].Healthy).To(BeEquivalentTo(2))
			g.Expect(st.Manifests[0].Feedback).To(ContainElement(workv1alpha1.FeedbackSum{Name: health.ReadyReplicas, Value: 5, Clusters: 2}))
		}, timeout, interval).Should(Succeed())
	})

	It("counts a failed Job as degraded, says why, and records an event", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("job", ns).Placement("p").Manifest(framework.Job("crunch", "default", 2)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		report(pmw, clusters[0], 0, func(int) map[string]any { return map[string]any{health.Succeeded: 2, health.Complete: "True"} })
		report(pmw, clusters[1], 0, func(int) map[string]any { return map[string]any{health.Failed: 6, health.FailedCondition: "True"} })
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 1, Degraded: 1}))
			g.Expect(st.UnhealthyClusters).To(ConsistOf(workv1alpha1.ClusterHealth{
				Cluster: clusters[1], State: "Degraded", Reason: workv1alpha1.ReasonManifestDegraded,
				Message: "Job.batch default/crunch: failed (6 failed pods)",
			}))
			ready := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady)
			g.Expect(ready.Reason).To(Equal(workv1alpha1.ReasonClustersDegraded))
			g.Expect(st.Manifests[0].Feedback).To(ContainElements(
				workv1alpha1.FeedbackSum{Name: health.Succeeded, Value: 2, Clusters: 1},
				workv1alpha1.FeedbackSum{Name: health.Failed, Value: 6, Clusters: 1},
			))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var reasons []string
			for _, e := range list.Items {
				if e.Regarding.Name == pmw.Name {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement("Degraded"))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.Gauge("placementmanifestwork_clusters", map[string]string{"namespace": ns, "name": "job", "health": "degraded"})).To(BeEquivalentTo(1))
			g.Expect(fw.Gauge("placementmanifestwork_clusters", map[string]string{"namespace": ns, "name": "job", "health": "available"})).To(BeEquivalentTo(1))
			g.Expect(fw.Gauge("placementmanifestwork_manifestworks", map[string]string{"namespace": ns, "name": "job"})).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		Expect(fw.HistogramCount("placementmanifestwork_fanout_duration_seconds")).To(BeNumerically(">", 0))
	})

	It("counts a cluster whose ManagedCluster is not available as degraded, and recovers with it", func() {
		clusters := fw.NewClusters(1)
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusters[0]}}
		Expect(k8s.Create(ctx, mc)).To(Succeed())
		setAvailable := func(s metav1.ConditionStatus) {
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mc), mc)).To(Succeed())
				meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
					Status: s, Reason: "Test", Message: "lease not renewed"})
				g.Expect(k8s.Status().Update(ctx, mc)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		setAvailable(T)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("cfg", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		report(pmw, clusters[0], 0, func(int) map[string]any { return nil })
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Available).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())

		setAvailable(metav1.ConditionUnknown)
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.PlacedManifestWorkSummary.Degraded).To(BeEquivalentTo(1))
			g.Expect(st.UnhealthyClusters).To(HaveLen(1))
			g.Expect(st.UnhealthyClusters[0].Reason).To(Equal(workv1alpha1.ReasonClusterUnavailable))
		}, timeout, interval).Should(Succeed())

		setAvailable(T)
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Available).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, mc))).To(Succeed())
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(mc), mc)) || mc.DeletionTimestamp != nil).To(BeTrue())
	})
})
