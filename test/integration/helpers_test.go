package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// Helpers of the rollout specs (gates, rollbacks, disruption budget). Those that act on a hub take its
// framework: fw, the suite's, or one a spec starts for itself (ownHub).

var (
	// agentUp is what a work agent reports of a work it applied and that is available; agentDown of one it
	// failed to apply.
	agentUp   = map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue}
	agentDown = map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionFalse, workv1.WorkAvailable: metav1.ConditionFalse}
)

// placedNamespace is a new namespace on f's hub with the Placement "p" the specs' PlacementManifestWorks name.
func placedNamespace(ctx context.Context, f *suite.Framework, prefix string) string {
	ns := f.NewNamespace(prefix)
	Expect(f.Client.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	return ns
}

// configMapPMW is a PlacementManifestWork of the Placement "p" whose one manifest is the ConfigMap
// default/cfg with the data v: v.
func configMapPMW(name, ns, v string) *workv1alpha1.PlacementManifestWork {
	return framework.MakePMW(name, ns).Placement("p").
		Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj()
}

// configMapTemplate2 is the work template of a configMapPMW with the value "2": the change the specs roll out.
func configMapTemplate2(ns string) workv1.ManifestWorkSpec {
	return configMapPMW("x", ns, "2").Spec.ManifestWorkTemplate
}

// configMapValues are, per cluster, the value v of the ConfigMap, the PMW's one manifest, in the cluster's work.
func configMapValues(g Gomega, f *suite.Framework, pmw *workv1alpha1.PlacementManifestWork) map[string]string {
	out := map[string]string{}
	for c, w := range f.WorksByCluster(g, pmw) {
		obj := map[string]any{}
		g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		data, _ := obj["data"].(map[string]any)
		out[c], _ = data["v"].(string)
	}
	return out
}

// carrying is what configMapValues should be: pairs of a value and the clusters that carry it, such as
// carrying("1", []string{a, b}, "2", []string{c}).
func carrying(pairs ...any) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(pairs); i += 2 {
		for _, c := range pairs[i+1].([]string) {
			out[c] = pairs[i].(string)
		}
	}
	return out
}

// reportAvailable plays the clusters' work agents: the PMW's works are applied and available.
func reportAvailable(f *suite.Framework, pmw *workv1alpha1.PlacementManifestWork, clusters ...string) {
	for _, c := range clusters {
		f.AgentReports(pmw, c, agentUp)
	}
}

// deploymentFeedback sets on w the status feedback an agent reports of the Deployment, its first manifest:
// observed, share replicas updated, available of them ready and available.
func deploymentFeedback(w *workv1.ManifestWork, share, available int) {
	framework.Feedback(w, 0, map[string]any{
		health.FeedbackPrefix + health.Generation: 1, health.FeedbackPrefix + health.ObservedGeneration: 1,
		health.FeedbackPrefix + health.SpecReplicas: share,
		health.FeedbackPrefix + health.Replicas:     share, health.FeedbackPrefix + health.UpdatedReplicas: share,
		health.FeedbackPrefix + health.ReadyReplicas: available, health.FeedbackPrefix + health.AvailableReplicas: available,
	})
}

// completedOn waits until every cluster's work carries v, plays the agents (applied and available) and waits
// until the current revision completed. It returns the template hash the works carry.
func completedOn(f *suite.Framework, pmw *workv1alpha1.PlacementManifestWork, clusters []string, v string) string {
	Eventually(func(g Gomega) { g.Expect(configMapValues(g, f, pmw)).To(Equal(carrying(v, clusters))) }, timeout, interval).Should(Succeed())
	reportAvailable(f, pmw, clusters...)
	Eventually(func(g Gomega) {
		cur := f.Current(g, pmw)
		g.Expect(cur.Status.CompletedRevision).NotTo(BeNil())
		g.Expect(cur.Status.CompletedRevision).To(Equal(cur.Status.CurrentRevision))
	}, timeout, interval).Should(Succeed())
	var hash string
	Eventually(func(g Gomega) {
		hash = f.WorksByCluster(g, pmw)[clusters[0]].Annotations[workv1alpha1.AnnotationTemplateHash]
		g.Expect(hash).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())
	return hash
}

// eventReasons are the reasons of the events of the suite's hub about the object name in the namespace ns.
func eventReasons(ctx context.Context, g Gomega, ns, name string) []string {
	list := &eventsv1.EventList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
