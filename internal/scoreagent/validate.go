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

// rewriteAllowance is what a measurement's bound leaves for the rest of a reconcile: reading and writing the
// AddOnPlacementScore and the status, and validUntil's truncation to the second.
const rewriteAllowance = 5 * time.Second

// defaultProbesAtOnce is how many scores of one generator are measured at once when the agent does not say.
const defaultProbesAtOnce = 4

// validate checks every request before any is measured: the plugins' own checks through the registry (the
// guard's verdict on a latency URL among them), and that the scores are rewritten before they expire. The
// next measurement starts interval after the last one ended, so its scores are written interval plus the
// measurement's time (measurementWorstCase, the requests measured atOnce at a time) after the last ones:
// validFor must be longer than that and rewriteAllowance. The reason is ProbeRefused when the guard refuses
// a URL, else InvalidPlugin when an otherPlugin entry is refused (an unknown plugin or options it refuses),
// else Invalid; the message lists every problem.
func validate(reg *scoreagent.Registry, reqs []scoreagent.Request, fromOtherPlugin map[string]bool, s settings, atOnce int) verdict {
	var problems scoreagent.Errors
	if err := reg.ValidateAll(reqs); err != nil {
		var errs scoreagent.Errors
		if errors.As(err, &errs) {
			problems = append(problems, errs...)
		} else {
			problems = append(problems, err)
		}
	}
	worst, slowest := measurementWorstCase(reqs, atOnce)
	if need := s.interval + worst + rewriteAllowance; s.validFor <= need {
		problems = append(problems, fmt.Errorf(
			"validFor %s must be longer than %s: interval %s, plus up to %s for a measurement (every latency run timing out, with waitBetweenRuns, %d %s at a time; %s), plus %s to write the scores; otherwise they expire before the next measurement rewrites them. Raise validFor, or lower interval or the latencies' runs, timeout or waitBetweenRuns",
			s.validFor, need, s.interval, worst, atOnce, text.Plural(atOnce, "score", "scores"), slowest, rewriteAllowance))
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

// measurementWorstCase is the longest a measurement of reqs can take: each latency request's probe taking
// its worst case (latency.Probe.WorstCase), the requests started in order, each as soon as one of atOnce
// slots is free, as Reconciler.measure runs them. Starting each request in the earliest free slot, no
// request can start or end later when others take less than their worst case, so this bounds every
// measurement. Other plugins' requests count as taking no time: their options do not bound it. slowest
// names the slowest latency request and its worst case, for messages.
func measurementWorstCase(reqs []scoreagent.Request, atOnce int) (worst time.Duration, slowest string) {
	if atOnce < 1 {
		atOnce = 1
	}
	free := make([]time.Duration, min(atOnce, max(len(reqs), 1))) // when each slot is free
	var slowestWorst time.Duration
	for _, req := range reqs {
		var d time.Duration
		if req.Plugin == latency.Name {
			if probe, err := latency.ParseOptions(req.Options); err == nil {
				d = probe.WorstCase()
			}
		}
		if d > slowestWorst {
			slowestWorst, slowest = d, fmt.Sprintf("score %q alone up to %s", req.ScoreName, d)
		}
		first := 0
		for i := range free {
			if free[i] < free[first] {
				first = i
			}
		}
		free[first] += d
		worst = max(worst, free[first])
	}
	if slowest == "" {
		slowest = "no latency"
	}
	return worst, slowest
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
