package faults

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("The ControllerRevision", func() {
	It("is written beside the works, not before them: a revision create that waits for a work create gets it, and the status names the revision", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "revision-beside", 3)
		f := newInjector(ns)
		// Written before the works, the revision's create would wait here in vain and fail.
		f.revisionWait = 20 * time.Second
		fw.StartManager(suite.ManagerOptions{Name: "revision-beside", WrapClient: f.wrap})

		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			works := fw.WorksByCluster(g, pmw)
			g.Expect(works).To(HaveLen(len(clusters)))
			cur := fw.Current(g, pmw).Status.CurrentRevision
			g.Expect(cur).NotTo(BeNil(), "the status names the current revision")
			g.Expect(cur.Revision).To(Equal(int64(1)))
			cr := &appsv1.ControllerRevision{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: cur.Name}, cr)).To(Succeed())
			g.Expect(cr.Revision).To(Equal(int64(1)))
			for c, w := range works {
				g.Expect(w.Annotations[workv1alpha1.AnnotationTemplateHash]).To(Equal(cr.Labels[workv1alpha1.LabelTemplateHash]),
					"cluster %s carries the revision's template", c)
			}
		}, timeout, interval).Should(Succeed())
		injected, _ := f.counts()
		Expect(injected).NotTo(HaveKey("revision"), "the revision create waited for a work create that never came: the revision held the works back")

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))

	It("survives a panic in a write run beside the reconcile: the revision's goroutine and a work create's; the next reconcile writes them", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "revision-panic", 3)
		f := newInjector(ns)
		// Unrecovered, either panic ends the process, and with it this suite.
		f.panics["revision"], f.panics["create"] = 1, 1
		fw.StartManager(suite.ManagerOptions{Name: "revision-panic", WrapClient: f.wrap})

		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).To(HaveLen(len(clusters)))
			cur := fw.Current(g, pmw).Status.CurrentRevision
			g.Expect(cur).NotTo(BeNil(), "the status names the current revision")
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: cur.Name}, &appsv1.ControllerRevision{})).To(Succeed())
		}, timeout, interval).Should(Succeed())
		injected, _ := f.counts()
		Expect(injected).To(HaveKeyWithValue("revision panic", 1))
		Expect(injected).To(HaveKeyWithValue("create panic", 1))

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})
