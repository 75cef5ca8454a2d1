package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// decidedAs reads the hub, except that one PlacementDecision holds the given clusters and the Placement's status
// says so: the hub as it will be once OCM's placement controller has written them. A preview through it is of
// a decision change the manager has not seen yet.
type decidedAs struct {
	client.Reader
	namespace, placement, decision string
	clusters                       []string
}

func (d decidedAs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := d.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	if l, ok := list.(*clusterv1beta1.PlacementDecisionList); ok {
		for i := range l.Items {
			if l.Items[i].Namespace == d.namespace && l.Items[i].Name == d.decision {
				framework.SetDecisions(&l.Items[i], d.clusters...)
			}
		}
	}
	return nil
}

func (d decidedAs) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := d.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if p, ok := obj.(*clusterv1beta1.Placement); ok && p.Namespace == d.namespace && p.Name == d.placement {
		decisions := &clusterv1beta1.PlacementDecisionList{}
		if err := d.List(ctx, decisions, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
			return err
		}
		p.Status = ocmsim.PlacementStatus(p.Status, decisions.Items)
	}
	return nil
}

var _ = Describe("Preview (kubectl pmw plan)", func() {
	var (
		ctx context.Context
		ns  string
	)
	T, F := metav1.ConditionTrue, metav1.ConditionFalse

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("preview")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// join creates the clusters' ManagedClusters, available, with the given labels.
	join := func(clusters []string, labels []map[string]string) {
		for i, c := range clusters {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c, Labels: labels[i]}}
			Expect(k8s.Create(ctx, mc)).To(Succeed())
			mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: T,
				Reason: "Test", Message: "set by the test", LastTransitionTime: metav1.Now()}}
			Expect(k8s.Status().Update(ctx, mc)).To(Succeed())
		}
	}
	// web is the PlacementManifestWork of the spec: a Deployment of 6 replicas with the image, split across the
	// clusters, and an override that gives the clusters labelled region=eu a mirror registry.
	web := func(image, mirror string) *workv1alpha1.PlacementManifestWork {
		d := framework.Deployment("web", "default", 6)
		d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = image
		return framework.MakePMW("web", ns).Placement("p").Manifest(d).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).
			Overrides(workv1alpha1.ClusterOverride{Name: "eu-mirror",
				Clusters: &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}},
				Image:    &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Value: mirror}}}).Obj()
	}
	preview := func(reader client.Reader, pmw *workv1alpha1.PlacementManifestWork) *controllers.PreviewResult {
		res, err := controllers.Preview(ctx, reader, pmw, controllers.PreviewOptions{})
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("Preview:\n")
		Expect(res.Print(GinkgoWriter, "text")).To(Succeed())
		return res
	}
	actions := func(res *controllers.PreviewResult) map[string]controllers.PreviewAction {
		out := map[string]controllers.PreviewAction{}
		for _, c := range res.Clusters {
			out[c.Cluster] = c.Action
		}
		return out
	}
	first := func(res *controllers.PreviewResult) []string {
		var out []string
		for _, c := range res.Clusters {
			if c.RolloutFirst {
				out = append(out, c.Cluster)
			}
		}
		return out
	}
	clusterOf := func(res *controllers.PreviewResult, cluster string) controllers.ClusterPreview {
		for _, c := range res.Clusters {
			if c.Cluster == cluster {
				return c
			}
		}
		Fail("no cluster " + cluster + " in the preview")
		return controllers.ClusterPreview{}
	}

	// workWrites are the manager's writes of the PlacementManifestWork's works, as "<verb> <cluster>".
	workWrites := func(pmw *workv1alpha1.PlacementManifestWork) []string {
		name := manifestwork.WorkName(manifestwork.Owner(pmw))
		var out []string
		for _, w := range mgr.WorkWrites() {
			if w.Name == name && w.Refused == "" {
				out = append(out, w.Verb+" "+w.Namespace)
			}
		}
		return out
	}
	// previewedWrites are the writes the preview says the manager makes.
	previewedWrites := func(res *controllers.PreviewResult) []string {
		verbs := map[controllers.PreviewAction]string{controllers.ActionCreate: "create", controllers.ActionUpdate: "update", controllers.ActionDelete: "delete"}
		var out []string
		for _, c := range res.Clusters {
			if v, ok := verbs[c.Action]; ok {
				out = append(out, v+" "+c.Cluster)
			}
		}
		return out
	}
	manifests := func(g Gomega, w *workv1.ManifestWork) []any {
		out := make([]any, len(w.Spec.Workload.Manifests))
		for i, m := range w.Spec.Workload.Manifests {
			g.Expect(json.Unmarshal(m.Raw, &out[i])).To(Succeed())
		}
		return out
	}
	// undefaulted is a work's spec without the defaults the API server sets on what the manager writes.
	undefaulted := func(spec workv1.ManifestWorkSpec) workv1.ManifestWorkSpec {
		out := *spec.DeepCopy()
		for i := range out.ManifestConfigs {
			if out.ManifestConfigs[i].FeedbackScrapeType == workv1.FeedbackPollType {
				out.ManifestConfigs[i].FeedbackScrapeType = ""
			}
		}
		return out
	}
	// managerAnnotations are a work's annotations with the time of its last template change and, when uid is
	// set, an empty owner UID (a preview's of a PlacementManifestWork not created yet) replaced by it.
	managerAnnotations := func(w *workv1.ManifestWork, uid types.UID) map[string]string {
		out := map[string]string{}
		for k, v := range w.Annotations {
			out[k] = v
		}
		if _, ok := out[workv1alpha1.AnnotationUpdatedAt]; ok {
			out[workv1alpha1.AnnotationUpdatedAt] = "set"
		}
		if out[workv1alpha1.AnnotationOwnerUID] == "" && uid != "" {
			out[workv1alpha1.AnnotationOwnerUID] = string(uid)
		}
		return out
	}
	// expectWorks checks the works on the hub against the preview: a created or updated work is the preview's
	// Desired (manifests, labels, annotations: the spec hash covers the rest of the spec as the manager built
	// it), a deleted one is gone, the others are as the preview read them.
	expectWorks := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, res *controllers.PreviewResult) {
		uid := fw.Current(g, pmw).UID
		works := fw.WorksByCluster(g, pmw)
		with := 0 // the clusters that have a work after the writes
		for _, c := range res.Clusters {
			w, ok := works[c.Cluster]
			if ok {
				with++
			}
			switch c.Action {
			case controllers.ActionDelete:
				g.Expect(ok).To(BeFalse(), "cluster %s: its work is deleted", c.Cluster)
			case controllers.ActionCreate, controllers.ActionUpdate:
				g.Expect(ok).To(BeTrue(), "cluster %s: its work is written", c.Cluster)
				g.Expect(manifests(g, &w)).To(Equal(manifests(g, c.Desired)), "cluster %s: manifests", c.Cluster)
				g.Expect(undefaulted(w.Spec)).To(Equal(undefaulted(c.Desired.Spec)), "cluster %s: spec", c.Cluster)
				g.Expect(w.Labels).To(Equal(c.Desired.Labels), "cluster %s: labels", c.Cluster)
				g.Expect(managerAnnotations(&w, "")).To(Equal(managerAnnotations(c.Desired, uid)), "cluster %s: annotations", c.Cluster)
			default:
				g.Expect(ok).To(Equal(c.Live != nil), "cluster %s: %s", c.Cluster, c.Action)
				if ok {
					g.Expect(w.ResourceVersion).To(Equal(c.Live.ResourceVersion), "cluster %s: %s, not written", c.Cluster, c.Action)
				}
			}
		}
		g.Expect(works).To(HaveLen(with), "no work in a cluster the preview does not name")
	}
	// expectManagerDoes waits until the manager has made exactly the writes the preview names since it had
	// made before (no more for a while), and checks the works.
	expectManagerDoes := func(pmw *workv1alpha1.PlacementManifestWork, res *controllers.PreviewResult, before int) {
		Eventually(func(g Gomega) {
			g.Expect(workWrites(pmw)[before:]).To(ConsistOf(previewedWrites(res)))
			expectWorks(g, pmw, res)
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(workWrites(pmw)[before:]).To(ConsistOf(previewedWrites(res)))
		}, "1s", interval).Should(Succeed())
	}
	// replicasOf reads the replicas of the Deployment in a cluster's work.
	replicasOf := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) int {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		obj := map[string]any{}
		g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		return int(obj["spec"].(map[string]any)["replicas"].(float64))
	}
	// ready plays a cluster's agent: its work applied and available, the Deployment ready at the work's share.
	ready := func(pmw *workv1alpha1.PlacementManifestWork, cluster string) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			share := replicasOf(g, pmw, cluster)
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T, workv1.WorkDegraded: F})
			framework.Feedback(w, 0, map[string]any{
				health.FeedbackPrefix + health.Generation: 1, health.FeedbackPrefix + health.ObservedGeneration: 1,
				health.FeedbackPrefix + health.SpecReplicas: share,
				health.FeedbackPrefix + health.Replicas:     share, health.FeedbackPrefix + health.UpdatedReplicas: share,
				health.FeedbackPrefix + health.ReadyReplicas: share, health.FeedbackPrefix + health.AvailableReplicas: share,
			})
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	// settled waits until the manager has judged the current spec and every cluster ready.
	settled := func(pmw *workv1alpha1.PlacementManifestWork, clusters int) {
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.PlacedManifestWorkSummary.Available).To(BeEquivalentTo(clusters))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionReady).Status).To(Equal(T))
		}, timeout, interval).Should(Succeed())
	}

	It("shows what the manager then writes: a split with an override by label created, changed under a progressive rollout, and a cluster leaving", func() {
		clusters := fw.NewClusters(3)
		join(clusters, []map[string]string{{"region": "eu"}, {"region": "us"}, {"region": "eu"}})
		fw.Decide(ns, "p", "p-decision-1", clusters...)

		By("a new PlacementManifestWork: three works created, two with the mirror")
		pmw := web("registry.example/app:1", "eu.mirror.example.com")
		res := preview(k8s, pmw)
		Expect(res.Exists).To(BeFalse())
		Expect(res.Invalid).To(BeNil())
		Expect(res.Decided).To(Equal(clusters))
		Expect(actions(res)).To(Equal(map[string]controllers.PreviewAction{
			clusters[0]: controllers.ActionCreate, clusters[1]: controllers.ActionCreate, clusters[2]: controllers.ActionCreate}))
		Expect(first(res)).To(Equal(clusters))
		for i, c := range clusters {
			Expect(clusterOf(res, c).Shares).To(Equal(map[string]int32{"Deployment.apps default/web .spec.replicas": 2}))
			if i == 1 {
				Expect(clusterOf(res, c).Overrides).To(BeEmpty())
			} else {
				Expect(clusterOf(res, c).Overrides).To(Equal([]string{"eu-mirror"}))
			}
		}
		before := len(workWrites(pmw))
		Expect(k8s.Create(ctx, pmw.DeepCopy())).To(Succeed())
		expectManagerDoes(pmw, res, before)
		for _, c := range clusters {
			ready(pmw, c)
		}
		settled(pmw, 3)

		By("an unchanged spec: nothing to write")
		res = preview(k8s, pmw)
		Expect(res.Exists).To(BeTrue())
		Expect(res.SpecChanged).To(BeFalse())
		Expect(actions(res)).To(HaveEach(controllers.ActionUnchanged))

		By("a new image and another mirror, rolled out one cluster at a time: the first updated, the others held")
		changed := web("registry.example/app:2", "mirror.eu.example.com")
		changed.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
		res = preview(k8s, changed)
		Expect(res.Exists).To(BeTrue())
		Expect(res.SpecChanged).To(BeTrue())
		Expect(actions(res)).To(Equal(map[string]controllers.PreviewAction{
			clusters[0]: controllers.ActionUpdate, clusters[1]: controllers.ActionHeld, clusters[2]: controllers.ActionHeld}))
		Expect(first(res)).To(Equal([]string{clusters[0]}))
		Expect(clusterOf(res, clusters[0]).Diff).To(And(
			ContainSubstring("\n-      - image: eu.mirror.example.com/app:1\n"),
			ContainSubstring("\n+      - image: mirror.eu.example.com/app:2\n")))
		Expect(clusterOf(res, clusters[1]).Diff).To(And(
			ContainSubstring("\n-      - image: registry.example/app:1\n"),
			ContainSubstring("\n+      - image: registry.example/app:2\n")))
		before = len(workWrites(pmw))
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) { p.Spec = changed.Spec })
		expectManagerDoes(pmw, res, before)

		By("the rollout goes on as each cluster becomes ready: each held cluster gets what the preview showed")
		for _, c := range clusters {
			Eventually(func(g Gomega) {
				w, desired := fw.WorksByCluster(g, pmw)[c], clusterOf(res, c).Desired
				g.Expect(manifests(g, &w)).To(Equal(manifests(g, desired)))
				g.Expect(undefaulted(w.Spec)).To(Equal(undefaulted(desired.Spec)))
				g.Expect(managerAnnotations(&w, "")).To(Equal(managerAnnotations(desired, "")))
			}, timeout, interval).Should(Succeed())
			ready(pmw, c)
		}
		settled(pmw, 3)

		By("a cluster leaving the decisions: its share moved to the others, its work kept until they run it")
		leaving := decidedAs{Reader: k8s, namespace: ns, placement: "p", decision: "p-decision-1", clusters: clusters[:2]}
		cur := &workv1alpha1.PlacementManifestWork{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
		res = preview(leaving, cur)
		Expect(res.SpecChanged).To(BeFalse())
		Expect(res.Notes).To(BeEmpty())
		Expect(actions(res)).To(Equal(map[string]controllers.PreviewAction{
			clusters[0]: controllers.ActionUpdate, clusters[1]: controllers.ActionUpdate, clusters[2]: controllers.ActionKept}))
		Expect(first(res)).To(BeEmpty(), "a change of the shares alone is no rollout step")
		Expect(clusterOf(res, clusters[0]).Shares).To(Equal(map[string]int32{"Deployment.apps default/web .spec.replicas": 3}))
		Expect(clusterOf(res, clusters[0]).Diff).To(And(ContainSubstring("\n-  replicas: 2\n"), ContainSubstring("\n+  replicas: 3\n")))
		before = len(workWrites(pmw))
		fw.Decide(ns, "p", "p-decision-1", clusters[:2]...)
		expectManagerDoes(pmw, res, before)

		By("once the others run their new share, the leaving work is deleted")
		ready(pmw, clusters[0])
		ready(pmw, clusters[1])
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).NotTo(HaveKey(clusters[2]))
			g.Expect(fw.Current(g, pmw).Status.LeavingClusters).To(BeZero())
		}, timeout, interval).Should(Succeed())
	})
})
