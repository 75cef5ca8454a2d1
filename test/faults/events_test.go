package faults

import (
	"context"
	"errors"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// Events and metrics report the status the API server stored: while status writes fail, nothing is announced,
// and once one is stored its change is announced once.
var _ = Describe("Events and metrics", func() {
	It("are recorded only after the status is stored, and once", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "announce", 1)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()

		// Status writes of this namespace's PlacementManifestWorks fail with a server error while failing is set;
		// refused counts those refused after the agent reported the work available.
		var failing, reported atomic.Bool
		var refused atomic.Int32
		failing.Store(true)
		wrap := func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if _, ok := obj.(*workv1alpha1.PlacementManifestWork); ok && sub == "status" && obj.GetNamespace() == ns && failing.Load() {
						if reported.Load() {
							refused.Add(1)
						}
						return apierrors.NewInternalError(errors.New("injected: etcdserver: request timed out"))
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
		}
		fw.StartManager(suite.ManagerOptions{Name: "announce", WrapClient: wrap})
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(1)) }, timeout, interval).Should(Succeed())
		fw.AgentReports(pmw, clusters[0], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
		reported.Store(true)

		readyEvents := func(g Gomega) []eventsv1.Event {
			list := &eventsv1.EventList{}
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var out []eventsv1.Event
			for _, e := range list.Items {
				if e.Regarding.Name == pmw.Name && e.Reason == workv1alpha1.EventReasonReady {
					out = append(out, e)
				}
			}
			return out
		}
		available := func() float64 {
			return fw.Gauge("placementmanifestwork_clusters", map[string]string{"namespace": ns, "name": pmw.Name, "health": "available"})
		}

		By("status writes that fail after the work became available announce nothing")
		// Each refused write comes from a reconcile that saw the work available and computed Ready.
		Eventually(refused.Load, timeout, interval).Should(BeNumerically(">=", 3))
		Expect(readyEvents(Default)).To(BeEmpty(), "no Ready event for a status that was not stored")
		Expect(available()).NotTo(BeEquivalentTo(1), "no gauge for a status that was not stored")

		By("the first stored status is announced, once")
		failing.Store(false)
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(fw.Current(g, pmw).Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(available()).To(BeEquivalentTo(1))
			events := readyEvents(g)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Series).To(BeNil(), "the Ready event was recorded once, not repeated")
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			events := readyEvents(g)
			g.Expect(events).To(HaveLen(1))
			g.Expect(events[0].Series).To(BeNil())
		}, "2s", interval).Should(Succeed())
		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})
