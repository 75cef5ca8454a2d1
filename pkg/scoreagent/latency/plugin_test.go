package latency

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
)

func TestParseOptions(t *testing.T) {
	cases := map[string]struct {
		opts    map[string]string
		want    Probe
		wantErr string
	}{
		"only a URL: the defaults": {
			opts: map[string]string{"url": "https://redhat.com"},
			want: Probe{URL: "https://redhat.com", Runs: 1, Timeout: 5 * time.Second, HalfMillis: 100},
		},
		"the seed's entry": {
			opts: map[string]string{"url": "https://redhat.com", "runs": "2", "waitBetweenRuns": "10s"},
			want: Probe{URL: "https://redhat.com", Runs: 2, WaitBetweenRuns: 10 * time.Second, Timeout: 5 * time.Second, HalfMillis: 100},
		},
		"every option at its bound": {
			opts: map[string]string{"url": "https://redhat.com", "runs": "10", "waitBetweenRuns": "1m", "timeout": "30s", "halfMillis": "600000"},
			want: Probe{URL: "https://redhat.com", Runs: 10, WaitBetweenRuns: time.Minute, Timeout: 30 * time.Second, HalfMillis: 600000},
		},
		"the low bounds": {
			opts: map[string]string{"url": "https://redhat.com", "runs": "1", "waitBetweenRuns": "0s", "timeout": "100ms", "halfMillis": "1"},
			want: Probe{URL: "https://redhat.com", Runs: 1, Timeout: 100 * time.Millisecond, HalfMillis: 1},
		},
		"no URL":         {opts: map[string]string{"runs": "2"}, wantErr: "url is required"},
		"a URL too long": {opts: map[string]string{"url": "https://" + strings.Repeat("a", 2041)}, wantErr: "url is 2049 characters long, at most 2048"},
		"an unknown option": {
			opts:    map[string]string{"url": "https://redhat.com", "method": "POST"},
			wantErr: `unknown option "method"; known options: halfMillis, runs, timeout, url, waitBetweenRuns`,
		},
		"no runs":         {opts: map[string]string{"url": "x", "runs": "0"}, wantErr: "runs is 0, at least 1"},
		"too many runs":   {opts: map[string]string{"url": "x", "runs": "11"}, wantErr: "runs is 11, at most 10"},
		"a long wait":     {opts: map[string]string{"url": "x", "waitBetweenRuns": "61s"}, wantErr: "waitBetweenRuns is 1m1s, at most 1m0s"},
		"a long timeout":  {opts: map[string]string{"url": "x", "timeout": "31s"}, wantErr: "timeout is 31s, at most 30s"},
		"a short timeout": {opts: map[string]string{"url": "x", "timeout": "99ms"}, wantErr: "timeout is 99ms, at least 100ms"},
		"no half":         {opts: map[string]string{"url": "x", "halfMillis": "0"}, wantErr: "halfMillis is 0, at least 1"},
		"a half too long": {opts: map[string]string{"url": "x", "halfMillis": "600001"}, wantErr: "halfMillis is 600001, at most 600000"},
		"a bad half":      {opts: map[string]string{"url": "x", "halfMillis": "1e3"}, wantErr: `halfMillis "1e3" is not a whole number`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOptions(tc.opts)
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// NewRequest writes a Probe that ParseOptions reads back, zero fields taking the defaults.
func TestNewRequest(t *testing.T) {
	cases := map[string]struct {
		probe Probe
		want  Probe
	}{
		"zero fields": {
			probe: Probe{URL: "https://redhat.com"},
			want:  Probe{URL: "https://redhat.com", Runs: DefaultRuns, Timeout: DefaultTimeout, HalfMillis: DefaultHalfMillis},
		},
		"every field": {
			probe: Probe{URL: "https://redhat.com", Runs: 2, WaitBetweenRuns: 1500 * time.Millisecond, Timeout: 2 * time.Second, HalfMillis: 50},
			want:  Probe{URL: "https://redhat.com", Runs: 2, WaitBetweenRuns: 1500 * time.Millisecond, Timeout: 2 * time.Second, HalfMillis: 50},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := NewRequest("redhat-com-avgLatency", tc.probe)
			if req.Plugin != Name || req.ScoreName != "redhat-com-avgLatency" {
				t.Errorf("request = %+v", req)
			}
			got, err := ParseOptions(req.Options)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorstCase(t *testing.T) {
	cases := map[string]struct {
		probe Probe
		want  time.Duration
	}{
		"no runs":   {probe: Probe{}, want: 0},
		"one run":   {probe: Probe{Runs: 1, Timeout: 5 * time.Second, WaitBetweenRuns: time.Minute}, want: 5 * time.Second},
		"the bound": {probe: Probe{Runs: MaxRuns, Timeout: MaxTimeout, WaitBetweenRuns: MaxWaitBetweenRuns}, want: 14 * time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.probe.WorstCase(); got != tc.want {
				t.Errorf("WorstCase = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	p := New(newGuard(t, ""))
	cases := map[string]struct {
		opts map[string]string
		want string
	}{
		"a public site": {opts: map[string]string{"url": "https://redhat.com"}},
		"bad options":   {opts: map[string]string{"url": "https://redhat.com", "runs": "20"}, want: "runs is 20, at most 10"},
		"the metadata address": {
			opts: map[string]string{"url": "http://169.254.169.254/latest/meta-data"},
			want: "url http://169.254.169.254/latest/meta-data: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32",
		},
		"ftp": {opts: map[string]string{"url": "ftp://redhat.com"}, want: `url ftp://redhat.com: refused: scheme "ftp" is not http or https`},
		"a password is not repeated": {
			opts: map[string]string{"url": "https://me:secret@redhat.com"},
			want: "url https://me:xxxxx@redhat.com: refused: the URL carries credentials (user info before @); the agent sends none",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := errString(p.Validate(scoreagent.Request{Plugin: Name, ScoreName: "s", Options: tc.opts})); got != tc.want {
				t.Errorf("Validate =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}

	var zero Plugin
	if err := zero.Validate(NewRequest("s", Probe{URL: "https://redhat.com"})); err == nil {
		t.Error("the zero Plugin accepted a request")
	}
}

// site is a loopback HTTP server that answers each request as the test says, after a delay.
type site struct {
	*httptest.Server
	hits  atomic.Int32
	conns atomic.Int32

	mu      sync.Mutex
	headers []http.Header
}

func newSite(t *testing.T, answer func(n int32, w http.ResponseWriter, r *http.Request)) *site {
	s := &site{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		s.mu.Lock()
		h := r.Header.Clone()
		h.Set("X-Method", r.Method)
		s.headers = append(s.headers, h)
		s.mu.Unlock()
		answer(n, w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// after answers with status after delay, or returns early when the client gives up.
func after(delay time.Duration, status int) func(int32, http.ResponseWriter, *http.Request) {
	return func(_ int32, w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
		w.WriteHeader(status)
		fmt.Fprint(w, strings.Repeat("body ", 1000))
	}
}

// sleeps records the waits between runs instead of waiting.
type sleeps struct{ waits []time.Duration }

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return nil
}

func TestMeasure(t *testing.T) {
	const delay = 20 * time.Millisecond
	s := newSite(t, after(delay, http.StatusOK))
	p, waits := newPlugin(t)

	res, err := p.Measure(t.Context(), NewRequest("s", Probe{URL: s.URL + "/x", Runs: 3, WaitBetweenRuns: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.hits.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
	if got := s.conns.Load(); got != 3 {
		t.Errorf("%d connections, want 3: each run opens its own", got)
	}
	if diff := cmp.Diff([]time.Duration{10 * time.Second, 10 * time.Second}, waits.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	var ms float64
	if _, err := fmt.Sscanf(res.Raw, "%fms", &ms); err != nil || ms < Millis(delay) {
		t.Errorf("Raw = %q, want at least %s", res.Raw, delay)
	}
	// Raw is rounded to the millisecond: the value may be one off the Raw's.
	if d := res.Value - Score(ms, 100); res.Value > Score(Millis(delay), 100) || d < -1 || d > 1 {
		t.Errorf("Value = %d for %q", res.Value, res.Raw)
	}
	if res.Message != "" {
		t.Errorf("Message = %q", res.Message)
	}
	// What was sent: a GET, named, without credentials, without the cookie the site set.
	for i, h := range s.headers {
		if h.Get("X-Method") != http.MethodGet || h.Get("User-Agent") != UserAgent || h.Get("Authorization") != "" || h.Get("Cookie") != "" {
			t.Errorf("request %d headers: %v", i+1, h)
		}
	}
}

// A faster site scores higher.
func TestMeasureRanks(t *testing.T) {
	fast := newSite(t, after(0, http.StatusOK))
	slow := newSite(t, after(60*time.Millisecond, http.StatusOK))
	p, _ := newPlugin(t)
	measure := func(u string) scoreagent.Result {
		res, err := p.Measure(t.Context(), NewRequest("s", Probe{URL: u, Runs: 2}))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	f, s := measure(fast.URL), measure(slow.URL)
	if f.Value <= s.Value {
		t.Errorf("the fast site scores %d (%s), the slow one %d (%s)", f.Value, f.Raw, s.Value, s.Raw)
	}
	if s.Value > Score(60, 100) {
		t.Errorf("the slow site scores %d (%s), above a 60ms score", s.Value, s.Raw)
	}
}

func TestMeasureFailedRuns(t *testing.T) {
	hangUp := func(w http.ResponseWriter) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	cases := map[string]struct {
		answer    func(int32, http.ResponseWriter, *http.Request)
		url       string
		probe     Probe
		wantRaw   string
		wantValue int32
		wantMsg   string
		minMillis float64
	}{
		"a run hangs up: it counts as the timeout": {
			answer: func(n int32, w http.ResponseWriter, r *http.Request) {
				if n == 2 {
					hangUp(w)
					return
				}
				after(0, http.StatusOK)(n, w, r)
			},
			probe:     Probe{Runs: 3, Timeout: 900 * time.Millisecond},
			wantMsg:   "1 of 3 runs failed and count as the 900ms timeout: run 2: EOF",
			minMillis: 300,
		},
		"every run times out": {
			answer:    after(time.Second, http.StatusOK),
			probe:     Probe{Runs: 2, Timeout: MinTimeout},
			wantRaw:   "100ms",
			wantValue: Score(100, 100),
			wantMsg:   "2 of 2 runs failed and count as the 100ms timeout: run 1: no answer within 100ms; run 2: no answer within 100ms",
		},
		"nothing listens": {
			url:       closed.URL,
			probe:     Probe{Runs: 1, Timeout: 2 * time.Second, HalfMillis: 2000},
			wantRaw:   "2000ms",
			wantValue: 0,
			wantMsg:   fmt.Sprintf("1 of 1 runs failed and count as the 2s timeout: run 1: dial tcp %s: connect: connection refused", strings.TrimPrefix(closed.URL, "http://")),
		},
		"an error status is an answer": {
			answer:  after(0, http.StatusServiceUnavailable),
			probe:   Probe{Runs: 2},
			wantMsg: "the site answered with HTTP status 503, which counts as an answer",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			probe := tc.probe
			probe.URL = tc.url
			if tc.answer != nil {
				probe.URL = newSite(t, tc.answer).URL
			}
			p, _ := newPlugin(t)
			res, err := p.Measure(t.Context(), NewRequest("s", probe))
			if err != nil {
				t.Fatal(err)
			}
			if res.Message != tc.wantMsg {
				t.Errorf("Message =\n  %q\nwant\n  %q", res.Message, tc.wantMsg)
			}
			if tc.wantRaw != "" && (res.Raw != tc.wantRaw || res.Value != tc.wantValue) {
				t.Errorf("result = %d (%s), want %d (%s)", res.Value, res.Raw, tc.wantValue, tc.wantRaw)
			}
			var ms float64
			if _, err := fmt.Sscanf(res.Raw, "%fms", &ms); err != nil || ms < tc.minMillis {
				t.Errorf("Raw = %q, want at least %vms", res.Raw, tc.minMillis)
			}
		})
	}
}

// What the guard refuses is not measured: Measure returns an error naming the refusal, not a score.
func TestMeasureRefused(t *testing.T) {
	s := newSite(t, after(0, http.StatusOK))
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	redirect := newSite(t, func(_ int32, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	})
	resolver := fakeResolver{"site.test": "127.0.0.1"}

	cases := map[string]struct {
		allow, ports string
		url          string
		want         string
	}{
		"loopback by default": {
			url:  s.URL,
			want: fmt.Sprintf(`score "s": url %s: refused: 127.0.0.1 is a loopback address; allow it with --allow=127.0.0.1/32`, s.URL),
		},
		"a name that resolves to loopback when probed": {
			ports: port,
			url:   "http://site.test:" + port,
			want:  `score "s": run 1 of 1: refused: site.test resolves to 127.0.0.1, a loopback address; allow it with --allow=127.0.0.1/32 or --allow=site.test`,
		},
		"a redirect to the metadata address": {
			allow: "127.0.0.1/32",
			url:   redirect.URL,
			want:  `score "s": run 1 of 1: redirect to http://169.254.169.254/latest/meta-data: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ports, err := guard.ParsePorts(tc.ports)
			if err != nil {
				t.Fatal(err)
			}
			allow, err := guard.ParseAllowlist(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			r, err := scoreagent.NewRegistry(New(guard.New(guard.Config{Allow: allow, Ports: ports, Resolver: resolver})))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Measure(t.Context(), NewRequest("s", Probe{URL: tc.url}))
			if got := errString(err); got != tc.want {
				t.Errorf("Measure =\n  %q\nwant\n  %q", got, tc.want)
			}
			var refused *guard.RefusedError
			if !errors.As(err, &refused) {
				t.Errorf("%v is not a *guard.RefusedError", err)
			}
			if res != (scoreagent.Result{}) {
				t.Errorf("a refused probe has a result: %+v", res)
			}
		})
	}
	if got := s.hits.Load(); got != 0 {
		t.Errorf("the site was reached %d times", got)
	}
}

// An agent that stops while a probe waits between runs writes no score.
func TestMeasureStops(t *testing.T) {
	s := newSite(t, after(0, http.StatusOK))
	p, _ := newPlugin(t)
	ctx, cancel := context.WithCancel(t.Context())
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return wait(ctx, d)
	}
	res, err := p.Measure(ctx, NewRequest("s", Probe{URL: s.URL, Runs: 3, WaitBetweenRuns: time.Minute}))
	if !errors.Is(err, context.Canceled) || res != (scoreagent.Result{}) {
		t.Errorf("Measure = %+v, %v; want no result and context.Canceled", res, err)
	}
	if got := s.hits.Load(); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

func TestWait(t *testing.T) {
	if err := wait(t.Context(), time.Millisecond); err != nil {
		t.Errorf("wait = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	if err := wait(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("wait on an ended context = %v after %s", err, time.Since(start))
	}
}

func TestFormatMillis(t *testing.T) {
	cases := map[float64]string{0: "0.0ms", 3.25: "3.2ms", 9.94: "9.9ms", 10: "10ms", 84.4: "84ms", 84.5: "84ms", 84.6: "85ms", 30000: "30000ms"}
	for ms, want := range cases {
		if got := formatMillis(ms); got != want {
			t.Errorf("formatMillis(%v) = %q, want %q", ms, got, want)
		}
	}
}

type fakeResolver map[string]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}

func newGuard(t *testing.T, allow string) *guard.Guard {
	t.Helper()
	a, err := guard.ParseAllowlist(allow)
	if err != nil {
		t.Fatal(err)
	}
	return guard.New(guard.Config{Allow: a, Resolver: fakeResolver{}})
}

// newPlugin is the plugin allowed to reach 127.0.0.1, recording its waits.
func newPlugin(t *testing.T) (*Plugin, *sleeps) {
	p := New(newGuard(t, "127.0.0.1/32"))
	s := &sleeps{}
	p.Sleep = s.sleep
	return p, s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
