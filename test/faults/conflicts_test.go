package faults

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// agentFinalizer is the finalizer OCM's work agent puts on every ManifestWork it applies.
const agentFinalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"

var (
	worksResource     = schema.GroupResource{Group: workv1.GroupName, Resource: "manifestworks"}
	revisionsResource = schema.GroupResource{Group: appsv1.GroupName, Resource: "controllerrevisions"}
	pmwResource       = schema.GroupResource{Group: workv1alpha1.GroupVersion.Group, Resource: "placementmanifestworks"}
)

// injector fails the manager's writes for one namespace's PlacementManifestWorks: ManifestWork creates and
// updates with the queued errors, status updates likewise, and it runs a concurrent writer just before the
// first real (not failed) ManifestWork update and status update, so those go out with a stale resourceVersion.
// With revisionWait set, a ControllerRevision create waits for a ManifestWork create, and fails when none comes.
type injector struct {
	ns string
	// revisionWait, when set, holds each ControllerRevision create until a ManifestWork create has reached the
	// API server (workCreated), for at most that long; then it fails, counted as injected "revision".
	revisionWait time.Duration
	workCreated  chan struct{}
	createdOnce  sync.Once

	mu         sync.Mutex
	createErrs []error
	updateErrs []error
	deleteErrs []error
	statusErrs []error
	// beforeWorkUpdate and beforeStatusUpdate run once, before the first forwarded write of their kind.
	beforeWorkUpdate   func(*workv1.ManifestWork)
	beforeStatusUpdate func(*workv1alpha1.PlacementManifestWork)
	// injected counts the errors returned without calling the API server, by verb.
	injected map[string]int
	// conflicts counts the Conflicts the API server itself returned, by verb.
	conflicts map[string]int
	// panics is how many ControllerRevision ("revision") and ManifestWork ("create") creates still panic instead
	// of reaching the API server; each counts as injected.
	panics map[string]int
	// touched is the cluster whose work beforeWorkUpdate changed; hookErrs are the hooks' failures.
	touched  string
	hookErrs []error
}

func newInjector(ns string) *injector {
	return &injector{ns: ns, injected: map[string]int{}, conflicts: map[string]int{}, panics: map[string]int{}, workCreated: make(chan struct{})}
}

func (f *injector) ours(obj client.Object) bool {
	switch obj.(type) {
	case *workv1.ManifestWork:
		owner, ok := manifestwork.OwnerOf(obj)
		return ok && owner.Namespace == f.ns
	case *appsv1.ControllerRevision:
		_, ok := obj.GetLabels()[workv1alpha1.LabelPlacementManifestWork]
		return ok && obj.GetNamespace() == f.ns
	}
	_, ok := obj.(*workv1alpha1.PlacementManifestWork)
	return ok && obj.GetNamespace() == f.ns
}

// next pops the next queued error of a verb; nil when none is left.
func (f *injector) next(verb string, queue *[]error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(*queue) == 0 {
		return nil
	}
	err := (*queue)[0]
	*queue = (*queue)[1:]
	f.injected[verb]++
	return err
}

// panicIfAsked panics, counted as injected, while panics[verb] asks for it.
func (f *injector) panicIfAsked(verb string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panics[verb] == 0 {
		return
	}
	f.panics[verb]--
	f.injected[verb+" panic"]++
	panic("injected panic in a " + verb)
}

// awaitWorkCreate holds a ControllerRevision create, when revisionWait is set, until a ManifestWork create has
// reached the API server; it fails the create when none does within revisionWait.
func (f *injector) awaitWorkCreate(ctx context.Context) error {
	if f.revisionWait == 0 {
		return nil
	}
	timer := time.NewTimer(f.revisionWait)
	defer timer.Stop()
	select {
	case <-f.workCreated:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		f.mu.Lock()
		f.injected["revision"]++
		f.mu.Unlock()
		return apierrors.NewServerTimeout(revisionsResource, "create", 1)
	}
}

func (f *injector) observe(verb string, err error) {
	if apierrors.IsConflict(err) {
		f.mu.Lock()
		f.conflicts[verb]++
		f.mu.Unlock()
	}
}

// concurrently runs a hook's write, which must succeed (retrying conflicts with the test's own writes).
func (f *injector) concurrently(write func() error) {
	if err := retry.RetryOnConflict(retry.DefaultRetry, write); err != nil {
		f.mu.Lock()
		f.hookErrs = append(f.hookErrs, err)
		f.mu.Unlock()
	}
}

func (f *injector) touchedCluster() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.touched
}

func (f *injector) errors() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.hookErrs...)
}

func (f *injector) counts() (injected, conflicts map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	injected, conflicts = map[string]int{}, map[string]int{}
	for k, v := range f.injected {
		injected[k] = v
	}
	for k, v := range f.conflicts {
		conflicts[k] = v
	}
	return injected, conflicts
}

func (f *injector) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if !f.ours(obj) {
				return c.Create(ctx, obj, opts...)
			}
			switch obj.(type) {
			case *appsv1.ControllerRevision:
				f.panicIfAsked("revision")
				if err := f.awaitWorkCreate(ctx); err != nil {
					return err
				}
			case *workv1.ManifestWork:
				f.panicIfAsked("create")
				if err := f.next("create", &f.createErrs); err != nil {
					return err
				}
				err := c.Create(ctx, obj, opts...)
				if err == nil {
					f.createdOnce.Do(func() { close(f.workCreated) })
				}
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w, ok := obj.(*workv1.ManifestWork)
			if !ok || !f.ours(obj) {
				return c.Update(ctx, obj, opts...)
			}
			if err := f.next("update", &f.updateErrs); err != nil {
				return err
			}
			f.mu.Lock()
			hook := f.beforeWorkUpdate
			f.beforeWorkUpdate = nil
			f.mu.Unlock()
			if hook != nil {
				hook(w)
			}
			err := c.Update(ctx, obj, opts...)
			f.observe("update", err)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if _, ok := obj.(*workv1.ManifestWork); ok && f.ours(obj) {
				if err := f.next("delete", &f.deleteErrs); err != nil {
					return err
				}
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			p, ok := obj.(*workv1alpha1.PlacementManifestWork)
			if !ok || sub != "status" || !f.ours(obj) {
				return c.SubResource(sub).Update(ctx, obj, opts...)
			}
			if err := f.next("status", &f.statusErrs); err != nil {
				return err
			}
			f.mu.Lock()
			hook := f.beforeStatusUpdate
			f.beforeStatusUpdate = nil
			f.mu.Unlock()
			if hook != nil {
				hook(p)
			}
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			f.observe("status", err)
			return err
		},
	})
}

// changeTemplateWithAgentWrite changes the PlacementManifestWork's ConfigMap to v: "2", with the work agent
// adding its finalizer to a work (touched) just before the manager's first update of it reaches the API
// server, so that update goes out with a stale resourceVersion.
func (f *injector) changeTemplateWithAgentWrite(pmw *workv1alpha1.PlacementManifestWork) {
	f.mu.Lock()
	f.beforeWorkUpdate = func(w *workv1.ManifestWork) {
		f.mu.Lock()
		f.touched = w.Namespace
		f.mu.Unlock()
		f.concurrently(func() error {
			cur := &workv1.ManifestWork{}
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(w), cur); err != nil {
				return err
			}
			controllerutil.AddFinalizer(cur, agentFinalizer)
			return k8s.Update(context.Background(), cur)
		})
	}
	f.mu.Unlock()
	fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
		p.Spec.ManifestWorkTemplate = framework.MakePMW("x", pmw.Namespace).
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
	})
}

// expectChangedKeepingAgentWrite checks that the PlacementManifestWork's n works carry v: "2" and the touched
// one still has the agent's finalizer: the manager's update did not overwrite the agent's write.
func (f *injector) expectChangedKeepingAgentWrite(g Gomega, pmw *workv1alpha1.PlacementManifestWork, n int) {
	works := fw.WorksByCluster(g, pmw)
	g.Expect(works).To(HaveLen(n))
	for _, w := range works {
		g.Expect(configValue(g, &w)).To(Equal("2"), "cluster %s", w.Namespace)
	}
	touched := f.touchedCluster()
	g.Expect(touched).NotTo(BeEmpty())
	g.Expect(works[touched].Finalizers).To(ContainElement(agentFinalizer), "the agent's concurrent change was kept")
}

// releaseAgentFinalizer removes the agent's finalizer from the touched work once the deleted
// PlacementManifestWork's deletion reached it, as the agent does.
func (f *injector) releaseAgentFinalizer(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) {
	Eventually(func(g Gomega) {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.touchedCluster(), Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		g.Expect(w.DeletionTimestamp).NotTo(BeNil())
		controllerutil.RemoveFinalizer(w, agentFinalizer)
		g.Expect(k8s.Update(ctx, w)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

// deliveredWithInjector starts a manager whose writes for a new namespace of 2 placed clusters go through an
// injector (set up by configure, when not nil), and returns it with a PlacementManifestWork of one ConfigMap
// delivered to both clusters.
func deliveredWithInjector(ctx context.Context, name string, configure func(*injector)) (*injector, *workv1alpha1.PlacementManifestWork) {
	ns, clusters := placedNamespace(ctx, name, 2)
	f := newInjector(ns)
	if configure != nil {
		configure(f)
	}
	fw.StartManager(suite.ManagerOptions{Name: name, WrapClient: f.wrap})
	pmw := framework.MakePMW("web", ns).Placement("p").
		Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
	Expect(k8s.Create(ctx, pmw)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
	}, timeout, interval).Should(Succeed())
	return f, pmw
}

var _ = Describe("A work update refused as stale", func() {
	It("is read again and written in the same reconcile, keeping the other writer's change, with no failed write", func(ctx SpecContext) {
		f, pmw := deliveredWithInjector(ctx, "stale-update", nil)

		// The agent adds its finalizer to a work just before the manager's update of it reaches the API server,
		// as an agent's report does while the manager's cache is behind.
		f.changeTemplateWithAgentWrite(pmw)
		Eventually(func(g Gomega) {
			f.expectChangedKeepingAgentWrite(g, pmw, 2)
		}, timeout, interval).Should(Succeed())
		Expect(f.errors()).To(BeEmpty(), "the agent's own write succeeded")
		_, conflicts := f.counts()
		Expect(conflicts["update"]).To(BeNumerically(">=", 1), "the stale work update was refused by the API server, not forced")
		// Refused and written again within the reconcile: no write failed, so none was reported.
		Consistently(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(k8s.List(ctx, events, client.InNamespace(pmw.Namespace))).To(Succeed())
			for _, e := range events.Items {
				g.Expect(e.Reason).NotTo(Equal(workv1alpha1.ReasonWriteFailed), e.Note)
			}
		}, 2*time.Second, interval).Should(Succeed())

		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		f.releaseAgentFinalizer(ctx, pmw)
		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})

var _ = Describe("A ManifestWork delete that fails while the PlacementManifestWork is deleted", func() {
	It("is retried until the works are gone, and counted in write_errors_total as a delete", func(ctx SpecContext) {
		f, pmw := deliveredWithInjector(ctx, "delete-errors", func(f *injector) {
			f.deleteErrs = []error{
				apierrors.NewServerTimeout(worksResource, "delete", 1),
				apierrors.NewInternalError(errors.New("injected: etcdserver: leader changed")),
			}
		})

		failedDeletes := func() float64 {
			m := &dto.Metric{}
			Expect(metrics.WriteErrors.WithLabelValues("delete").Write(m)).To(Succeed())
			return m.GetCounter().GetValue()
		}
		before := failedDeletes()
		fw.DeletePMW(pmw, timeout)
		injected, _ := f.counts()
		Expect(injected).To(HaveKeyWithValue("delete", 2))
		Expect(failedDeletes()-before).To(BeEquivalentTo(2), "placementmanifestwork_manifestwork_write_errors_total{operation=\"delete\"}")
	}, SpecTimeout(3*timeout))
})

var _ = Describe("Update conflicts and transient errors", func() {
	It("are retried with backoff until the works and status converge, and a newer status or work is never overwritten", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "conflicts", 4)

		f := newInjector(ns)
		f.createErrs = []error{
			apierrors.NewConflict(worksResource, "injected", errors.New("injected conflict")),
			apierrors.NewInternalError(errors.New("injected: etcdserver: leader changed")),
			apierrors.NewServerTimeout(worksResource, "create", 1),
			apierrors.NewTooManyRequests("injected: the server is busy", 1),
			apierrors.NewInternalError(errors.New("injected: etcdserver: request timed out")),
		}
		f.updateErrs = []error{
			apierrors.NewConflict(worksResource, "injected", errors.New("injected conflict")),
			apierrors.NewServerTimeout(worksResource, "update", 1),
		}
		f.statusErrs = []error{apierrors.NewConflict(pmwResource, "injected", errors.New("injected conflict"))}
		// A concurrent status writer (another tool adding its own condition) gets in just before the manager's
		// first status update reaches the API server: the manager's update carries the resourceVersion it read.
		f.beforeStatusUpdate = func(p *workv1alpha1.PlacementManifestWork) {
			f.concurrently(func() error {
				cur := &workv1alpha1.PlacementManifestWork{}
				if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), cur); err != nil {
					return err
				}
				meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: "ExternalCheck", Status: metav1.ConditionTrue,
					Reason: "Checked", Message: "written by another tool", ObservedGeneration: cur.Generation})
				return k8s.Status().Update(context.Background(), cur)
			})
		}
		fw.StartManager(suite.ManagerOptions{Name: "conflicts", WrapClient: f.wrap})

		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(4))
			applied := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(applied).NotTo(BeNil())
			g.Expect(applied.Reason).To(Equal(workv1alpha1.ReasonWaitingForApply), applied.Message)
			g.Expect(meta.FindStatusCondition(got.Status.Conditions, "ExternalCheck")).NotTo(BeNil(),
				"the other tool's condition survived the manager's status updates")
		}, timeout, interval).Should(Succeed())
		injected, conflicts := f.counts()
		Expect(injected).To(HaveKeyWithValue("create", 5))
		Expect(injected).To(HaveKeyWithValue("status", 1))
		Expect(conflicts["status"]).To(BeNumerically(">=", 1), "the stale status update was refused by the API server, not forced")
		// The failed writes were reported while they lasted.
		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range events.Items {
				if e.Regarding.Name == pmw.Name && e.Reason == workv1alpha1.ReasonWriteFailed {
					notes = append(notes, e.Note)
				}
			}
			g.Expect(notes).To(ContainElement(ContainSubstring("writes failed and will be retried")))
		}, timeout, interval).Should(Succeed())

		// A template change: the first two work updates fail, and before the first real one the work agent adds
		// its finalizer to that work, so the manager's update is stale and refused. The retry keeps the
		// agent's finalizer: no lost update.
		f.changeTemplateWithAgentWrite(pmw)
		Eventually(func(g Gomega) {
			f.expectChangedKeepingAgentWrite(g, pmw, 4)
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonWaitingForApply), c.Message)
		}, timeout, interval).Should(Succeed())
		Expect(f.errors()).To(BeEmpty(), "the concurrent writers' own writes succeeded")
		injected, conflicts = f.counts()
		Expect(injected).To(HaveKeyWithValue("update", 2))
		Expect(conflicts["update"]).To(BeNumerically(">=", 1), "the stale work update was refused by the API server, not forced")

		// Let the PlacementManifestWork go: the agent removes its finalizer once the work is deleted.
		Expect(k8s.Delete(ctx, pmw)).To(Succeed())
		f.releaseAgentFinalizer(ctx, pmw)
		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})
