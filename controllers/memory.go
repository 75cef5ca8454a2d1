package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
)

// expectationTTL bounds how long a reconcile waits for the cache to show this manager's own writes once the
// cache has stopped coming closer to them: neither shown more of them nor delivered a newer ManifestWork
// (workCache). A cache that is behind but catching up is waited for, since planning from it would only repeat
// the writes it has not shown yet: at 10 × 5,000 works the hub's watch fell more than a minute behind, and a
// wait of 30 s from the writes let the manager repeat 42,924 of its 50,000 creates (each answered
// AlreadyExists). A cache that delivers nothing is relisting (a watch the API server closed: at 50,000 works
// on this 2-core bench hub a relist took up to 4 minutes, and a bound of 2 minutes let 9,800 creates repeat)
// or broken; the bound is 5 minutes, as kube-controller-manager's expectations, which count from the writes.
const expectationTTL = 5 * time.Minute

// expectationCap bounds the whole wait from the writes, however the cache advances: a create the cache never
// shows must not hold the PlacementManifestWork back for as long as the hub is busy.
const expectationCap = 15 * time.Minute

// A PlacementManifestWork whose reconcile took at least paceFrom is not reconciled again for as long as that
// reconcile took, up to paceAtMost: while thousands of agents report, each report wakes it, and reconciling
// back to back would spend a core on recomputing every work, taking it from the API server the agents and
// writes need. A reconcile's result then waits at most one reconcile's time more; a small PlacementManifestWork
// (a reconcile of a few milliseconds) is never held.
const (
	paceFrom   = 50 * time.Millisecond
	paceAtMost = time.Second
)

// memory is everything the manager keeps of each PlacementManifestWork between reconciles, in one place with
// one forget (called when a PlacementManifestWork is finalized or found gone). None of it is on the API
// server, so a restart loses it; each part says what that costs.
type memory struct {
	mu    sync.Mutex
	byPMW map[types.NamespacedName]*pmwMemory
	// works is how far the cache of ManifestWorks has come, for every PlacementManifestWork's writes.
	works workCache
}

type pmwMemory struct {
	// generation and generationSeen time fan-out: when the current generation was first seen (zero once
	// measured). A restart skips one measurement.
	generation     int64
	generationSeen time.Time
	// writes are the ManifestWork writes the cache has not shown yet (see expectedWrite); writesUnseen of them
	// were unseen at writesAt, when they were written or when the cache last came closer to them. A restart
	// starts from a fresh cache, which shows them.
	writes       map[string]expectedWrite
	writesAt     time.Time
	writesUnseen int
	// writtenAt is when the writes were made (expectationCap).
	writtenAt time.Time
	// leavingSince is since when each leaving cluster has left the decisions (make before break). After a
	// restart the wait starts again: at most one more moveStrategy.timeout.
	leavingSince map[string]time.Time
	// unsettledSince is since when the Placement's decisions have been unsettled; zero when settled. After a
	// restart the wait starts again.
	unsettledSince time.Time
	// failover is each cluster's failover state; nil until first evaluated, then seeded from
	// status.failedOver, so a restart keeps failed-over clusters failed over.
	failover map[string]failover.State
	// delivered are the split shares this manager delivered, by cluster; deliveredKnown is false until it has
	// a record (after a restart it verifies the works' annotations against the status: sharesMatchStatus).
	delivered      map[string]map[string]int32
	deliveredKnown bool
	// overrides are spec.overrides compiled for overridesGeneration (or why they cannot be), so their CEL
	// expressions are compiled once per generation, not per reconcile. A restart compiles them again.
	overrides           *override.Set
	overridesErr        error
	overridesGeneration int64
	// rollbackName and rollbackSpec are the template-relevant spec recorded by the ControllerRevision named
	// rollbackName (the completed revision a failurePolicy Rollback returns to), read once around the cache,
	// which drops ControllerRevisions' data. A restart reads it again.
	rollbackName string
	rollbackSpec *workv1alpha1.PlacementManifestWorkSpec
	// failure is status.failedRevision and retriedRevision as last decided (failureKnown), so a reconcile that
	// reads a PlacementManifestWork whose status the cache does not show yet keeps the record. Seeded from
	// the status after a restart.
	failure      failureRecord
	failureKnown bool
	// quietUntil is when the next reconcile may start (see paceFrom). A restart starts unpaced.
	quietUntil time.Time
}

// get returns the PlacementManifestWork's memory, creating it; the caller holds mu.
func (m *memory) get(key types.NamespacedName) *pmwMemory {
	if m.byPMW == nil {
		m.byPMW = map[types.NamespacedName]*pmwMemory{}
	}
	p, ok := m.byPMW[key]
	if !ok {
		p = &pmwMemory{}
		m.byPMW[key] = p
	}
	return p
}

// forget drops everything kept of the PlacementManifestWork.
func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byPMW, key)
}

// reconciled records a reconcile that ended at now after running for took, holding the next one back as long
// (see paceFrom). A short one holds nothing back, nor does a failed one: the queue's backoff spaces its
// retries, and a hold would reset that backoff. It creates no memory: a PlacementManifestWork forgotten by
// this reconcile stays forgotten.
func (m *memory) reconciled(key types.NamespacedName, took time.Duration, failed bool, now time.Time) {
	if took < paceFrom || failed {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.byPMW[key]; ok {
		p.quietUntil = now.Add(min(took, paceAtMost))
	}
}

// paced returns how long the PlacementManifestWork's next reconcile is still held back; zero when it may run.
func (m *memory) paced(key types.NamespacedName, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.byPMW[key]; ok && now.Before(p.quietUntil) {
		return p.quietUntil.Sub(now)
	}
	return 0
}

// generationSeen records when a generation was first seen.
func (m *memory) generationSeen(key types.NamespacedName, generation int64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	if p.generation != generation {
		p.generation, p.generationSeen = generation, now
	}
}

// fanOutDone returns how long ago the generation was first seen, once; false when it was already measured.
func (m *memory) fanOutDone(key types.NamespacedName, generation int64, now time.Time) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.byPMW[key]
	if !ok || p.generation != generation || p.generationSeen.IsZero() {
		return 0, false
	}
	d := now.Sub(p.generationSeen)
	p.generationSeen = time.Time{}
	return d, true
}

// expectWrites records the writes one reconcile made, by cluster, at now.
func (m *memory) expectWrites(key types.NamespacedName, writes map[string]expectedWrite, now time.Time) {
	if len(writes) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	p.writes, p.writesAt, p.writesUnseen, p.writtenAt = writes, now, len(writes), now
}

// pendingWrites returns how long to wait at most for the cache, given the PlacementManifestWork's cached works
// by cluster and when the cache had last advanced before they were listed (m.works.lastAdvance()), or zero when
// it shows every expected write (or has come no closer to them for expectationTTL), forgetting them then.
func (m *memory) pendingWrites(key types.NamespacedName, cached map[string]*workv1.ManifestWork, cacheAdvancedAt, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.byPMW[key]
	if !ok || p.writes == nil {
		return 0
	}
	unseen := 0
	for cluster, w := range p.writes {
		if !w.seenIn(cached[cluster]) {
			unseen++
		}
	}
	if unseen < p.writesUnseen {
		p.writesAt, p.writesUnseen = now, unseen
	}
	if cacheAdvancedAt.After(p.writesAt) {
		p.writesAt = cacheAdvancedAt
	}
	left := min(expectationTTL-now.Sub(p.writesAt), expectationCap-now.Sub(p.writtenAt))
	if unseen > 0 && left > 0 {
		return left
	}
	p.writes = nil
	return 0
}

// leaving records the clusters leaving now and returns since when each has been leaving; clusters no longer
// leaving are forgotten.
func (m *memory) leaving(key types.NamespacedName, leaving []string, now time.Time) map[string]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	if len(leaving) == 0 {
		p.leavingSince = nil
		return nil
	}
	next := make(map[string]time.Time, len(leaving))
	for _, c := range leaving {
		if t, ok := p.leavingSince[c]; ok {
			next[c] = t
		} else {
			next[c] = now
		}
	}
	p.leavingSince = next
	return next
}

// unsettled returns since when the decisions have been unsettled, starting now if they were settled.
func (m *memory) unsettled(key types.NamespacedName, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	if p.unsettledSince.IsZero() {
		p.unsettledSince = now
	}
	return p.unsettledSince
}

// settled records that the decisions are settled.
func (m *memory) settled(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.byPMW[key]; ok {
		p.unsettledSince = time.Time{}
	}
}

// failoverStates returns a copy of the failover states, seeding them from the status when there are none.
func (m *memory) failoverStates(key types.NamespacedName, st *workv1alpha1.PlacementManifestWorkStatus) map[string]failover.State {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	if p.failover == nil {
		p.failover = make(map[string]failover.State, len(st.FailedOver))
		for _, f := range st.FailedOver {
			p.failover[f.Cluster] = failover.State{FailedOver: true, FailedOverSince: f.Since.Time}
		}
	}
	out := make(map[string]failover.State, len(p.failover))
	for c, s := range p.failover {
		out[c] = s
	}
	return out
}

func (m *memory) setFailoverStates(key types.NamespacedName, states map[string]failover.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if states == nil {
		states = map[string]failover.State{}
	}
	m.get(key).failover = states
}

// deliveredShares returns the record of delivered shares, and false when there is none; the map is not
// modified afterwards.
func (m *memory) deliveredShares(key types.NamespacedName) (map[string]map[string]int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.byPMW[key]
	if !ok || !p.deliveredKnown {
		return nil, false
	}
	return p.delivered, true
}

// setDeliveredShares replaces the record of delivered shares.
func (m *memory) setDeliveredShares(key types.NamespacedName, shares map[string]map[string]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	p.delivered, p.deliveredKnown = shares, true
}

// compiledOverrides returns the PlacementManifestWork's overrides compiled for generation, compiling them (with
// compile, outside the lock) only when the generation is new.
func (m *memory) compiledOverrides(key types.NamespacedName, generation int64, compile func() (*override.Set, error)) (*override.Set, error) {
	m.mu.Lock()
	p := m.get(key)
	if p.overridesGeneration == generation && (p.overrides != nil || p.overridesErr != nil) {
		defer m.mu.Unlock()
		return p.overrides, p.overridesErr
	}
	m.mu.Unlock()
	set, err := compile()
	m.mu.Lock()
	defer m.mu.Unlock()
	p = m.get(key)
	p.overrides, p.overridesErr, p.overridesGeneration = set, err, generation
	return set, err
}

// revisionSpec returns the spec recorded by the named ControllerRevision, reading it with read only when the
// memory holds another revision's (or none). A failed read is not remembered.
func (m *memory) revisionSpec(key types.NamespacedName, name string, read func() (*workv1alpha1.PlacementManifestWorkSpec, error)) (*workv1alpha1.PlacementManifestWorkSpec, error) {
	m.mu.Lock()
	p := m.get(key)
	if p.rollbackName == name && p.rollbackSpec != nil {
		defer m.mu.Unlock()
		return p.rollbackSpec, nil
	}
	m.mu.Unlock()
	spec, err := read()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p = m.get(key)
	p.rollbackName, p.rollbackSpec = name, spec
	return spec, nil
}

// failureRecord returns the failure record last decided, seeding it from the status when there is none.
func (m *memory) failureRecord(key types.NamespacedName, st *workv1alpha1.PlacementManifestWorkStatus) failureRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	if !p.failureKnown {
		p.failure, p.failureKnown = failureRecord{failed: st.FailedRevision.DeepCopy(), retried: st.RetriedRevision}, true
	}
	return failureRecord{failed: p.failure.failed.DeepCopy(), retried: p.failure.retried}
}

// setFailureRecord replaces the failure record.
func (m *memory) setFailureRecord(key types.NamespacedName, r failureRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.get(key)
	p.failure, p.failureKnown = failureRecord{failed: r.failed.DeepCopy(), retried: r.retried}, true
}
