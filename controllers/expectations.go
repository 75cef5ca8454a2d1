package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
)

// expectationTTL bounds how long a reconcile waits for the cache to show this manager's own writes. A write
// the cache can never show (a created work deleted at once by someone else) must not stall the
// PlacementManifestWork for longer.
const expectationTTL = 30 * time.Second

// expectedWrite is a ManifestWork write that succeeded and that the cache must show before the next plan.
type expectedWrite struct {
	// staleVersion is the resourceVersion the update replaced; empty for a create.
	staleVersion string
	// deletedUID is the UID of a deleted work; empty for a create or update.
	deletedUID types.UID
}

// seenIn says whether the cached work of the cluster (nil when none) reflects the write. The watch delivers
// versions in order, so any version other than the replaced one is the written one or newer.
func (e expectedWrite) seenIn(cached *workv1.ManifestWork) bool {
	switch {
	case e.deletedUID != "":
		return cached == nil || cached.UID != e.deletedUID || !cached.DeletionTimestamp.IsZero()
	case e.staleVersion != "":
		return cached == nil || cached.ResourceVersion != e.staleVersion
	default:
		return cached != nil
	}
}

// writeExpectations remembers, per PlacementManifestWork, the ManifestWork writes the cache has not shown yet,
// as Kubernetes' ReplicaSet controller does: planning from a cache without them would write the same works again,
// only to be refused (AlreadyExists, Conflict, NotFound).
type writeExpectations struct {
	mu      sync.Mutex
	byOwner map[types.NamespacedName]pendingWrites
}

type pendingWrites struct {
	at     time.Time
	writes map[string]expectedWrite
}

// expect records the writes one reconcile made, by cluster, at now.
func (x *writeExpectations) expect(owner types.NamespacedName, writes map[string]expectedWrite, now time.Time) {
	if len(writes) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byOwner == nil {
		x.byOwner = map[types.NamespacedName]pendingWrites{}
	}
	x.byOwner[owner] = pendingWrites{at: now, writes: writes}
}

// pending returns how long to wait at most for the cache, given the owner's cached works by cluster, or zero
// when it shows every expected write (or waited long enough), forgetting them then.
func (x *writeExpectations) pending(owner types.NamespacedName, cached map[string]*workv1.ManifestWork, now time.Time) time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	p, ok := x.byOwner[owner]
	if !ok {
		return 0
	}
	left := expectationTTL - now.Sub(p.at)
	if left > 0 {
		for cluster, w := range p.writes {
			if !w.seenIn(cached[cluster]) {
				return left
			}
		}
	}
	delete(x.byOwner, owner)
	return 0
}

func (x *writeExpectations) forget(owner types.NamespacedName) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.byOwner, owner)
}

// leavingClock remembers since when each leaving cluster of a PlacementManifestWork has left its decisions, so
// make before break can bound the wait without writing to the leaving works. After a restart the wait starts
// again: at most one more moveStrategy.timeout.
type leavingClock struct {
	mu    sync.Mutex
	since map[types.NamespacedName]map[string]time.Time
}

// observe records the clusters leaving now and returns since when each has been leaving; clusters no longer
// leaving are forgotten.
func (l *leavingClock) observe(owner types.NamespacedName, leaving []string, now time.Time) map[string]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.since[owner]
	if len(leaving) == 0 {
		delete(l.since, owner)
		return nil
	}
	next := make(map[string]time.Time, len(leaving))
	for _, c := range leaving {
		if t, ok := prev[c]; ok {
			next[c] = t
		} else {
			next[c] = now
		}
	}
	if l.since == nil {
		l.since = map[types.NamespacedName]map[string]time.Time{}
	}
	l.since[owner] = next
	return next
}

func (l *leavingClock) forget(owner types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.since, owner)
}

// firstSeen remembers, per PlacementManifestWork, since when a condition has held.
type firstSeen struct {
	mu    sync.Mutex
	since map[types.NamespacedName]time.Time
}

// observe returns since when the condition has held, starting now if it did not.
func (f *firstSeen) observe(owner types.NamespacedName, now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.since[owner]; ok {
		return t
	}
	if f.since == nil {
		f.since = map[types.NamespacedName]time.Time{}
	}
	f.since[owner] = now
	return now
}

func (f *firstSeen) forget(owner types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.since, owner)
}
