package scoreagent

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
)

// due says whether the generator is measured now and, when not, how long until it is. last is this agent's
// last measurement of the generator's current generation, or nil. Without one the status says when it was
// last measured, for an agent that restarted: that counts only when the status is of this generation and
// Valid, and the AddOnPlacementScore exists. Nothing is measured while the generator is not valid.
func due(gen *scoresv1alpha1.AddOnPlacementScoreGenerator, v verdict, last *measurement, scoreExists bool, s settings, now time.Time) (bool, time.Duration) {
	if !v.valid() {
		return false, 0
	}
	var since time.Time
	switch {
	case last != nil:
		since = last.at
	case validAtThisGeneration(gen) && gen.Status.LastMeasuredTime != nil && scoreExists:
		since = gen.Status.LastMeasuredTime.Time
	default:
		return true, 0
	}
	next := since.Add(s.interval)
	if !now.Before(next) {
		return true, 0
	}
	return false, next.Sub(now)
}

func validAtThisGeneration(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) bool {
	c := meta.FindStatusCondition(gen.Status.Conditions, scoresv1alpha1.ConditionValid)
	return gen.Status.ObservedGeneration == gen.Generation && c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen.Generation
}

// memory is the agent's one store of what it knows beyond the API: each generator's last measurement. It
// makes the schedule independent of a cache that has not yet caught up with the agent's own status write,
// and lets a deleted AddOnPlacementScore be written again without measuring.
type memory struct {
	mu   sync.Mutex
	last map[types.NamespacedName]*measurement
}

// lastOf is the last measurement of gen's current generation, or nil.
func (m *memory) lastOf(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) *measurement {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.last[types.NamespacedName{Namespace: gen.Namespace, Name: gen.Name}]
	if last == nil || last.uid != gen.UID || last.generation != gen.Generation {
		return nil
	}
	return last
}

func (m *memory) measured(key types.NamespacedName, meas *measurement) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[types.NamespacedName]*measurement{}
	}
	m.last[key] = meas
}

// forget drops what the agent remembers of a generator that is gone or no longer its own.
func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, key)
}
