package controllers

import (
	"errors"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
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
		{"update, cached at the version it returned", expectedWrite{staleVersion: "5", version: "9"}, cachedWork("u", "9", false), true},
		{"update, cached past it (an agent's report since)", expectedWrite{staleVersion: "5", version: "9"}, cachedWork("u", "12", false), true},
		// A relist replaces the cached works one by one: the cache holds newer works than this one.
		{"update, cached at the replaced version", expectedWrite{staleVersion: "5", version: "9"}, cachedWork("u", "5", false), false},
		// After a conflict the update is written from a fresh read (adopt): the cache may hold a version newer
		// than the one the plan replaced and still older than the write.
		{"update after a fresh read, cached between the two", expectedWrite{staleVersion: "5", version: "9"}, cachedWork("u", "7", false), false},
		{"update, versions that do not compare", expectedWrite{staleVersion: "a", version: "b"}, cachedWork("u", "c", false), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.write.seenIn(tc.cached); got != tc.want {
				t.Fatalf("seenIn = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMemoryWriteExpectations(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	t0 := time.Unix(1000, 0)
	var x memory
	if got := x.pendingWrites(owner, nil, time.Time{}, t0); got != 0 {
		t.Fatalf("nothing expected: pending = %v, want 0", got)
	}
	x.expectWrites(owner, map[string]expectedWrite{"a": {}, "b": {staleVersion: "5"}}, t0)

	partly := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false), "b": cachedWork("ub", "5", false)}
	// The cache showed a since the writes: the wait counts from now.
	if got := x.pendingWrites(owner, partly, time.Time{}, t0.Add(time.Second)); got != expectationTTL {
		t.Fatalf("a seen, b not: pending = %v, want %v", got, expectationTTL)
	}
	if got := x.pendingWrites(types.NamespacedName{Namespace: "ns", Name: "other"}, nil, time.Time{}, t0); got != 0 {
		t.Fatalf("another owner: pending = %v, want 0", got)
	}
	caught := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false), "b": cachedWork("ub", "6", false)}
	if got := x.pendingWrites(owner, caught, time.Time{}, t0.Add(2*time.Second)); got != 0 {
		t.Fatalf("all seen: pending = %v, want 0", got)
	}
	// Once seen, the expectations are forgotten: an older cache no longer holds the owner back.
	if got := x.pendingWrites(owner, partly, time.Time{}, t0.Add(3*time.Second)); got != 0 {
		t.Fatalf("after catching up: pending = %v, want 0", got)
	}

	// A write the cache never shows holds the owner back for expectationTTL at most.
	x.expectWrites(owner, map[string]expectedWrite{"c": {}}, t0)
	if got := x.pendingWrites(owner, nil, time.Time{}, t0.Add(expectationTTL-time.Millisecond)); got != time.Millisecond {
		t.Fatalf("just before the TTL: pending = %v, want 1ms", got)
	}
	if got := x.pendingWrites(owner, nil, time.Time{}, t0.Add(expectationTTL)); got != 0 {
		t.Fatalf("at the TTL: pending = %v, want 0", got)
	}

	// A cache that is behind but shows more of the writes is waited for: expectationTTL from the last time it
	// showed more, not from the writes (planning from it would repeat the writes it has not shown).
	x.expectWrites(owner, map[string]expectedWrite{"a": {}, "b": {}, "c": {}}, t0)
	some := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false)}
	if got := x.pendingWrites(owner, some, time.Time{}, t0.Add(20*time.Second)); got != expectationTTL {
		t.Fatalf("the cache showed more: pending = %v, want %v", got, expectationTTL)
	}
	if got := x.pendingWrites(owner, some, time.Time{}, t0.Add(expectationTTL+15*time.Second)); got != 5*time.Second {
		t.Fatalf("past the TTL from the writes, not from the last progress: pending = %v, want 5s", got)
	}
	if got := x.pendingWrites(owner, some, time.Time{}, t0.Add(expectationTTL+20*time.Second)); got != 0 {
		t.Fatalf("no progress for the TTL: pending = %v, want 0", got)
	}
	if got := x.pendingWrites(owner, nil, time.Time{}, t0.Add(expectationTTL+21*time.Second)); got != 0 {
		t.Fatalf("once given up, forgotten: pending = %v, want 0", got)
	}

	// A cache far behind, on its way to this owner's writes through other works' events, is waited for while
	// it advances; each work shows its update once cached at or past the version the update returned.
	var y memory
	y.expectWrites(owner, map[string]expectedWrite{"a": {staleVersion: "1", version: "200"}, "b": {staleVersion: "2", version: "210"}}, t0)
	behind := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "1", false), "b": cachedWork("ub", "2", false)}
	y.works.observed("150", t0.Add(20*time.Second))
	if got := y.pendingWrites(owner, behind, y.works.lastAdvance(), t0.Add(40*time.Second)); got != expectationTTL-20*time.Second {
		t.Fatalf("the cache advanced 20 s ago: pending = %v, want %v", got, expectationTTL-20*time.Second)
	}
	y.works.observed("180", t0.Add(expectationTTL+15*time.Second))
	if got := y.pendingWrites(owner, behind, y.works.lastAdvance(), t0.Add(expectationTTL+20*time.Second)); got != expectationTTL-5*time.Second {
		t.Fatalf("past the TTL from the writes, the cache advancing: pending = %v, want %v", got, expectationTTL-5*time.Second)
	}
	// A relist replacing the cache's works: the cache has delivered works newer than both updates, and still
	// holds these two as they were.
	y.works.observed("300", t0.Add(expectationTTL+21*time.Second))
	if got := y.pendingWrites(owner, behind, y.works.lastAdvance(), t0.Add(expectationTTL+22*time.Second)); got != expectationTTL-time.Second {
		t.Fatalf("the cache past both updates, its works not yet replaced: pending = %v, want %v", got, expectationTTL-time.Second)
	}
	aShown := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "200", false), "b": cachedWork("ub", "2", false)}
	if got := y.pendingWrites(owner, aShown, y.works.lastAdvance(), t0.Add(expectationTTL+23*time.Second)); got != expectationTTL {
		t.Fatalf("a shown: pending = %v, want %v", got, expectationTTL)
	}
	bothShown := map[string]*workv1.ManifestWork{"a": cachedWork("ua", "200", false), "b": cachedWork("ub", "215", false)}
	if got := y.pendingWrites(owner, bothShown, y.works.lastAdvance(), t0.Add(expectationTTL+24*time.Second)); got != 0 {
		t.Fatalf("both shown (b past its update): pending = %v, want 0", got)
	}

	// A create the cache never lists ends the wait expectationCap after the writes, however the cache advances.
	var z memory
	z.expectWrites(owner, map[string]expectedWrite{"c": {}}, t0)
	for at := time.Minute; at < expectationCap; at += time.Minute {
		z.works.observed(strconv.Itoa(300+int(at/time.Minute)), t0.Add(at))
		if got := z.pendingWrites(owner, nil, z.works.lastAdvance(), t0.Add(at)); got <= 0 {
			t.Fatalf("%v after the writes, the cache advancing: pending = %v, want more than 0", at, got)
		}
	}
	if got := z.pendingWrites(owner, nil, z.works.lastAdvance(), t0.Add(expectationCap)); got != 0 {
		t.Fatalf("at the cap: pending = %v, want 0", got)
	}
}

func TestWorkCache(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var c workCache
	if v, at := c.newest, c.lastAdvance(); v != "" || !at.IsZero() {
		t.Fatalf("nothing delivered: %q at %v", v, at)
	}
	steps := []struct {
		version  string
		wantNew  string
		wantSecs int
	}{
		{"not-a-number", "", 0},
		{"99", "99", 2},
		{"100", "100", 3},
		{"98", "100", 3},  // an older version (an update's old object, a tombstone) leaves it
		{"100", "100", 3}, // the same version is no advance
		{"1000", "1000", 6},
		{"0100", "1000", 6}, // not well formed
	}
	// Step i is delivered at t0 + i+1 seconds.
	for i, s := range steps {
		c.observed(s.version, t0.Add(time.Duration(i+1)*time.Second))
		v, at := c.newest, c.lastAdvance()
		if want := t0.Add(time.Duration(s.wantSecs) * time.Second); v != s.wantNew || (s.wantSecs > 0 && !at.Equal(want)) {
			t.Fatalf("after %q: %q at %v, want %q at %v", s.version, v, at, s.wantNew, want)
		}
	}
}

func TestMemoryLeaving(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	t0 := time.Unix(1000, 0)
	var l memory
	got := l.leaving(owner, []string{"a"}, t0)
	if !got["a"].Equal(t0) {
		t.Fatalf("a first seen leaving at %v, want %v", got["a"], t0)
	}
	got = l.leaving(owner, []string{"a", "b"}, t0.Add(time.Minute))
	if !got["a"].Equal(t0) || !got["b"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("since = %v, want a at t0 and b a minute later", got)
	}
	// a came back into the decisions: leaving again later starts a new wait.
	l.leaving(owner, []string{"b"}, t0.Add(2*time.Minute))
	got = l.leaving(owner, []string{"a", "b"}, t0.Add(3*time.Minute))
	if !got["a"].Equal(t0.Add(3*time.Minute)) || !got["b"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("since = %v, want a restarted at 3m and b kept at 1m", got)
	}
	if got := l.leaving(owner, nil, t0.Add(4*time.Minute)); got != nil {
		t.Fatalf("nothing leaving: since = %v, want nil", got)
	}
}

func TestMemoryForgetDropsEverything(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	other := types.NamespacedName{Namespace: "ns", Name: "other"}
	t0 := time.Unix(1000, 0)
	var m memory
	fill := func(k types.NamespacedName) {
		m.generationSeen(k, 1, t0)
		m.expectWrites(k, map[string]expectedWrite{"a": {}}, t0)
		m.leaving(k, []string{"a"}, t0)
		m.unsettled(k, t0)
		m.setFailoverStates(k, map[string]failover.State{"a": {FailedOver: true, FailedOverSince: t0}})
		m.setDeliveredShares(k, map[string]map[string]int32{"a": {"x": 1}})
		_, _ = m.compiledOverrides(k, 1, func() (*override.Set, error) { return &override.Set{}, nil })
	}
	fill(key)
	fill(other)
	m.forget(key)

	later := t0.Add(time.Minute)
	if _, ok := m.fanOutDone(key, 1, later); ok {
		t.Error("fan-out clock kept")
	}
	if got := m.pendingWrites(key, nil, time.Time{}, later); got != 0 {
		t.Errorf("write expectations kept: %v", got)
	}
	if got := m.leaving(key, []string{"a"}, later); !got["a"].Equal(later) {
		t.Errorf("leaving clock kept: %v", got)
	}
	if got := m.unsettled(key, later); !got.Equal(later) {
		t.Errorf("unsettled clock kept: %v", got)
	}
	if got := m.failoverStates(key, &workv1alpha1.PlacementManifestWorkStatus{}); len(got) != 0 {
		t.Errorf("failover states kept: %v", got)
	}
	if _, ok := m.deliveredShares(key); ok {
		t.Error("delivered shares kept")
	}
	compiled := false
	_, _ = m.compiledOverrides(key, 1, func() (*override.Set, error) { compiled = true; return nil, nil })
	if !compiled {
		t.Error("compiled overrides kept")
	}
	// The other PlacementManifestWork keeps all of its own.
	if _, ok := m.fanOutDone(other, 1, later); !ok {
		t.Error("the other's fan-out clock was lost")
	}
	if _, ok := m.deliveredShares(other); !ok {
		t.Error("the other's delivered shares were lost")
	}
}

func TestMemoryFailoverSeededFromStatus(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	since := time.Unix(1000, 0).UTC()
	var m memory
	st := &workv1alpha1.PlacementManifestWorkStatus{FailedOver: []workv1alpha1.FailedOverCluster{{Cluster: "a", Since: metav1.NewTime(since)}}}
	got := m.failoverStates(key, st)
	if !got["a"].FailedOver || !got["a"].FailedOverSince.Equal(since) || len(got) != 1 {
		t.Fatalf("seeded states = %v, want a failed over since %v", got, since)
	}
	// Once the manager has its own record, the status no longer seeds it.
	m.setFailoverStates(key, nil)
	if got := m.failoverStates(key, st); len(got) != 0 {
		t.Fatalf("after a record: states = %v, want none", got)
	}
}

// Overrides are compiled once per generation, a failure too, and again when the generation changes.
func TestMemoryCompiledOverridesPerGeneration(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	var m memory
	calls := 0
	compile := func(err error) func() (*override.Set, error) {
		return func() (*override.Set, error) {
			calls++
			if err != nil {
				return nil, err
			}
			return &override.Set{}, nil
		}
	}
	boom := errors.New("boom")
	steps := []struct {
		generation int64
		err        error
		wantCalls  int
		wantErr    error
	}{
		{generation: 1, err: boom, wantCalls: 1, wantErr: boom},
		{generation: 1, wantCalls: 1, wantErr: boom}, // the failure is remembered for the generation
		{generation: 2, wantCalls: 2},
		{generation: 2, err: boom, wantCalls: 2},
		{generation: 3, wantCalls: 3},
	}
	for i, s := range steps {
		_, err := m.compiledOverrides(key, s.generation, compile(s.err))
		if calls != s.wantCalls || !errors.Is(err, s.wantErr) {
			t.Errorf("step %d: %d compilations and error %v, want %d and %v", i, calls, err, s.wantCalls, s.wantErr)
		}
	}
}

func TestMemoryPacing(t *testing.T) {
	owner := types.NamespacedName{Namespace: "ns", Name: "pmw"}
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name     string
		known    bool // the PlacementManifestWork has memory (a reconcile of it recorded something)
		took     time.Duration
		failed   bool
		at       time.Duration // when paced is asked, after the reconcile ended
		wantHeld time.Duration
	}{
		{"a short reconcile holds nothing back", true, 10 * time.Millisecond, false, 0, 0},
		{"a long one holds the next back for as long as it took", true, 300 * time.Millisecond, false, 0, 300 * time.Millisecond},
		{"partly waited", true, 300 * time.Millisecond, false, 100 * time.Millisecond, 200 * time.Millisecond},
		{"waited out", true, 300 * time.Millisecond, false, 300 * time.Millisecond, 0},
		{"at most paceAtMost", true, 20 * time.Second, false, 0, paceAtMost},
		{"a failed one leaves its retries to the queue's backoff", true, 300 * time.Millisecond, true, 0, 0},
		{"a forgotten PlacementManifestWork stays forgotten", false, 300 * time.Millisecond, false, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var x memory
			if tc.known {
				x.generationSeen(owner, 1, t0)
			}
			x.reconciled(owner, tc.took, tc.failed, t0)
			if got := x.paced(owner, t0.Add(tc.at)); got != tc.wantHeld {
				t.Fatalf("paced = %v, want %v", got, tc.wantHeld)
			}
			if _, ok := x.byPMW[owner]; ok != tc.known {
				t.Fatalf("memory kept = %v, want %v", ok, tc.known)
			}
		})
	}
}
