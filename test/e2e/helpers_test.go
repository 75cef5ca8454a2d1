//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
)

// newNamespace creates a namespace on the hub, bound to the clusterset, and the namespace of the same name on
// every spoke for the manifests to land in (the templates carry no Namespace manifest).
func newNamespace(ctx context.Context, prefix string) string {
	ns := fmt.Sprintf("%s-%s", prefix, rand.String(5))
	Expect(stk.BindClusterSet(ctx, ns)).To(Succeed())
	for _, c := range stk.Spokes {
		Expect(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	// ServiceAccount admission refuses pods until kube-controller-manager has created the default account;
	// waiting here keeps that out of the scenarios' convergence times.
	Eventually(func(g Gomega) {
		for _, c := range stk.Spokes {
			g.Expect(c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})).To(Succeed())
		}
	}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	return ns
}

// selectingPlacement selects the clusters of the e2e set that carry selectedLabel.
func selectingPlacement(name, namespace string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1beta1.PlacementSpec{
			ClusterSets: []string{stack.ClusterSet},
			Predicates: []clusterv1beta1.ClusterPredicate{{
				RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{selectedLabel: selectedValue}},
				},
			}},
		},
	}
}

// setSelected adds or removes selectedLabel on a ManagedCluster.
func setSelected(ctx context.Context, cluster string, selected bool) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		if selected {
			mc.Labels[selectedLabel] = selectedValue
		} else {
			delete(mc.Labels, selectedLabel)
		}
		return hub.Update(ctx, mc)
	})).To(Succeed())
}

// deployment is a Deployment manifest; kwok runs any image.
func deployment(name, namespace string, replicas int, image string) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": image, "ports": []any{map[string]any{"containerPort": 8080}}},
				}},
			},
		},
	}
}

// service is a ClusterIP Service in front of the Deployment of the same name.
func service(name, namespace string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"selector": map[string]any{"app": name},
			"ports":    []any{map[string]any{"port": 80, "targetPort": 8080}},
		},
	}
}

// getPMW reads the PlacementManifestWork afresh.
func getPMW(ctx context.Context, g Gomega, pmw *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
	got := &workv1alpha1.PlacementManifestWork{}
	g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pmw), got)).To(Succeed())
	return got
}

// updateTemplate replaces the PlacementManifestWork's manifests and returns its new generation.
func updateTemplate(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, manifests []workv1.Manifest) int64 {
	var generation int64
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &workv1alpha1.PlacementManifestWork{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(pmw), got); err != nil {
			return err
		}
		got.Spec.ManifestWorkTemplate.Workload.Manifests = manifests
		if err := hub.Update(ctx, got); err != nil {
			return err
		}
		generation = got.Generation
		return nil
	})).To(Succeed())
	return generation
}

// deletePMW deletes the PlacementManifestWork and waits until it is gone, which the manager allows only once
// every agent has removed its workloads.
func deletePMW(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) {
	Expect(client.IgnoreNotFound(hub.Delete(ctx, pmw))).To(Succeed())
	Eventually(func(g Gomega) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is still there: %v", err)
	}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
}

// works lists the PlacementManifestWork's ManifestWorks on the hub.
func works(ctx context.Context, g Gomega, pmw *workv1alpha1.PlacementManifestWork) []workv1.ManifestWork {
	list := &workv1.ManifestWorkList{}
	g.Expect(hub.List(ctx, list, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	})).To(Succeed())
	return list.Items
}

// spokeDeployment reads a Deployment on a spoke.
func spokeDeployment(ctx context.Context, g Gomega, cluster, namespace, name string) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(stk.Spoke(cluster).Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d)).
		To(Succeed(), "Deployment %s/%s on %s", namespace, name, cluster)
	return d
}

// expectRolledOut asserts that a spoke's Deployment has the given replicas and image and that its rollout is
// complete: every replica updated, ready and available, and no old pod left.
func expectRolledOut(g Gomega, cluster string, d *appsv1.Deployment, replicas int32, image string) {
	g.Expect(d.Spec.Replicas).To(HaveValue(Equal(replicas)), "spec.replicas of the Deployment on %s", cluster)
	g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(image), "image of the Deployment on %s", cluster)
	g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation), "the Deployment controller of %s has not seen the change", cluster)
	st := d.Status
	g.Expect([]int32{st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas}).
		To(HaveEach(replicas), "status replicas/updated/ready/available of the Deployment on %s", cluster)
}

// readyPods counts the Ready, not terminating pods of an app on a spoke: kwok's work, seen directly.
func readyPods(ctx context.Context, g Gomega, cluster, namespace, app string) int32 {
	pods := &corev1.PodList{}
	g.Expect(stk.Spoke(cluster).Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"app": app})).To(Succeed())
	var n int32
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

// expectGone asserts that none of the objects (named, of the namespace) exists on the spoke, and that no pod of
// app is left.
func expectGone(ctx context.Context, g Gomega, cluster, namespace, app string, objs ...client.Object) {
	c := stk.Spoke(cluster).Client
	for _, o := range objs {
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: o.GetName()}, o)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s/%s on %s: still there (%v)", o, namespace, o.GetName(), cluster, err)
	}
	pods := &corev1.PodList{}
	g.Expect(c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"app": app})).To(Succeed())
	g.Expect(pods.Items).To(BeEmpty(), "pods of %s on %s", app, cluster)
}

// expectAllAvailable asserts the hub's view for the current generation: each of total clusters applied and
// available (from the agents' feedback), none progressing or degraded, and Ready.
func expectAllAvailable(g Gomega, pmw *workv1alpha1.PlacementManifestWork, total int32) {
	st := pmw.Status
	g.Expect(st.ObservedGeneration).To(Equal(pmw.Generation), "status.observedGeneration")
	g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{
		Total: total, Applied: total, Available: total,
	}), "status.placedManifestWorkSummary")
	ready := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady)
	g.Expect(ready).NotTo(BeNil(), "the Ready condition")
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s", ready.Message)
	g.Expect(ready.ObservedGeneration).To(Equal(pmw.Generation), "Ready's observedGeneration")
}

// manifestSummary finds a manifest's entry in status.manifests, failing when there is none.
func manifestSummary(g Gomega, pmw *workv1alpha1.PlacementManifestWork, kind, name string) workv1alpha1.ManifestSummary {
	for _, m := range pmw.Status.Manifests {
		if m.Kind == kind && m.Name == name {
			return m
		}
	}
	g.Expect(pmw.Status.Manifests).To(ContainElement(HaveField("Name", name)), "status.manifests has no %s %s", kind, name)
	return workv1alpha1.ManifestSummary{}
}

// expectHealthy asserts that a manifest is healthy on n clusters and nowhere progressing or degraded.
func expectHealthy(g Gomega, m workv1alpha1.ManifestSummary, n int32) {
	g.Expect([]int32{m.Healthy, m.Progressing, m.Degraded}).To(Equal([]int32{n, 0, 0}),
		"healthy/progressing/degraded of %s %s in status.manifests", m.Kind, m.Name)
}

// expectFeedback asserts one summed feedback value of a manifest and how many clusters reported it.
func expectFeedback(g Gomega, m workv1alpha1.ManifestSummary, name string, value int64, clusters int32) {
	g.Expect(m.Feedback).To(ContainElement(workv1alpha1.FeedbackSum{Name: name, Value: value, Clusters: clusters}),
		"feedback %q of %s %s in status.manifests", name, m.Kind, m.Name)
}

// expectCondition asserts one condition of the PlacementManifestWork's status, for its current generation.
func expectCondition(g Gomega, pmw *workv1alpha1.PlacementManifestWork, conditionType string, status metav1.ConditionStatus, reason string) {
	c := meta.FindStatusCondition(pmw.Status.Conditions, conditionType)
	g.Expect(c).NotTo(BeNil(), "the %s condition", conditionType)
	g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{string(status), reason}), "%s: %s", conditionType, c.Message)
	g.Expect(c.ObservedGeneration).To(Equal(pmw.Generation), "%s's observedGeneration", conditionType)
}

// mustHold checks, inside an Eventually, something that must hold all along, not only in the end: when it
// fails, the Eventually fails at once instead of polling on to its timeout.
func mustHold(check func(g Gomega)) {
	if err := InterceptGomegaFailure(func() { check(Default) }); err != nil {
		StopTrying("something that must hold throughout failed").Wrap(err).Now()
	}
}

// delivered records what a PlacementManifestWork has delivered, by cluster: the UID of its ManifestWork on the
// hub and of one Deployment on the spoke. A ManifestWork deleted and created again, or a workload the agent
// removed and applied again, gets a new UID.
type delivered struct {
	namespace, deployment string
	works, deployments    map[string]types.UID
}

// recordDelivered records the ManifestWorks and Deployments of every cluster.
func recordDelivered(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, deployment string) delivered {
	d := delivered{namespace: pmw.Namespace, deployment: deployment, works: map[string]types.UID{}, deployments: map[string]types.UID{}}
	for _, w := range works(ctx, Default, pmw) {
		d.works[w.Namespace] = w.UID
	}
	Expect(d.works).To(HaveLen(len(clusters)), "ManifestWorks on the hub")
	for _, c := range clusters {
		d.deployments[c] = spokeDeployment(ctx, Default, c, d.namespace, deployment).UID
	}
	return d
}

// expectKept asserts that every recorded ManifestWork and Deployment is still there, the same object (same UID)
// and not being deleted.
func (d delivered) expectKept(ctx context.Context, g Gomega, pmw *workv1alpha1.PlacementManifestWork) {
	got := map[string]types.UID{}
	for _, w := range works(ctx, g, pmw) {
		g.Expect(w.DeletionTimestamp).To(BeNil(), "the ManifestWork of %s is being deleted", w.Namespace)
		got[w.Namespace] = w.UID
	}
	g.Expect(got).To(Equal(d.works), "UIDs of the ManifestWorks on the hub, by cluster: a work was deleted or created again")
	for c, uid := range d.deployments {
		dep := spokeDeployment(ctx, g, c, d.namespace, d.deployment)
		g.Expect(dep.UID).To(Equal(uid), "the Deployment on %s was deleted and created again", c)
		g.Expect(dep.DeletionTimestamp).To(BeNil(), "the Deployment on %s is being deleted", c)
	}
}

// condition returns one condition of the PlacementManifestWork's status, or nil.
func condition(pmw *workv1alpha1.PlacementManifestWork, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(pmw.Status.Conditions, conditionType)
}
