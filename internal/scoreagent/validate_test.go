package scoreagent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
)

func TestRequestsOf(t *testing.T) {
	gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
		Latencies: []scoresv1alpha1.LatencyProbe{
			{Name: "plain", URL: "https://example.com"},
			{Name: "every-field", URL: "https://example.org", Runs: ptr.To[int32](2), WaitBetweenRuns: &metav1.Duration{Duration: time.Second},
				Timeout: &metav1.Duration{Duration: 2 * time.Second}, Scale: &scoresv1alpha1.LatencyScale{HalfMillis: 50}},
		},
		OtherPlugin: []scoresv1alpha1.PluginScore{{Name: "cpu", Plugin: "node-headroom", Options: map[string]string{"resource": "cpu"}}},
	}}
	reqs, other := requestsOf(gen)
	want := []struct {
		plugin, name string
		opts         map[string]string
	}{
		{latency.Name, "plain", map[string]string{"url": "https://example.com"}},
		{latency.Name, "every-field", map[string]string{"url": "https://example.org", "runs": "2", "waitBetweenRuns": "1s", "timeout": "2s", "halfMillis": "50"}},
		{"node-headroom", "cpu", map[string]string{"resource": "cpu"}},
	}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d", len(reqs), len(want))
	}
	for i, w := range want {
		if reqs[i].Plugin != w.plugin || reqs[i].ScoreName != w.name {
			t.Errorf("request %d is %s/%s, want %s/%s", i, reqs[i].Plugin, reqs[i].ScoreName, w.plugin, w.name)
		}
		if diff := cmp.Diff(w.opts, reqs[i].Options); diff != "" {
			t.Errorf("request %d options (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(map[string]bool{"cpu": true}, other); diff != "" {
		t.Errorf("fromOtherPlugin (-want +got):\n%s", diff)
	}

	// A latency entry with nothing but a URL measures with the API's defaults.
	p, err := latency.ParseOptions(reqs[0].Options)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs != scoresv1alpha1.DefaultRuns || p.Timeout != scoresv1alpha1.DefaultProbeTimeout || p.HalfMillis != scoresv1alpha1.DefaultHalfMillis {
		t.Errorf("a bare latency entry reads as %+v, not the API's defaults", p)
	}
}

func TestSettingsOf(t *testing.T) {
	got := settingsOf(&scoresv1alpha1.AddOnPlacementScoreGenerator{})
	if got != (settings{interval: scoresv1alpha1.DefaultInterval, validFor: scoresv1alpha1.DefaultValidFor}) {
		t.Errorf("unset: %+v, want the API's defaults", got)
	}
	got = settingsOf(&scoresv1alpha1.AddOnPlacementScoreGenerator{Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
		Interval: &metav1.Duration{Duration: 10 * time.Second}, ValidFor: &metav1.Duration{Duration: 30 * time.Second}}})
	if got != (settings{interval: 10 * time.Second, validFor: 30 * time.Second}) {
		t.Errorf("set: %+v", got)
	}
}

func TestValidate(t *testing.T) {
	allow, err := guard.ParseAllowlist("127.0.0.1/32")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(guard.Config{Allow: allow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const metadata = `score "meta": url http://169.254.169.254/latest: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32`
	const unknown = `score "gpu": plugin "gpu" is not known to this agent (it knows latency, node-headroom)`
	cases := map[string]struct {
		spec        scoresv1alpha1.AddOnPlacementScoreGeneratorSpec
		wantReason  string
		wantMessage string
	}{
		"a probe and a plugin": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies:   []scoresv1alpha1.LatencyProbe{{Name: "local", URL: "http://127.0.0.1:8080/"}},
				OtherPlugin: []scoresv1alpha1.PluginScore{{Name: "cpu", Plugin: "node-headroom"}},
			},
			wantReason:  scoresv1alpha1.ReasonAccepted,
			wantMessage: "every probe is allowed and every plugin known: 2 scores, measured every 1m0s, valid for 10m0s",
		},
		"the metadata address": {
			spec:        scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{Latencies: []scoresv1alpha1.LatencyProbe{{Name: "meta", URL: "http://169.254.169.254/latest"}}},
			wantReason:  scoresv1alpha1.ReasonProbeRefused,
			wantMessage: metadata + ". Nothing is measured until this is fixed",
		},
		"an unknown plugin": {
			spec:        scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{OtherPlugin: []scoresv1alpha1.PluginScore{{Name: "gpu", Plugin: "gpu"}}},
			wantReason:  scoresv1alpha1.ReasonInvalidPlugin,
			wantMessage: unknown + ". Nothing is measured until this is fixed",
		},
		"options a plugin refuses": {
			spec:        scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{OtherPlugin: []scoresv1alpha1.PluginScore{{Name: "cpu", Plugin: "node-headroom", Options: map[string]string{"resource": "gpu"}}}},
			wantReason:  scoresv1alpha1.ReasonInvalidPlugin,
			wantMessage: `score "cpu": resource "gpu" is not one of cpu, memory. Nothing is measured until this is fixed`,
		},
		"a refused probe and an unknown plugin: ProbeRefused, both said": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies:   []scoresv1alpha1.LatencyProbe{{Name: "meta", URL: "http://169.254.169.254/latest"}},
				OtherPlugin: []scoresv1alpha1.PluginScore{{Name: "gpu", Plugin: "gpu"}},
			},
			wantReason:  scoresv1alpha1.ReasonProbeRefused,
			wantMessage: metadata + "; " + unknown + ". Nothing is measured until this is fixed",
		},
		"a latency entry through otherPlugin is refused as a probe": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{OtherPlugin: []scoresv1alpha1.PluginScore{
				{Name: "meta", Plugin: "latency", Options: map[string]string{"url": "http://169.254.169.254/latest"}}}},
			wantReason:  scoresv1alpha1.ReasonProbeRefused,
			wantMessage: metadata + ". Nothing is measured until this is fixed",
		},
		"a probe that can outlast validFor": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies: []scoresv1alpha1.LatencyProbe{{Name: "slow", URL: "https://example.com", Runs: ptr.To[int32](3),
					Timeout: &metav1.Duration{Duration: 10 * time.Second}, WaitBetweenRuns: &metav1.Duration{Duration: 5 * time.Second}}},
				ValidFor: &metav1.Duration{Duration: 30 * time.Second},
				Interval: &metav1.Duration{Duration: 10 * time.Second},
			},
			wantReason: scoresv1alpha1.ReasonInvalid,
			wantMessage: `validFor 30s must be longer than 55s: interval 10s, plus up to 40s for a measurement (every latency run timing out, with waitBetweenRuns, 4 scores at a time; score "slow" alone up to 40s), ` +
				"plus 5s to write the scores; otherwise they expire before the next measurement rewrites them. Raise validFor, or lower interval or the latencies' runs, timeout or waitBetweenRuns. Nothing is measured until this is fixed",
		},
		// The next measurement starts interval after the last one ended: its scores are written interval and
		// the measurement's time after the last ones, more than validFor here although the probe fits in it.
		"interval 5m, validFor 10m, 10 runs 60s apart: the scores expire every cycle": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies: []scoresv1alpha1.LatencyProbe{{Name: "slow", URL: "https://example.com", Runs: ptr.To[int32](10),
					Timeout: &metav1.Duration{Duration: time.Second}, WaitBetweenRuns: &metav1.Duration{Duration: time.Minute}}},
				ValidFor: &metav1.Duration{Duration: 10 * time.Minute},
				Interval: &metav1.Duration{Duration: 5 * time.Minute},
			},
			wantReason: scoresv1alpha1.ReasonInvalid,
			wantMessage: `validFor 10m0s must be longer than 14m15s: interval 5m0s, plus up to 9m10s for a measurement (every latency run timing out, with waitBetweenRuns, 4 scores at a time; score "slow" alone up to 9m10s), ` +
				"plus 5s to write the scores; otherwise they expire before the next measurement rewrites them. Raise validFor, or lower interval or the latencies' runs, timeout or waitBetweenRuns. Nothing is measured until this is fixed",
		},
		"a refused probe that also outlasts validFor: ProbeRefused, both said": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies: []scoresv1alpha1.LatencyProbe{{Name: "meta", URL: "http://169.254.169.254/latest", Runs: ptr.To[int32](10),
					Timeout: &metav1.Duration{Duration: time.Second}, WaitBetweenRuns: &metav1.Duration{Duration: time.Minute}}},
			},
			wantReason: scoresv1alpha1.ReasonProbeRefused,
			wantMessage: metadata + `; validFor 10m0s must be longer than 10m15s: interval 1m0s, plus up to 9m10s for a measurement (every latency run timing out, with waitBetweenRuns, 4 scores at a time; score "meta" alone up to 9m10s), ` +
				"plus 5s to write the scores; otherwise they expire before the next measurement rewrites them. Raise validFor, or lower interval or the latencies' runs, timeout or waitBetweenRuns. Nothing is measured until this is fixed",
		},
		"interval, a probe and the allowance that make validFor: refused": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies: []scoresv1alpha1.LatencyProbe{{Name: "slow", URL: "https://example.com", Runs: ptr.To[int32](2),
					Timeout: &metav1.Duration{Duration: 5 * time.Second}, WaitBetweenRuns: &metav1.Duration{Duration: 5 * time.Second}}},
				ValidFor: &metav1.Duration{Duration: 30 * time.Second},
				Interval: &metav1.Duration{Duration: 10 * time.Second},
			},
			wantReason: scoresv1alpha1.ReasonInvalid,
			wantMessage: `validFor 30s must be longer than 30s: interval 10s, plus up to 15s for a measurement (every latency run timing out, with waitBetweenRuns, 4 scores at a time; score "slow" alone up to 15s), ` +
				"plus 5s to write the scores; otherwise they expire before the next measurement rewrites them. Raise validFor, or lower interval or the latencies' runs, timeout or waitBetweenRuns. Nothing is measured until this is fixed",
		},
		"interval, a probe and the allowance that just fit validFor": {
			spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				Latencies: []scoresv1alpha1.LatencyProbe{{Name: "slow", URL: "https://example.com", Runs: ptr.To[int32](2),
					Timeout: &metav1.Duration{Duration: 4500 * time.Millisecond}, WaitBetweenRuns: &metav1.Duration{Duration: 5 * time.Second}}},
				ValidFor: &metav1.Duration{Duration: 30 * time.Second},
				Interval: &metav1.Duration{Duration: 10 * time.Second},
			},
			wantReason:  scoresv1alpha1.ReasonAccepted,
			wantMessage: "every probe is allowed and every plugin known: 1 score, measured every 10s, valid for 30s",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{Spec: tc.spec}
			reqs, other := requestsOf(gen)
			got := validate(reg, reqs, other, settingsOf(gen), defaultProbesAtOnce)
			if got.reason != tc.wantReason {
				t.Errorf("reason = %s, want %s", got.reason, tc.wantReason)
			}
			if got.message != tc.wantMessage {
				t.Errorf("message =\n  %s\nwant\n  %s", got.message, tc.wantMessage)
			}
			if got.valid() != (tc.wantReason == scoresv1alpha1.ReasonAccepted) {
				t.Errorf("valid() = %v", got.valid())
			}
		})
	}
}

// TestMeasurementWorstCase: the longest a measurement takes when every latency run times out, the requests
// measured in order, each in the first slot free.
func TestMeasurementWorstCase(t *testing.T) {
	probe := func(name string, runs int32, wait, timeout time.Duration) scoreagent.Request {
		return latency.NewRequest(name, latency.Probe{URL: "https://example.com", Runs: runs, WaitBetweenRuns: wait, Timeout: timeout})
	}
	minute := probe("m", 1, 0, 30*time.Second) // 30s
	headroom := scoreagent.Request{Plugin: "node-headroom", ScoreName: "cpu"}
	cases := map[string]struct {
		reqs        []scoreagent.Request
		atOnce      int
		want        time.Duration
		wantSlowest string
	}{
		"nothing":                            {atOnce: 4, want: 0, wantSlowest: "no latency"},
		"a default probe":                    {reqs: []scoreagent.Request{latency.NewRequest("d", latency.Probe{URL: "https://example.com"})}, atOnce: 4, want: 5 * time.Second, wantSlowest: `score "d" alone up to 5s`},
		"runs and the waits between":         {reqs: []scoreagent.Request{probe("slow", 10, time.Minute, time.Second)}, atOnce: 4, want: 9*time.Minute + 10*time.Second, wantSlowest: `score "slow" alone up to 9m10s`},
		"the CRD's longest probe":            {reqs: []scoreagent.Request{probe("max", 10, time.Minute, 30*time.Second)}, atOnce: 4, want: 14 * time.Minute},
		"four side by side":                  {reqs: []scoreagent.Request{minute, minute, minute, minute}, atOnce: 4, want: 30 * time.Second},
		"five, four at a time":               {reqs: []scoreagent.Request{minute, minute, minute, minute, minute}, atOnce: 4, want: time.Minute},
		"three, one at a time":               {reqs: []scoreagent.Request{minute, minute, minute}, atOnce: 1, want: 90 * time.Second},
		"no concurrency said: one at a time": {reqs: []scoreagent.Request{minute, minute}, atOnce: 0, want: time.Minute},
		// The long one takes a slot for 2m; the short ones share the other: 2m.
		"a long probe first beside short ones, two at a time": {
			reqs:   []scoreagent.Request{probe("long", 4, 0, 30*time.Second), minute, minute, minute, minute},
			atOnce: 2, want: 2 * time.Minute, wantSlowest: `score "long" alone up to 2m0s`,
		},
		// The short ones fill both slots until 1m; the long one starts then.
		"a long probe last beside short ones, two at a time": {
			reqs:   []scoreagent.Request{minute, minute, minute, minute, probe("long", 4, 0, 30*time.Second)},
			atOnce: 2, want: 3 * time.Minute,
		},
		"other plugins count as no time":                  {reqs: []scoreagent.Request{headroom, minute, headroom}, atOnce: 1, want: 30 * time.Second},
		"a latency request through otherPlugin counts":    {reqs: []scoreagent.Request{{Plugin: latency.Name, ScoreName: "o", Options: map[string]string{"url": "https://example.com", "runs": "2"}}}, atOnce: 4, want: 10 * time.Second},
		"a latency request it cannot read counts as none": {reqs: []scoreagent.Request{{Plugin: latency.Name, ScoreName: "o", Options: map[string]string{"runs": "2"}}}, atOnce: 4, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, slowest := measurementWorstCase(tc.reqs, tc.atOnce)
			if got != tc.want {
				t.Errorf("worst case %s, want %s", got, tc.want)
			}
			if tc.wantSlowest != "" && slowest != tc.wantSlowest {
				t.Errorf("slowest %q, want %q", slowest, tc.wantSlowest)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	cases := map[string]struct {
		in   string
		n    int
		want string
	}{
		"short":             {in: "abc", n: 3, want: "abc"},
		"cut":               {in: "abcdef", n: 5, want: "ab…"},
		"on a rune":         {in: "aéééé", n: 6, want: "aé…"},
		"trailing spaces":   {in: "a   bcdefgh", n: 7, want: "a…"},
		"exactly the bound": {in: strings.Repeat("x", 10), n: 10, want: strings.Repeat("x", 10)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := truncate(tc.in, tc.n)
			if got != tc.want {
				t.Errorf("truncate = %q, want %q", got, tc.want)
			}
			if len(got) > tc.n {
				t.Errorf("%d bytes, more than %d", len(got), tc.n)
			}
		})
	}
}
