package controllers

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func ownedWork(owner types.NamespacedName) *workv1.ManifestWork {
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "pmw-x", ResourceVersion: "42",
		Annotations: map[string]string{workv1alpha1.AnnotationOwner: owner.String()}}}
}

// hold holds the PlacementManifestWork's next reconcile back for d from now, as a reconcile that took d would.
func hold(m *memory, owner types.NamespacedName, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.get(owner).quietUntil = time.Now().Add(d)
}

// TestWorkEventsPaced: a work's event wakes its PlacementManifestWork at once, unless that one is held back by
// a long reconcile; then the event waits in the queue for the hold's end instead of waking a reconcile early.
func TestWorkEventsPaced(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	work := ownedWork(owner)
	for _, tc := range []struct {
		name string
		hold time.Duration
		now  bool // whether the request is in the queue at once
	}{
		{"not held", 0, true},
		{"held", 300 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &PlacementManifestWorkReconciler{}
			hold(&r.memory, owner, tc.hold)
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			r.workEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: work, ObjectNew: work}, q)
			if got := r.memory.works.newest; got != work.ResourceVersion {
				t.Fatalf("the cache's version = %q, want the work's %q", got, work.ResourceVersion)
			}
			if got := q.Len() == 1; got != tc.now {
				t.Fatalf("in the queue at once = %v, want %v", got, tc.now)
			}
			got := make(chan reconcile.Request, 1)
			go func() {
				req, _ := q.Get()
				got <- req
			}()
			select {
			case req := <-got:
				if req.NamespacedName != owner {
					t.Fatalf("woke %v, want %v", req.NamespacedName, owner)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the PlacementManifestWork was never woken")
			}
		})
	}
}

// TestWorkEventsOwnerChanged: a work whose owner annotation changes wakes its old owner too, which must see it
// is no longer its own.
func TestWorkEventsOwnerChanged(t *testing.T) {
	before, after := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	r := &PlacementManifestWorkReconciler{}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	r.workEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: ownedWork(before), ObjectNew: ownedWork(after)}, q)
	woken := map[types.NamespacedName]bool{}
	for q.Len() > 0 {
		req, _ := q.Get()
		woken[req.NamespacedName] = true
		q.Done(req)
	}
	if !woken[before] || !woken[after] || len(woken) != 2 {
		t.Fatalf("woken %v, want %v and %v", woken, before, after)
	}
}

// TestReconcileHeld: a reconcile that starts within a hold reads nothing (the reconciler has no client here)
// and comes back when the hold ends.
func TestReconcileHeld(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	r := &PlacementManifestWorkReconciler{}
	hold(&r.memory, owner, time.Minute)
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: owner})
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > time.Minute {
		t.Fatalf("Reconcile = %+v, %v; want a requeue within the hold", res, err)
	}
}
