package latency

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// Name is the plugin's name: the generator's spec.latencies entries are requests to it.
const Name = "latency"

// The plugin's options, as NewRequest writes them and a generator's otherPlugin entry may too.
const (
	OptionURL             = "url"
	OptionRuns            = "runs"
	OptionWaitBetweenRuns = "waitBetweenRuns"
	OptionTimeout         = "timeout"
	OptionHalfMillis      = "halfMillis"
)

// Defaults and bounds of the options. The defaults are the API's (api/scores/v1alpha1), so an option left
// out here means what a field left out of a generator means; the bounds are the ones the generator's CRD
// enforces (TestBoundsMatchTheCRD holds them to config/crd/bases), so the agent refuses nothing the API
// admits and admits nothing it refuses. They keep one generator from occupying the agent: at most 10 runs
// of 30 s, 60 s apart. A request that asks for more is refused, not cut down to size, so what is measured
// is always what was asked for.
const (
	DefaultRuns            = scoresv1alpha1.DefaultRuns
	MinRuns                = 1
	MaxRuns                = 10
	DefaultWaitBetweenRuns = scoresv1alpha1.DefaultWaitBetweenRuns
	MaxWaitBetweenRuns     = time.Minute
	DefaultTimeout         = scoresv1alpha1.DefaultProbeTimeout
	MinTimeout             = 100 * time.Millisecond
	MaxTimeout             = 30 * time.Second
	MinHalfMillis          = 1
	MaxHalfMillis          = 600000
	MaxURLLength           = 2048
)

// Probe is one latency measurement, as a generator's latency entry asks for it.
type Probe struct {
	// URL is fetched with GET: http or https.
	URL string
	// Runs is how many times; zero means DefaultRuns.
	Runs int32
	// WaitBetweenRuns is the pause between the end of one run and the start of the next; zero (the default)
	// is none, each run still opening its own connection.
	WaitBetweenRuns time.Duration
	// Timeout bounds one run, from the request to the response's headers; zero means DefaultTimeout.
	Timeout time.Duration
	// HalfMillis is the latency that scores 0 (see Score); zero means DefaultHalfMillis.
	HalfMillis int32
}

// NewRequest is the request for a generator's latency entry. Zero fields of p take the defaults.
func NewRequest(scoreName string, p Probe) scoreagent.Request {
	return scoreagent.Request{Plugin: Name, ScoreName: scoreName, Options: p.Options()}
}

// Options writes p as the plugin's options, leaving zero fields out so they take the defaults.
func (p Probe) Options() map[string]string {
	opts := map[string]string{OptionURL: p.URL}
	if p.Runs != 0 {
		opts[OptionRuns] = strconv.Itoa(int(p.Runs))
	}
	if p.WaitBetweenRuns != 0 {
		opts[OptionWaitBetweenRuns] = p.WaitBetweenRuns.String()
	}
	if p.Timeout != 0 {
		opts[OptionTimeout] = p.Timeout.String()
	}
	if p.HalfMillis != 0 {
		opts[OptionHalfMillis] = strconv.Itoa(int(p.HalfMillis))
	}
	return opts
}

// ParseOptions reads the plugin's options into a Probe with the defaults applied, refusing unknown options
// and values out of bounds. It does not check the URL against the guard; Plugin.Validate does.
func ParseOptions(opts map[string]string) (Probe, error) {
	if err := scoreagent.CheckOptions(opts, OptionURL, OptionRuns, OptionWaitBetweenRuns, OptionTimeout, OptionHalfMillis); err != nil {
		return Probe{}, err
	}
	p := Probe{URL: opts[OptionURL]}
	if p.URL == "" {
		return Probe{}, errors.New("url is required")
	}
	if len(p.URL) > MaxURLLength {
		return Probe{}, fmt.Errorf("url is %d characters long, at most %d", len(p.URL), MaxURLLength)
	}
	runs, err := scoreagent.IntOption(opts, OptionRuns, DefaultRuns, MinRuns, MaxRuns)
	if err != nil {
		return Probe{}, err
	}
	p.Runs = int32(runs)
	if p.WaitBetweenRuns, err = scoreagent.DurationOption(opts, OptionWaitBetweenRuns, DefaultWaitBetweenRuns, 0, MaxWaitBetweenRuns); err != nil {
		return Probe{}, err
	}
	if p.Timeout, err = scoreagent.DurationOption(opts, OptionTimeout, DefaultTimeout, MinTimeout, MaxTimeout); err != nil {
		return Probe{}, err
	}
	half, err := scoreagent.IntOption(opts, OptionHalfMillis, int64(DefaultHalfMillis), MinHalfMillis, MaxHalfMillis)
	if err != nil {
		return Probe{}, err
	}
	p.HalfMillis = int32(half)
	return p, nil
}

// WorstCase is the longest the probe can take: every run reaching its timeout, and the waits between them.
// The agent can use it to measure again before the scores' validUntil.
func (p Probe) WorstCase() time.Duration {
	if p.Runs <= 0 {
		return 0
	}
	return p.Timeout*time.Duration(p.Runs) + p.WaitBetweenRuns*time.Duration(p.Runs-1)
}
