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

// TestWorkEventsPaced: a work's event wakes its PlacementManifestWork at once, unless that one is held back by
// a long reconcile; then the event waits in the queue for the hold's end instead of waking a reconcile early.
func TestWorkEventsPaced(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: "pmw-x",
		Annotations: map[string]string{workv1alpha1.AnnotationOwner: owner.String()}}}
	for _, tc := range []struct {
		name string
		took time.Duration // of the PlacementManifestWork's last reconcile, just ended
		now  bool          // whether the request is in the queue at once
	}{
		{"not held", 0, true},
		{"a short reconcile holds nothing back", 10 * time.Millisecond, true},
		{"held by a long reconcile", 300 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &PlacementManifestWorkReconciler{}
			r.memory.generationSeen(owner, 1, time.Now())
			r.memory.reconciled(owner, tc.took, time.Now())
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			r.workEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: work, ObjectNew: work}, q)
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

// TestReconcileHeld: a reconcile that starts within a hold reads nothing (the reconciler has no client here)
// and comes back when the hold ends.
func TestReconcileHeld(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	r := &PlacementManifestWorkReconciler{}
	r.memory.generationSeen(owner, 1, time.Now())
	r.memory.reconciled(owner, 300*time.Millisecond, time.Now())
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: owner})
	if err != nil || res.RequeueAfter <= 0 || res.RequeueAfter > 300*time.Millisecond {
		t.Fatalf("Reconcile = %+v, %v; want a requeue within the hold", res, err)
	}
}
