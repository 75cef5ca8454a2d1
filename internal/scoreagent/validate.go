package scoreagent

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// settings are a generator's timing with the API's defaults applied.
type settings struct {
	interval, validFor time.Duration
}

func settingsOf(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) settings {
	s := settings{interval: scoresv1alpha1.DefaultInterval, validFor: scoresv1alpha1.DefaultValidFor}
	if d := gen.Spec.Interval; d != nil && d.Duration > 0 {
		s.interval = d.Duration
	}
	if d := gen.Spec.ValidFor; d != nil && d.Duration > 0 {
		s.validFor = d.Duration
	}
	return s
}

// requestsOf maps a generator's scores onto the plugins' requests, in the spec's order: each latency entry
// through latency.NewRequest (unset fields take the API's defaults), each otherPlugin entry as its plugin,
// score name and options. fromOtherPlugin says which scores come from otherPlugin.
func requestsOf(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) (reqs []scoreagent.Request, fromOtherPlugin map[string]bool) {
	fromOtherPlugin = map[string]bool{}
	for _, l := range gen.Spec.Latencies {
		p := latency.Probe{URL: l.URL}
		if l.Runs != nil {
			p.Runs = *l.Runs
		}
		if l.WaitBetweenRuns != nil {
			p.WaitBetweenRuns = l.WaitBetweenRuns.Duration
		}
		if l.Timeout != nil {
			p.Timeout = l.Timeout.Duration
		}
		if l.Scale != nil {
			p.HalfMillis = l.Scale.HalfMillis
		}
		reqs = append(reqs, latency.NewRequest(l.Name, p))
	}
	for _, o := range gen.Spec.OtherPlugin {
		reqs = append(reqs, scoreagent.Request{Plugin: o.Plugin, ScoreName: o.Name, Options: o.Options})
		fromOtherPlugin[o.Name] = true
	}
	return reqs, fromOtherPlugin
}

// verdict is the Valid condition's reason and message.
type verdict struct {
	reason, message string
}

func (v verdict) valid() bool { return v.reason == scoresv1alpha1.ReasonAccepted }

// maxMessage bounds a condition message the agent writes (the API allows 32768 characters).
const maxMessage = 4096

// validate checks every request before any is measured: the plugins' own checks through the registry (the
// guard's verdict on a latency URL among them), and that no latency probe can outlast validFor, since
// scores measured by a probe that takes longer could expire before they are written. The reason is
// ProbeRefused when the guard refuses a URL, else InvalidPlugin when an otherPlugin entry is refused (an
// unknown plugin or options it refuses), else Invalid; the message lists every problem.
func validate(reg *scoreagent.Registry, reqs []scoreagent.Request, fromOtherPlugin map[string]bool, s settings) verdict {
	var problems scoreagent.Errors
	if err := reg.ValidateAll(reqs); err != nil {
		var errs scoreagent.Errors
		if errors.As(err, &errs) {
			problems = append(problems, errs...)
		} else {
			problems = append(problems, err)
		}
	}
	refused := map[string]bool{}
	for _, p := range problems {
		var invalid *scoreagent.InvalidError
		if errors.As(p, &invalid) {
			refused[invalid.ScoreName] = true
		}
	}
	for _, req := range reqs {
		if req.Plugin != latency.Name || refused[req.ScoreName] {
			continue
		}
		probe, err := latency.ParseOptions(req.Options)
		if err != nil {
			continue // reported by ValidateAll
		}
		if worst := probe.WorstCase(); worst > s.validFor {
			problems = append(problems, &scoreagent.InvalidError{ScoreName: req.ScoreName, Err: fmt.Errorf(
				"takes up to %s when every run times out (runs × timeout, and the waits between runs), longer than validFor %s, so its scores could expire before they are written; lower runs, timeout or waitBetweenRuns, or raise validFor",
				worst, s.validFor)})
		}
	}
	if len(problems) == 0 {
		return verdict{reason: scoresv1alpha1.ReasonAccepted, message: fmt.Sprintf(
			"every probe is allowed and every plugin known: %d %s, measured every %s, valid for %s",
			len(reqs), text.Plural(len(reqs), "score", "scores"), s.interval, s.validFor)}
	}
	reason := scoresv1alpha1.ReasonInvalid
	for _, p := range problems {
		var g *guard.RefusedError
		var invalid *scoreagent.InvalidError
		switch {
		case errors.As(p, &g):
			reason = scoresv1alpha1.ReasonProbeRefused
		case reason == scoresv1alpha1.ReasonInvalid && errors.As(p, &invalid) && fromOtherPlugin[invalid.ScoreName]:
			reason = scoresv1alpha1.ReasonInvalidPlugin
		}
	}
	return verdict{reason: reason, message: truncate(problems.Error()+". Nothing is measured until this is fixed", maxMessage)}
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + mark
}
