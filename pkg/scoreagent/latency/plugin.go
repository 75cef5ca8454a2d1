// Package latency is the score agent's built-in plugin for a generator's spec.latencies: the mean time a
// site takes to answer an HTTP GET from the managed cluster, mapped to [-100, 100] by Score.
//
// What a run measures: from sending the request to receiving the response's headers, through a new
// connection each time (name lookup, TCP and TLS handshakes, the request), so every run and every cluster
// measure the same thing rather than the first run paying for a connection the others reuse. Any HTTP
// answer counts, whatever its status: the site answered. Redirects are followed (at most 3, each checked by
// the guard) and their time counts, as a browser's would. The body is never read.
//
// A run that fails (no answer within the timeout, connection refused, a TLS error, too many redirects)
// counts as the timeout, the slowest the probe can observe, and the result's message names it. A cluster
// that cannot reach the site is then the farthest from it, not a cluster without a score: OCM scores a
// missing score 0, which would rank it above every reachable cluster slower than halfMillis. A run the
// guard refuses (the name now resolves to a private address, a redirect leaves the allowlist) ends the
// measurement with an error instead: that is the generator asking for something it may not, not a fact
// about the cluster's latency.
package latency

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
)

// UserAgent is the agent's User-Agent header, so a site's owner can tell what probes it.
const UserAgent = "placement-manifestwork-score-agent"

// Plugin measures latencies. Its zero value refuses every request; use New.
type Plugin struct {
	guard  *guard.Guard
	client *http.Client
	// Sleep waits between runs; nil means a timer that stops early when ctx ends. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// New returns the plugin probing through g: every URL, redirect and connection keeps to g's policy.
func New(g *guard.Guard) *Plugin {
	return NewWithTransport(g, nil)
}

// NewWithTransport is New with a transport to start from (for example with other root certificates); the
// guard replaces its dialer and proxy, and keep-alives are turned off so each run opens its connection.
func NewWithTransport(g *guard.Guard, t *http.Transport) *Plugin {
	if t == nil {
		t = g.Transport()
	} else {
		t = t.Clone()
	}
	t.DisableKeepAlives = true
	return &Plugin{guard: g, client: g.Client(t)}
}

// Name is "latency".
func (p *Plugin) Name() string { return Name }

// Validate refuses unknown options, values out of bounds, and URLs the guard refuses.
func (p *Plugin) Validate(req scoreagent.Request) error {
	_, err := p.probe(req)
	return err
}

func (p *Plugin) probe(req scoreagent.Request) (Probe, error) {
	if p.guard == nil || p.client == nil {
		return Probe{}, errors.New("the latency plugin has no guard; make it with latency.New")
	}
	probe, err := ParseOptions(req.Options)
	if err != nil {
		return Probe{}, err
	}
	if err := p.guard.Check(probe.URL); err != nil {
		return Probe{}, fmt.Errorf("url %s: %w", redact(probe.URL), err)
	}
	return probe, nil
}

// Measure runs the probe: Runs runs, WaitBetweenRuns apart, each bounded by Timeout; the score is that of
// the mean. It returns an error, and no result, when ctx ends (the agent is stopping) or the guard refuses
// a run.
func (p *Plugin) Measure(ctx context.Context, req scoreagent.Request) (scoreagent.Result, error) {
	probe, err := p.probe(req)
	if err != nil {
		return scoreagent.Result{}, err
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = wait
	}
	samples := make([]time.Duration, 0, probe.Runs)
	var failed []string
	statuses := map[int]bool{}
	for i := range int(probe.Runs) {
		if i > 0 && probe.WaitBetweenRuns > 0 {
			if err := sleep(ctx, probe.WaitBetweenRuns); err != nil {
				return scoreagent.Result{}, err
			}
		}
		took, status, err := p.run(ctx, probe)
		if err != nil {
			if ctx.Err() != nil {
				return scoreagent.Result{}, ctx.Err()
			}
			var refused *guard.RefusedError
			if errors.As(err, &refused) {
				return scoreagent.Result{}, fmt.Errorf("run %d of %d: %w", i+1, probe.Runs, withoutURL(err))
			}
			failed = append(failed, fmt.Sprintf("run %d: %s", i+1, cause(err, probe.Timeout)))
			took = probe.Timeout
		} else if status >= 400 {
			statuses[status] = true
		}
		samples = append(samples, took)
	}

	ms := Millis(Summarize(samples).Mean)
	res := scoreagent.Result{Value: Score(ms, probe.HalfMillis), Raw: formatMillis(ms)}
	var notes []string
	if len(failed) > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d runs failed and count as the %s timeout: %s",
			len(failed), probe.Runs, probe.Timeout, strings.Join(failed, "; ")))
	}
	if len(statuses) > 0 {
		codes := make([]int, 0, len(statuses))
		for c := range statuses {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		text := make([]string, len(codes))
		for i, c := range codes {
			text[i] = strconv.Itoa(c)
		}
		notes = append(notes, fmt.Sprintf("the site answered with HTTP status %s, which counts as an answer", strings.Join(text, ", ")))
	}
	res.Message = strings.Join(notes, "; ")
	return res, nil
}

// run makes one request and returns how long the response's headers took, and their status.
func (p *Plugin) run(ctx context.Context, probe Probe) (time.Duration, int, error) {
	ctx, cancel := context.WithTimeout(ctx, probe.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe.URL, http.NoBody)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("User-Agent", UserAgent)
	start := time.Now()
	resp, err := p.client.Do(req)
	took := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	// Closed unread: the headers are the answer, and a body could be as large as the site likes.
	resp.Body.Close()
	return took, resp.StatusCode, nil
}

// cause is a failed run's error for a message, a timeout said as such.
func cause(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	return withoutURL(err).Error()
}

// withoutURL drops the client's "Get <url>: ": the message names the probe already, and a redirect's URL
// may carry a password.
func withoutURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// redact hides a URL's password, should a message quote a URL that the guard refuses for carrying one.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return strconv.Quote(raw)
	}
	return u.Redacted()
}

func formatMillis(ms float64) string {
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
}

// wait sleeps for d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
