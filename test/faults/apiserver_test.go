package faults

import (
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("The API server restarted under the manager", func() {
	It("reconnects, and converges changes made after the restart", func(ctx SpecContext) {
		if runtime.GOOS != "linux" {
			Skip("restartAPIServer finds the kube-apiserver's process id in /proc")
		}
		ns := fw.NewNamespace("restart")
		clusters := fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[0])
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		m := fw.StartManager(suite.ManagerOptions{Name: "restart"})
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0]))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())

		// Stop the API server and start it again on the same port, etcd running throughout. Nothing changes
		// while it is down.
		url := fw.Env.ControlPlane.APIServer.SecureServing.URL("https", "/").String()
		restartAPIServer()
		Expect(fw.Env.ControlPlane.APIServer.SecureServing.URL("https", "/").String()).To(Equal(url), "the API server came back on the same address")
		Expect(m.Stopped()).To(BeFalse(), "the manager survived the outage")

		// Changes after the restart reach the manager through its re-established watches: a decision, and the
		// PlacementManifestWork's own template.
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(3))
		}, longTimeout, interval).Should(Succeed())
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.ManifestWorkTemplate = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
		})
		Eventually(func(g Gomega) {
			works := fw.WorksByCluster(g, pmw)
			g.Expect(works).To(HaveLen(3))
			for _, w := range works {
				g.Expect(configValue(g, &w)).To(Equal("2"))
			}
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonWaitingForApply), c.Message)
		}, timeout, interval).Should(Succeed())

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(2*longTimeout))
})
