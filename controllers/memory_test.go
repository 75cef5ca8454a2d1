package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
)

func cachedWork(uid, version string, deleting bool) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), ResourceVersion: version}}
	if deleting {
		w.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return w
}

func TestExpectedWriteSeenIn(t *testing.T) {
	cases := []struct {
		name   string
		write  expectedWrite
		cached *workv1.ManifestWork
		want   bool
	}{
		{"create, not cached yet", expectedWrite{}, nil, false},
		{"create, cached", expectedWrite{}, cachedWork("u", "5", false), true},
		{"update, cache still has the replaced version", expectedWrite{staleVersion: "5"}, cachedWork("u", "5", false), false},
		{"update, cache has a later version", expectedWrite{staleVersion: "5"}, cachedWork("u", "9", false), true},
		{"update, work gone since", expectedWrite{staleVersion: "5"}, nil, true},
		{"delete, cache still has the work", expectedWrite{deletedUID: "u"}, cachedWork("u", "5", false), false},
		{"delete, cache has it terminating", expectedWrite{deletedUID: "u"}, cachedWork("u", "6", true), true},
		{"delete, gone", expectedWrite{deletedUID: "u"}, nil, true},
		{"delete, a new work of the same name", expectedWrite{deletedUID: "u"}, cachedWork("v", "7", false), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.write.seenIn(tc.cached); got != tc.want {
				t.Fatalf("seenIn = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWriteExpectations(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	t0 := time.Unix(1000, 0)
	var x writeExpectations
	if got := x.pending(owner, nil, t0); got != 0 {
		t.Fatalf("nothing expected: pending = %v, want 0", got)
	}
	x.expect(owner, map[string]expectedWrite{"a": {}, "b": {staleVersion: "5"}}, t0)

	partly := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false), "b": cachedWork("ub", "5", false)}
	if got := x.pending(owner, partly, t0.Add(time.Second)); got != expectationTTL-time.Second {
		t.Fatalf("b not seen: pending = %v, want %v", got, expectationTTL-time.Second)
	}
	if got := x.pending(types.NamespacedName{Namespace: "ns", Name: "other"}, nil, t0); got != 0 {
		t.Fatalf("another owner: pending = %v, want 0", got)
	}
	caught := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false), "b": cachedWork("ub", "6", false)}
	if got := x.pending(owner, caught, t0.Add(2*time.Second)); got != 0 {
		t.Fatalf("all seen: pending = %v, want 0", got)
	}
	// Once seen, the expectations are forgotten: an older cache no longer holds the owner back.
	if got := x.pending(owner, partly, t0.Add(3*time.Second)); got != 0 {
		t.Fatalf("after catching up: pending = %v, want 0", got)
	}

	// A write the cache never shows holds the owner back for expectationTTL at most.
	x.expect(owner, map[string]expectedWrite{"c": {}}, t0)
	if got := x.pending(owner, nil, t0.Add(expectationTTL-time.Millisecond)); got != time.Millisecond {
		t.Fatalf("just before the TTL: pending = %v, want 1ms", got)
	}
	if got := x.pending(owner, nil, t0.Add(expectationTTL)); got != 0 {
		t.Fatalf("at the TTL: pending = %v, want 0", got)
	}
}

func TestLeavingClock(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	t0 := time.Unix(1000, 0)
	var l leavingClock
	got := l.observe(owner, []string{"a"}, t0)
	if !got["a"].Equal(t0) {
		t.Fatalf("a first seen leaving at %v, want %v", got["a"], t0)
	}
	got = l.observe(owner, []string{"a", "b"}, t0.Add(time.Minute))
	if !got["a"].Equal(t0) || !got["b"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("since = %v, want a at t0 and b a minute later", got)
	}
	// a came back into the decisions: leaving again later starts a new wait.
	l.observe(owner, []string{"b"}, t0.Add(2*time.Minute))
	got = l.observe(owner, []string{"a", "b"}, t0.Add(3*time.Minute))
	if !got["a"].Equal(t0.Add(3*time.Minute)) || !got["b"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("since = %v, want a restarted at 3m and b kept at 1m", got)
	}
	if got := l.observe(owner, nil, t0.Add(4*time.Minute)); got != nil {
		t.Fatalf("nothing leaving: since = %v, want nil", got)
	}
}
