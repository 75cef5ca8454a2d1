//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// A template change whose new pods a spoke refuses: a ResourceQuota there leaves no room for the surge pod of
// the rolling update, so the spoke's ReplicaSet controller cannot create it (FailedCreate), the new ReplicaSet
// and then the Deployment get ReplicaFailure=True, and the old pod keeps serving. The Deployment never becomes
// available on the new template there, and a progressive rollout that tolerates no failure goes no further.
var _ = Describe("A Deployment whose new pods are refused by a ResourceQuota on a spoke", func() {
	const (
		v1 = "registry.example/quota:v1"
		v2 = "registry.example/quota:v2"
		// afterQuotaTimeout bounds the rollout's end once the quota is removed: the ReplicaSet controller's
		// backoff after the failed creates, then two more clusters one after the other.
		afterQuotaTimeout = 2 * convergeTimeout
	)

	It("is never reported available and stops a progressive rollout", func(ctx SpecContext) {
		ns := newNamespace(ctx, "quota")
		Expect(hub.Create(ctx, selectingPlacement("quota", ns))).To(Succeed())
		// 1 replica, rolling update with one surge pod and none unavailable (the defaults, spelled out): the new
		// pod must run before the old one goes.
		template := func(image string) *workv1alpha1.PlacementManifestWork {
			d := deployment("quota", ns, 1, image)
			d["spec"].(map[string]any)["strategy"] = map[string]any{
				"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 1, "maxUnavailable": 0},
			}
			return framework.MakePMW("quota", ns).Placement("quota").Manifest(d).Obj()
		}
		pmw := template(v1)
		// One cluster at a time, no failure tolerated, no progress deadline: a degraded cluster stops the rollout.
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromInt32(1),
				RolloutConfig:  clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)},
			},
		}
		Expect(hub.Create(ctx, pmw)).To(Succeed())
		DeferCleanup(deletePMW, pmw)

		By("every spoke running v1 and the hub reporting all three available")
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "quota"), 1, v1)
			}
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			expectCondition(g, got, workv1alpha1.ConditionRolloutComplete, metav1.ConditionTrue, workv1alpha1.ReasonRolloutSucceeded)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		// sdk-go's Progressive rollout takes the clusters of decision group 0 in name order (the Placement has no
		// decision strategy, so all three are in group 0): the first is the one the new template reaches first.
		first, others := clusters[0], clusters[1:]
		By("a ResourceQuota on " + first + " that leaves no room for another pod")
		quota := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "no-room", Namespace: ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
		}
		spoke := stk.Spoke(first).Client
		Expect(spoke.Create(ctx, quota)).To(Succeed())
		// The quota admission refuses nothing until kube-controller-manager's resourcequota controller has
		// counted what the namespace already uses: the one running pod.
		Eventually(func(g Gomega) {
			g.Expect(spoke.Get(ctx, client.ObjectKeyFromObject(quota), quota)).To(Succeed())
			used := quota.Status.Used[corev1.ResourcePods]
			g.Expect(used.Value()).To(BeEquivalentTo(1), "status.used.pods of the ResourceQuota")
			g.Expect(quota.Status.Hard).To(HaveKey(corev1.ResourcePods), "status.hard of the ResourceQuota")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		// heldBack must hold from the template change until the quota goes: the PlacementManifestWork never
		// Ready nor every cluster available, the rollout never past the first cluster, the old pod serving there.
		// The status is judged once it describes the new generation.
		var generation int64
		heldBack := func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			if c := condition(got, workv1alpha1.ConditionReady); c != nil && c.ObservedGeneration == generation {
				g.Expect(c.Status).NotTo(Equal(metav1.ConditionTrue), "Ready: %s", c.Message)
			}
			if got.Status.ObservedGeneration == generation {
				g.Expect(got.Status.PlacedManifestWorkSummary.Available).To(BeNumerically("<", 3), "status.placedManifestWorkSummary.available")
			}
			for _, c := range others {
				d := spokeDeployment(ctx, g, c, ns, "quota")
				g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(v1), "the rollout went past %s to %s", first, c)
			}
			g.Expect(readyPods(ctx, g, first, ns, "quota")).To(BeEquivalentTo(1), "ready pods on %s: the old one serves", first)
		}

		start := time.Now()
		generation = updateTemplate(ctx, pmw, template(v2).Spec.ManifestWorkTemplate.Workload.Manifests)

		By(first + "'s Deployment on v2, its new pod refused: ReplicaFailure=True")
		var failure *appsv1.DeploymentCondition
		Eventually(func(g Gomega) {
			mustHold(heldBack)
			d := spokeDeployment(ctx, g, first, ns, "quota")
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(Equal(v2), "the image of the Deployment on %s", first)
			g.Expect(d.Status.UpdatedReplicas).To(BeZero(), "status.updatedReplicas of the Deployment on %s", first)
			failure = deploymentCondition(d, appsv1.DeploymentReplicaFailure)
			g.Expect(failure).NotTo(BeNil(), "the Deployment on %s has no ReplicaFailure condition (conditions: %v)", first, d.Status.Conditions)
			g.Expect(failure.Status).To(Equal(corev1.ConditionTrue))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)
		GinkgoWriter.Printf("ReplicaFailure=True (%s: %s) on %s's Deployment %s after the template change\n",
			failure.Reason, failure.Message, first, time.Since(start).Round(time.Millisecond))

		By("the hub reporting " + first + " degraded by the ReplicaFailure and the rollout stopped by maxFailures")
		stopped := func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			g.Expect(got.Status.ObservedGeneration).To(Equal(generation), "status.observedGeneration")
			// The cluster is degraded by a manifest, and the message is the Deployment's ReplicaFailure.
			g.Expect(got.Status.UnhealthyClusters).To(ContainElement(And(
				HaveField("Cluster", first), HaveField("State", BeEquivalentTo(health.Degraded)),
				HaveField("Reason", workv1alpha1.ReasonManifestDegraded), HaveField("Message", ContainSubstring("replica failure")),
			)), "status.unhealthyClusters")
			g.Expect(manifestSummary(g, got, "Deployment", "quota").Degraded).To(BeEquivalentTo(1), "clusters where the Deployment is degraded")
			expectCondition(g, got, workv1alpha1.ConditionRolloutComplete, metav1.ConditionFalse, workv1alpha1.ReasonRolloutMaxFailures)
			expectCondition(g, got, workv1alpha1.ConditionStalled, metav1.ConditionTrue, workv1alpha1.ReasonRolloutMaxFailures)
			g.Expect(got.Status.Rollout).NotTo(BeNil(), "status.rollout")
			g.Expect(*got.Status.Rollout).To(And(HaveField("Updated", BeEquivalentTo(1)), HaveField("Failed", BeEquivalentTo(1)),
				HaveField("Succeeded", BeZero()), HaveField("Total", BeEquivalentTo(3))), "status.rollout")
		}
		Eventually(func(g Gomega) {
			mustHold(heldBack)
			stopped(g)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)

		By("nothing moving on while the quota stays")
		Consistently(func(g Gomega) {
			heldBack(g)
			stopped(g)
		}).WithContext(ctx).WithTimeout(holdWindow).WithPolling(poll).Should(Succeed())

		By("the quota removed: the new pod runs on " + first + " and the rollout goes on to every cluster")
		removed := time.Now()
		Expect(spoke.Delete(ctx, quota)).To(Succeed())
		// The ReplicaSet controller retries a failed create with exponential backoff and nothing wakes it when a
		// quota goes, so its next try may come about as long after the removal as the quota was in place.
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "quota"), 1, v2)
			}
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			expectCondition(g, got, workv1alpha1.ConditionRolloutComplete, metav1.ConditionTrue, workv1alpha1.ReasonRolloutSucceeded)
			expectCondition(g, got, workv1alpha1.ConditionStalled, metav1.ConditionFalse, workv1alpha1.ReasonNotStalled)
		}).WithContext(ctx).WithTimeout(afterQuotaTimeout).WithPolling(poll).Should(Succeed())
		GinkgoWriter.Printf("every cluster available on v2 %s after the quota was removed\n", time.Since(removed).Round(time.Millisecond))
	})
})

// deploymentCondition returns a Deployment's condition of the given type, or nil.
func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}
