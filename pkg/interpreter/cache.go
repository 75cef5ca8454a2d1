package interpreter

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// Cache keeps the compiled generation of each interpreter, so its expressions are compiled once per
// generation, not per reconcile or cluster, and the last generation of each that compiled, which Resolve keeps
// using while later ones do not compile. It holds them in memory only: a manager that starts again knows no
// last good generation. It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries map[types.UID]cached
	// webhooks calls the interpreters' webhooks; nil: a webhook fails as unreachable.
	webhooks Webhooks
}

type cached struct {
	generation  int64
	interpreter *Interpreter
	problem     *Problem
	// good is the latest generation that compiled: this one, or an earlier one while this one does not.
	good *goodGeneration
}

// goodGeneration is a generation of an interpreter that compiled, with the target it described.
type goodGeneration struct {
	generation  int64
	target      workv1alpha1.InterpreterTarget
	interpreter *Interpreter
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: map[types.UID]cached{}}
}

// NewCacheWithWebhooks returns an empty cache whose interpreters call their webhooks through w.
func NewCacheWithWebhooks(w Webhooks) *Cache {
	return &Cache{entries: map[types.UID]cached{}, webhooks: w}
}

// Get returns ri compiled (see Compile), compiling it when its UID and generation are new to the cache; a
// generation that does not compile is not compiled again either. fallback is assumed to be the same for one
// generation (the built-in interpreter of its target).
func (c *Cache) Get(ri *workv1alpha1.ResourceInterpreter, fallback health.Interpreter) (*Interpreter, error) {
	in, p, _ := c.get(ri, fallback)
	if p != nil {
		return nil, p
	}
	return in, nil
}

// get returns ri's generation compiled, or its problem, and the latest generation of ri that compiled (nil
// when none has since the cache forgot ri or was made).
func (c *Cache) get(ri *workv1alpha1.ResourceInterpreter, fallback health.Interpreter) (*Interpreter, *Problem, *goodGeneration) {
	c.mu.Lock()
	e, ok := c.entries[ri.UID]
	c.mu.Unlock()
	if !ok || e.generation != ri.Generation {
		// Compiled outside the lock: two callers may compile the same generation at once, and both results
		// are the same.
		in, p := compileInterpreter(ri, fallback, c.webhooks)
		c.mu.Lock()
		e = c.entries[ri.UID] // the latest, with the good generation another caller may have kept meanwhile
		e.generation, e.interpreter, e.problem = ri.Generation, in, p
		// A stale read of an earlier generation does not replace a later good one.
		if p == nil && (e.good == nil || e.good.generation <= ri.Generation) {
			e.good = &goodGeneration{generation: ri.Generation, target: *ri.Spec.Target.DeepCopy(), interpreter: in}
		}
		c.entries[ri.UID] = e
		c.mu.Unlock()
	}
	return e.interpreter, e.problem, e.good
}

// Retain forgets the interpreters whose UIDs are not in live: those deleted.
func (c *Cache) Retain(live []types.UID) {
	keep := make(map[types.UID]bool, len(live))
	for _, uid := range live {
		keep[uid] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid := range c.entries {
		if !keep[uid] {
			delete(c.entries, uid)
		}
	}
}

// Len is the number of interpreters the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
