package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("A manager killed in the middle of a fan-out", func() {
	const clusterCount = 1000

	It("is restarted and converges to exactly one owned work per decided cluster, with no duplicate and no orphan", func(ctx SpecContext) {
		ns := fw.NewNamespace("fanout")
		clusters := fw.NewClusters(clusterCount)
		Expect(k8s.Create(ctx, framework.Placement("fleet", ns))).To(Succeed())
		// OCM puts at most 100 clusters in a PlacementDecision.
		for i := 0; i < clusterCount; i += 100 {
			fw.Decide(ns, "fleet", fmt.Sprintf("fleet-decision-%d", i/100+1), clusters[i:i+100]...)
		}
		decided := map[string]bool{}
		for _, c := range clusters {
			decided[c] = true
		}

		// Manager A writes 4 works at a time. The test kills it as soon as it has sent 200 creates, while more are
		// in flight. On two busy cores the poll may still come late, so A also never gets past its 900th create
		// (it waits there until it is killed): the kill always lands mid-way.
		var attempted atomic.Int64
		a := fw.StartManager(suite.ManagerOptions{Name: "a", MaxConcurrentWrites: 4, WrapClient: func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*workv1.ManifestWork); ok && attempted.Add(1) > 900 {
						<-ctx.Done()
						return ctx.Err()
					}
					return c.Create(ctx, obj, opts...)
				},
			})
		}})
		pmw := framework.MakePMW("fleet", ns).Placement("fleet").
			Manifest(framework.ConfigMap("fleet-config", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func() int { return len(a.WorkWrites()) }, longTimeout, "10ms").Should(BeNumerically(">=", 200))
		a.Stop()

		var left int
		Eventually(func(g Gomega) {
			left = len(fw.WorksByCluster(g, pmw))
		}, timeout, interval).Should(Succeed())
		Expect(left).To(And(BeNumerically(">", 0), BeNumerically("<", clusterCount)), "manager A was killed mid-way")
		GinkgoWriter.Printf("manager A left %d of %d works behind\n", left, clusterCount)

		b := fw.StartManager(suite.ManagerOptions{Name: "b"})
		Eventually(func(g Gomega) {
			works := fw.WorksByCluster(g, pmw)
			g.Expect(works).To(HaveLen(clusterCount))
			for cluster, w := range works {
				g.Expect(decided[cluster]).To(BeTrue(), "work in undecided namespace %s", cluster)
				g.Expect(w.Name).To(Equal(manifestwork.WorkName(manifestwork.Owner(pmw))))
				g.Expect(w.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationOwnerUID, string(pmw.UID)))
			}
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(clusterCount))
			g.Expect(got.Status.Rollout).NotTo(BeNil())
			g.Expect(got.Status.Rollout.Updated).To(BeEquivalentTo(clusterCount), "every cluster carries the current template")
			applied := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(applied).NotTo(BeNil())
			g.Expect(applied.Reason).To(Equal(workv1alpha1.ReasonWaitingForApply), "everything is written: %s", applied.Message)
		}, longTimeout, interval).Should(Succeed())

		// B created what A had not, and neither updated nor deleted any work. (B may send more creates than were
		// missing: when its cache lags behind its own creates, a later reconcile creates some again, gets
		// AlreadyExists and finds them its own; see the spec below.)
		var creates int
		for _, w := range b.WorkWrites() {
			Expect(w.Verb).To(Equal("create"), "manager B %s %s/%s", w.Verb, w.Namespace, w.Name)
			creates++
		}
		Expect(creates).To(BeNumerically(">=", clusterCount-left-4), "at most A's 4 in-flight creates landed after the count")

		// No orphan after deletion either: every work goes, then the PlacementManifestWork.
		fw.DeletePMW(pmw, longTimeout)
		Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{}))).To(BeTrue())
	}, SpecTimeout(2*longTimeout))

	// A lagging cache must not make the manager write its works again, nor call them foreign: after a restart,
	// manager B created the missing works in one reconcile, and the next one, triggered before the cache held
	// them all, created some again and got AlreadyExists. The manager now waits until its cache shows its own
	// writes (expectations), and should a create still meet AlreadyExists, it reads the work from the API
	// server and counts it as its own when it carries its UID. This spec reproduces the lag deterministically:
	// the manager's cache hides the works it creates for a few seconds.
	It("neither writes again nor reports as foreign the works it has just created while its cache lags behind", func(ctx SpecContext) {
		ns, clusters := placedNamespace(ctx, "lag", 3)
		lag := &lagging{hidden: map[client.ObjectKey]bool{}, hiding: true}
		m := fw.StartManager(suite.ManagerOptions{Name: "lag", WrapClient: lag.wrap, WrapCache: lag.wrapCache})
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			got := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), got)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionStalled)).To(BeFalse(),
				"Stalled: %v", meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionStalled))
		}, "5s", interval).Should(Succeed())
		var targets []string
		for _, w := range m.WorkWrites() {
			Expect(w.Refused).To(BeEmpty(), "%s %s", w.Verb, w.Namespace)
			targets = append(targets, w.Verb+" "+w.Namespace)
		}
		Expect(targets).To(ConsistOf("create "+clusters[0], "create "+clusters[1], "create "+clusters[2]),
			"one create per cluster while the cache lags")

		lag.release()
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied).Reason).To(Equal(workv1alpha1.ReasonWaitingForApply))
		}, timeout, interval).Should(Succeed())
		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})

// lagging makes a manager's cache lag behind its own ManifestWork creates: what it creates stays out of its
// cached lists until release.
type lagging struct {
	mu     sync.Mutex
	hiding bool
	hidden map[client.ObjectKey]bool
}

func (l *lagging) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hiding = false
	l.hidden = map[client.ObjectKey]bool{}
}

func (l *lagging) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			if _, ok := obj.(*workv1.ManifestWork); ok && err == nil {
				l.mu.Lock()
				if l.hiding {
					l.hidden[client.ObjectKeyFromObject(obj)] = true
				}
				l.mu.Unlock()
			}
			return err
		},
	})
}

func (l *lagging) wrapCache(r client.Reader) client.Reader {
	return laggingReader{Reader: r, l: l}
}

type laggingReader struct {
	client.Reader
	l *lagging
}

func (r laggingReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	works, ok := list.(*workv1.ManifestWorkList)
	if !ok {
		return nil
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	kept := works.Items[:0:0]
	for _, w := range works.Items {
		if !r.l.hidden[client.ObjectKeyFromObject(&w)] {
			kept = append(kept, w)
		}
	}
	works.Items = kept
	return nil
}
