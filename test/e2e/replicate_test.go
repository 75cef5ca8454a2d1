//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Replicate", func() {
	It("puts a ConfigMap, a Service and a Deployment on every spoke and reports every cluster available", func(ctx SpecContext) {
		ns := newNamespace(ctx, "replicate")
		Expect(hub.Create(ctx, selectingPlacement("web", ns))).To(Succeed())
		const image = "registry.example/web:1"
		pmw := framework.MakePMW("web", ns).Placement("web").
			Manifest(framework.ConfigMap("web-config", ns, map[string]string{"mode": "replicated"})).
			Manifest(service("web", ns)).
			Manifest(deployment("web", ns, 2, image)).Obj()

		start := time.Now()
		Expect(hub.Create(ctx, pmw)).To(Succeed())
		DeferCleanup(deletePMW, pmw)

		By("every spoke holding the three objects, the Deployment's 2 pods ready")
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				cm := &corev1.ConfigMap{}
				g.Expect(stk.Spoke(c).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, cm)).To(Succeed(), "ConfigMap on %s", c)
				g.Expect(cm.Data).To(Equal(map[string]string{"mode": "replicated"}), "ConfigMap on %s", c)
				svc := &corev1.Service{}
				g.Expect(stk.Spoke(c).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, svc)).To(Succeed(), "Service on %s", c)
				g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty(), "the Service on %s has no cluster IP", c)
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, "web"), 2, image)
				g.Expect(readyPods(ctx, g, c, ns, "web")).To(Equal(int32(2)), "ready pods on %s", c)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		By("the hub reporting all three clusters available, from the agents' feedback")
		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			g.Expect(got.Status.Manifests).To(HaveLen(3), "status.manifests")
			expectHealthy(g, manifestSummary(g, got, "ConfigMap", "web-config"), 3)
			expectHealthy(g, manifestSummary(g, got, "Service", "web"), 3)
			d := manifestSummary(g, got, "Deployment", "web")
			expectHealthy(g, d, 3)
			expectFeedback(g, d, "readyReplicas", 6, 3)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})
})
