//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// A workload moves from one spoke to another by a change of a single label: the old spoke keeps serving until
// the new one is available (make before break). The new spoke is held back by a node selector its node does
// not match yet, so its pods stay Pending until the test labels the node.
var _ = Describe("Move a workload between spokes", Ordered, func() {
	const (
		moveLabel = "e2e-move"
		nodeLabel = "e2e-move-ready"
	)
	var (
		ns       string
		pmw      *workv1alpha1.PlacementManifestWork
		from, to string
	)

	label := func(ctx context.Context, cluster string, on bool) {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
				return err
			}
			if on {
				mc.Labels[moveLabel] = "here"
			} else {
				delete(mc.Labels, moveLabel)
			}
			return hub.Update(ctx, mc)
		})).To(Succeed())
	}
	labelNode := func(ctx context.Context, cluster string, on bool) {
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			nodes := &corev1.NodeList{}
			if err := stk.Spoke(cluster).Client.List(ctx, nodes); err != nil {
				return err
			}
			for i := range nodes.Items {
				n := &nodes.Items[i]
				if on {
					n.Labels[nodeLabel] = "yes"
				} else {
					delete(n.Labels, nodeLabel)
				}
				if err := stk.Spoke(cluster).Client.Update(ctx, n); err != nil {
					return err
				}
			}
			return nil
		})).To(Succeed())
	}
	hasDeployment := func(ctx context.Context, cluster string) bool {
		err := stk.Spoke(cluster).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mover"}, &appsv1.Deployment{})
		return err == nil
	}

	BeforeAll(func(ctx SpecContext) {
		from, to = clusters[0], clusters[1]
		ns = newNamespace(ctx, "move")
		placement := &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: "mover", Namespace: ns},
			Spec: clusterv1beta1.PlacementSpec{
				ClusterSets: []string{stack.ClusterSet},
				Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{moveLabel: "here"}},
				}}},
			},
		}
		Expect(hub.Create(ctx, placement)).To(Succeed())
		labelNode(ctx, from, true)
		label(ctx, from, true)

		d := deployment("mover", ns, 2, "registry.example/mover:v1")
		d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{nodeLabel: "yes"}
		pmw = framework.MakePMW("mover", ns).Placement("mover").Manifest(d).Obj()
		Expect(hub.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyPods(ctx, g, from, ns, "mover")).To(Equal(int32(2)))
			expectAllAvailable(g, getPMW(ctx, g, pmw), 1)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	AfterAll(func(ctx SpecContext) {
		label(ctx, from, false)
		label(ctx, to, false)
		labelNode(ctx, from, false)
		labelNode(ctx, to, false)
		if pmw != nil {
			deletePMW(ctx, pmw)
		}
	})

	It("keeps the old spoke's workload until the new spoke's is available, then removes it", func(ctx SpecContext) {
		start := time.Now()
		// The new spoke is labelled before the old one is unlabelled, as one predicate change would do it:
		// removing the old label first would be a plain leave, with nothing joining to wait for.
		label(ctx, to, true)
		label(ctx, from, false)

		// The new spoke gets the Deployment, its pods cannot run yet, and the old spoke keeps serving.
		Eventually(func() bool { return hasDeployment(ctx, to) }).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(BeTrue())
		Eventually(func(g Gomega) {
			g.Expect(getPMW(ctx, g, pmw).Status.LeavingClusters).To(BeEquivalentTo(1))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(readyPods(ctx, g, from, ns, "mover")).To(Equal(int32(2)), "the old spoke stopped serving before the new one was available")
		}).WithContext(ctx).WithTimeout(5 * time.Second).WithPolling(poll).Should(Succeed())

		// The new spoke's node becomes eligible: its pods run, it reports available, the old spoke is cleared.
		labelNode(ctx, to, true)
		Eventually(func(g Gomega) {
			g.Expect(readyPods(ctx, g, to, ns, "mover")).To(Equal(int32(2)))
			g.Expect(hasDeployment(ctx, from)).To(BeFalse(), "the old spoke still holds the workload")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 1)
			g.Expect(got.Status.LeavingClusters).To(BeZero())
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})
})
