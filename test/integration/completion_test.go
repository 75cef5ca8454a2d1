package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Completion", func() {
	var (
		ctx      context.Context
		ns       string
		clusters []string
	)
	T := metav1.ConditionTrue
	completed := map[string]any{health.Succeeded: 1, health.Complete: "True"}
	failed := map[string]any{health.Failed: 6, health.FailedCondition: "True"}
	running := map[string]any{health.Active: 1}

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("completion")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		clusters = fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
	})

	// splitJob is a PMW splitting a Job's parallelism of 2 across the clusters, beside a ConfigMap that never
	// finishes.
	splitJob := func(name string) *workv1alpha1.PlacementManifestWork {
		return framework.MakePMW(name, ns).Placement("p").
			Manifest(framework.Job("crunch", "default", 2)).
			Manifest(framework.ConfigMap("cfg", "default", nil)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "crunch", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
	}

	// report acts as the work agent of one cluster: it applies the current generation of the work and reports
	// the Job's feedback.
	report := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, job map[string]any) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
			prefixed := map[string]any{}
			for k, v := range job {
				prefixed[health.FeedbackPrefix+k] = v
			}
			framework.Feedback(w, 0, prefixed)
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	completedCondition := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) *metav1.Condition {
		return fw.Condition(g, pmw, workv1alpha1.ConditionCompleted)
	}

	It("reports a split Job running, then completed on every cluster, and Ready", func() {
		pmw := splitJob("job")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		report(pmw, clusters[0], completed)
		report(pmw, clusters[1], running)
		Eventually(func(g Gomega) {
			c := completedCondition(g, pmw)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRunning))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Completion).NotTo(BeNil())
			g.Expect(st.Completion.Completed).To(BeEquivalentTo(1))
			g.Expect(st.Completion.FinishedTime).To(BeNil())
		}, timeout, interval).Should(Succeed())

		report(pmw, clusters[1], completed)
		Eventually(func(g Gomega) {
			c := completedCondition(g, pmw)
			g.Expect(c.Status).To(Equal(T))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonAllClustersCompleted))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Completion.Completed).To(BeEquivalentTo(2))
			g.Expect(st.Completion.Failed).To(BeEquivalentTo(0))
			g.Expect(st.Completion.ObservedGeneration).To(Equal(pmw.Generation))
			g.Expect(st.Completion.FinishedTime).NotTo(BeNil())
			g.Expect(st.Completion.WorksRemovedTime).To(BeNil())
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		// Without a TTL the works stay.
		Consistently(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(2))
		}, 2*time.Second, interval).Should(Succeed())
	})

	It("reports ClustersFailed when every cluster finished and one failed", func() {
		pmw := splitJob("job")
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		report(pmw, clusters[0], completed)
		report(pmw, clusters[1], failed)
		Eventually(func(g Gomega) {
			c := completedCondition(g, pmw)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonClustersFailed))
			g.Expect(c.Message).To(ContainSubstring(clusters[1]))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Completion.Completed).To(BeEquivalentTo(1))
			g.Expect(st.Completion.Failed).To(BeEquivalentTo(1))
			g.Expect(st.Completion.FinishedTime).NotTo(BeNil())
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)).To(BeFalse())
		}, timeout, interval).Should(Succeed())
	})

	It("reports no completion for a template without manifests that finish", func() {
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.Deployment("web", "default", 2)).Obj()
		pmw.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(2))
			st := fw.Current(g, pmw).Status
			g.Expect(meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionPlacementVerified)).NotTo(BeNil())
			g.Expect(meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionCompleted)).To(BeNil())
			g.Expect(st.Completion).To(BeNil())
		}, timeout, interval).Should(Succeed())
	})

	It("removes the works ttlSecondsAfterFinished after the run finished, keeps the result, and runs a new template again", func() {
		pmw := splitJob("job")
		pmw.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		for _, c := range clusters {
			report(pmw, c, completed)
		}
		var finished metav1.Time
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.Completion).NotTo(BeNil())
			g.Expect(st.Completion.FinishedTime).NotTo(BeNil())
			finished = *st.Completion.FinishedTime
		}, timeout, interval).Should(Succeed())

		// The works go once the TTL has passed; the status keeps the result.
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
		var kept workv1alpha1.PlacementManifestWorkStatus
		Eventually(func(g Gomega) {
			st := fw.Current(g, pmw).Status
			g.Expect(st.Completion.WorksRemovedTime).NotTo(BeNil())
			g.Expect(st.Completion.WorksRemovedTime.Sub(finished.Time)).To(BeNumerically(">=", 2*time.Second))
			g.Expect(st.Completion.Completed).To(BeEquivalentTo(2))
			g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}))
			c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionCompleted)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(T))
			g.Expect(c.Message).To(ContainSubstring("removed"))
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
			kept = st
		}, timeout, interval).Should(Succeed())

		// They stay gone for this generation, whatever wakes the PlacementManifestWork, and the status stays.
		fw.Decide(ns, "p", "p-decision-1", append(clusters, fw.NewClusters(1)...)...)
		Consistently(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(BeEmpty())
			g.Expect(fw.Current(g, pmw).Status).To(Equal(kept))
		}, 3*time.Second, interval).Should(Succeed())

		// A new template runs again.
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			next := framework.MakePMW(p.Name, p.Namespace).Manifest(framework.Job("crunch", "default", 3)).
				Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
			p.Spec.ManifestWorkTemplate.Workload = next.Spec.ManifestWorkTemplate.Workload
		})
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(3))
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Completion).NotTo(BeNil())
			g.Expect(cur.Status.Completion.ObservedGeneration).To(Equal(cur.Generation))
			g.Expect(cur.Status.Completion.WorksRemovedTime).To(BeNil())
			c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionCompleted)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRunning))
		}, timeout, interval).Should(Succeed())
	})
})
