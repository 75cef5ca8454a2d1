package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

// rollout is a concurrent rollout: every job's template changed at once.
type rollout struct {
	// PatchesReturned is from the start to the last of the jobs' updates returning.
	PatchesReturned float64 `json:"patchesReturned"`
	// Seconds are, per job, from the start to the moment every work of the job carried the new template (the
	// watch event of its last work), sorted.
	Seconds []float64 `json:"seconds"`
}

// percentile is the nearest-rank percentile p (0-100] of xs: the smallest value that at least p % of xs are at
// most. NaN for no values.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// runConcurrent runs a row of jobs of n clusters each: fan-out and roll-up (so the works carry the agents'
// status, as works in use do), then every job's template changed at the same moment (the rollout, timed per
// job), then delete.
func (b *bench) runConcurrent(ctx context.Context, c contender, jobs, n, pool int) *row {
	return b.runJobs(ctx, c, "concurrent", jobs, n, pool, func(p *process, r *row, js []job, expects func(string) []expect, _ string, timeout time.Duration) (*process, bool) {
		ro := &rollout{}
		r.Update = b.stepRun(ctx, "concurrent rollout", c.user(), p, func(start time.Time) (time.Duration, error) {
			// Every update at once: the harness's client has no rate limit.
			if err := parallel(jobs, 0, func(i int) error { return c.update(ctx, js[i], n, "v2") }); err != nil {
				return 0, err
			}
			ro.PatchesReturned = time.Since(start).Seconds()
			times, err := b.works.waitEach(ctx, "concurrent rollout", start, timeout, p.alive, expects("v2"))
			ro.Seconds = times
			if err != nil {
				return 0, err
			}
			return time.Duration(percentile(times, 100) * float64(time.Second)), nil
		})
		r.Rollout = ro
		if !r.Update.ok() {
			return p, false
		}
		logf("  concurrent rollout: p50 %.2fs, p90 %.2fs, max %.2fs over %d jobs (updates returned after %.2fs)",
			percentile(ro.Seconds, 50), percentile(ro.Seconds, 90), percentile(ro.Seconds, 100), jobs, ro.PatchesReturned)
		return p, true
	})
}

// waitEach waits until every expectation holds and returns, for each, the time from start to the moment it
// did, sorted.
func (t *tracker) waitEach(ctx context.Context, what string, start time.Time, timeout time.Duration, alive func() error, es []expect) ([]float64, error) {
	deadline := start.Add(timeout)
	lastLog := time.Now()
	doneAt := make([]time.Duration, len(es))
	left := len(es)
	for {
		for i, e := range es {
			if doneAt[i] != 0 {
				continue
			}
			if _, done, at := t.check(e); done {
				doneAt[i] = max(at.Sub(start), time.Nanosecond)
				left--
			}
		}
		if left == 0 {
			out := make([]float64, len(doneAt))
			for i, d := range doneAt {
				out[i] = d.Seconds()
			}
			sort.Float64s(out)
			return out, nil
		}
		if err := alive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %d of %d jobs' works carry the new template after %s", what, len(es)-left, len(es), time.Since(start).Round(time.Millisecond))
		}
		if time.Since(lastLog) > 15*time.Second {
			logf("    ... %s: %d/%d jobs after %s", what, len(es)-left, len(es), time.Since(start).Round(time.Second))
			lastLog = time.Now()
		}
		time.Sleep(25 * time.Millisecond)
	}
}
