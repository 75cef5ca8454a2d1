// Package scoreagent is the core of the reference score agent: it measures the scores an
// AddOnPlacementScoreGenerator asks for through plugins, and the agent writes them to the cluster's
// AddOnPlacementScore. The core knows no plugin: the latency probe (package latency) and the node headroom
// (package headroom) register like any other, so adding one never touches this package.
//
// The controller maps the generator's API types onto Request (a latency entry through latency.NewRequest, an
// otherPlugin entry as its plugin name, score name and options), validates every request first (a generator
// that asks for something it may not gets a condition saying why, not a probe), measures, and writes each
// Result with a validUntil from ValidUntil.
package scoreagent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// The bounds OCM puts on AddOnPlacementScore values.
const (
	MinScore int32 = -100
	MaxScore int32 = 100
)

// Request is one score to measure.
type Request struct {
	// Plugin names the plugin that measures it.
	Plugin string
	// ScoreName is the score's name in the AddOnPlacementScore.
	ScoreName string
	// Options are the plugin's options, as the generator spells them.
	Options map[string]string
}

// Result is one measured score.
type Result struct {
	// Value is the score, in [MinScore, MaxScore].
	Value int32
	// Raw is the measured fact for humans: "84ms", "3.5 cores free".
	Raw string
	// Message, when set, says what a reader of the score should know (for example that some runs failed).
	Message string
}

// Plugin measures one kind of score.
type Plugin interface {
	// Name is the name generators use to ask for this plugin.
	Name() string
	// Validate refuses options the plugin does not know or will not honour, saying why. It does no I/O, so
	// the controller can call it for every request before measuring any.
	Validate(req Request) error
	// Measure measures one score. It returns an error, and no score, when the measurement says nothing about
	// the cluster (the agent is stopping, the request is refused); a fact about the cluster, even a bad one,
	// is a Result.
	Measure(ctx context.Context, req Request) (Result, error)
}

// InvalidError is a request that is not measured: the generator asks for something a plugin refuses. The
// controller reports it in a condition.
type InvalidError struct {
	ScoreName string
	Err       error
}

func (e *InvalidError) Error() string {
	if e.ScoreName == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("score %q: %v", e.ScoreName, e.Err)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// Errors is several errors reported as one line, as a condition message wants them.
type Errors []error

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e Errors) Unwrap() []error { return e }

// pluginName is what a plugin may be called: a DNS label, as generators name it in YAML.
var pluginName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Registry holds the plugins by name. It is safe for concurrent use, though plugins are normally all
// registered at start.
type Registry struct {
	mu      sync.RWMutex
	plugins map[string]Plugin
}

// NewRegistry returns a registry holding the given plugins.
func NewRegistry(plugins ...Plugin) (*Registry, error) {
	r := &Registry{plugins: map[string]Plugin{}}
	for _, p := range plugins {
		if err := r.Register(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds a plugin. A second plugin with a name already registered is an error: which of two
// plugins measures a score must not depend on the order of registration.
func (r *Registry) Register(p Plugin) error {
	if p == nil {
		return errors.New("registering a nil plugin")
	}
	name := p.Name()
	if !pluginName.MatchString(name) {
		return fmt.Errorf("plugin name %q is not a DNS label (lower-case letters, digits and '-', at most 63)", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.plugins == nil {
		r.plugins = map[string]Plugin{}
	}
	if _, ok := r.plugins[name]; ok {
		return fmt.Errorf("plugin %q is already registered", name)
	}
	r.plugins[name] = p
	return nil
}

// Lookup returns the plugin registered under name.
func (r *Registry) Lookup(name string) (Plugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.plugins[name]
	return p, ok
}

// Names returns the registered plugins' names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.plugins))
	for n := range r.plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate checks one request: a score name, a registered plugin, and options the plugin accepts. Its
// error is an *InvalidError.
func (r *Registry) Validate(req Request) error {
	_, err := r.plugin(req)
	return err
}

// ValidateAll checks every request of a generator and that no two write the same score, reporting every
// problem at once (as Errors of *InvalidError) so one condition can list them.
func (r *Registry) ValidateAll(reqs []Request) error {
	var errs Errors
	seen := map[string]bool{}
	for _, req := range reqs {
		if err := r.Validate(req); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[req.ScoreName] {
			errs = append(errs, &InvalidError{ScoreName: req.ScoreName, Err: errors.New("is asked for twice; score names must be unique")})
		}
		seen[req.ScoreName] = true
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// Measure validates the request and measures it with its plugin. A plugin that returns a value outside
// [MinScore, MaxScore] is a bug reported as an error rather than clamped, so it is found.
func (r *Registry) Measure(ctx context.Context, req Request) (Result, error) {
	p, err := r.plugin(req)
	if err != nil {
		return Result{}, err
	}
	res, err := p.Measure(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("score %q: %w", req.ScoreName, err)
	}
	if res.Value < MinScore || res.Value > MaxScore {
		return Result{}, fmt.Errorf("score %q: plugin %q returned %d, outside [%d, %d]", req.ScoreName, req.Plugin, res.Value, MinScore, MaxScore)
	}
	return res, nil
}

func (r *Registry) plugin(req Request) (Plugin, error) {
	invalid := func(err error) error { return &InvalidError{ScoreName: req.ScoreName, Err: err} }
	if req.ScoreName == "" {
		return nil, invalid(errors.New("a score needs a name"))
	}
	if req.Plugin == "" {
		return nil, invalid(errors.New("names no plugin"))
	}
	p, ok := r.Lookup(req.Plugin)
	if !ok {
		return nil, invalid(fmt.Errorf("plugin %q is not known to this agent (it knows %s)", req.Plugin, strings.Join(r.Names(), ", ")))
	}
	if err := p.Validate(req); err != nil {
		return nil, invalid(err)
	}
	return p, nil
}
