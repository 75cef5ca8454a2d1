package latency

import (
	"math"
	"testing"
	"time"
)

func TestScore(t *testing.T) {
	cases := map[string]struct {
		ms   float64
		half int32
		want int32
	}{
		"0ms":                            {ms: 0, half: 100, want: 100},
		"1ms":                            {ms: 1, half: 100, want: 98},
		"10ms":                           {ms: 10, half: 100, want: 82},
		"33ms: a third of half":          {ms: 100.0 / 3, half: 100, want: 50},
		"half":                           {ms: 100, half: 100, want: 0},
		"300ms: three halves":            {ms: 300, half: 100, want: -50},
		"1s":                             {ms: 1000, half: 100, want: -82},
		"30s: the longest timeout":       {ms: 30000, half: 100, want: -99},
		"just below -99.5 rounds to -99": {ms: 39899, half: 100, want: -99},
		"399 halves reach -100":          {ms: 39900, half: 100, want: -100},
		"forever":                        {ms: 1e300, half: 100, want: -100},
		"+Inf":                           {ms: math.Inf(1), half: 100, want: -100},
		"NaN is the worst":               {ms: math.NaN(), half: 100, want: -100},
		"a negative latency counts as 0": {ms: -5, half: 100, want: 100},
		"-Inf counts as 0":               {ms: math.Inf(-1), half: 100, want: 100},
		"no half: the default":           {ms: 100, half: 0, want: 0},
		"a negative half: the default":   {ms: 300, half: -1, want: -50},
		"another half":                   {ms: 20, half: 20, want: 0},
		"a long half":                    {ms: 100, half: 1000, want: 82},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Score(tc.ms, tc.half); got != tc.want {
				t.Errorf("Score(%v, %d) = %d, want %d", tc.ms, tc.half, got, tc.want)
			}
		})
	}
}

// Over a sweep of latencies and halves, the score stays in [-100, 100], never rises as the latency grows,
// scores 100 at 0 and 0 at halfMillis.
func TestScoreProperties(t *testing.T) {
	for _, half := range []int32{1, 7, 50, 100, 250, 1000, 60000, MaxHalfMillis} {
		if got := Score(0, half); got != 100 {
			t.Errorf("half %d: Score(0) = %d, want 100", half, got)
		}
		if got := Score(float64(half), half); got != 0 {
			t.Errorf("half %d: Score(half) = %d, want 0", half, got)
		}
		prev := int32(100)
		for ms := 0.0; ms < 1e7; ms = ms*1.01 + 0.05 {
			got := Score(ms, half)
			if got < -100 || got > 100 {
				t.Fatalf("half %d: Score(%v) = %d, outside [-100, 100]", half, ms, got)
			}
			if got > prev {
				t.Fatalf("half %d: Score(%v) = %d rises above %d", half, ms, got, prev)
			}
			prev = got
		}
	}
}

func FuzzScore(f *testing.F) {
	f.Add(0.0, 1.0, int32(100))
	f.Add(99.9, 100.1, int32(100))
	f.Add(1e9, 2e9, int32(1))
	f.Fuzz(func(t *testing.T, a, b float64, half int32) {
		if math.IsNaN(a) || math.IsNaN(b) {
			return
		}
		if a > b {
			a, b = b, a
		}
		sa, sb := Score(a, half), Score(b, half)
		if sa < -100 || sa > 100 || sb < -100 || sb > 100 {
			t.Fatalf("Score out of range: %d, %d", sa, sb)
		}
		if sb > sa {
			t.Fatalf("Score(%v) = %d < Score(%v) = %d: a longer latency scores higher", a, sa, b, sb)
		}
	})
}

func TestMillis(t *testing.T) {
	if got := Millis(84*time.Millisecond + 500*time.Microsecond); got != 84.5 {
		t.Errorf("Millis = %v, want 84.5", got)
	}
}

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	cases := map[string]struct {
		samples []time.Duration
		want    Summary
	}{
		"none":              {want: Summary{}},
		"one":               {samples: []time.Duration{84 * ms}, want: Summary{N: 1, Mean: 84 * ms, Min: 84 * ms, Max: 84 * ms}},
		"two":               {samples: []time.Duration{10 * ms, 30 * ms}, want: Summary{N: 2, Mean: 20 * ms, Min: 10 * ms, Max: 30 * ms}},
		"unordered":         {samples: []time.Duration{30 * ms, 10 * ms, 20 * ms}, want: Summary{N: 3, Mean: 20 * ms, Min: 10 * ms, Max: 30 * ms}},
		"a fractional mean": {samples: []time.Duration{1, 2}, want: Summary{N: 2, Mean: 1, Min: 1, Max: 2}},
		"huge samples do not overflow": {
			samples: []time.Duration{math.MaxInt64 - 1, math.MaxInt64 - 1},
			want:    Summary{N: 2, Mean: math.MaxInt64 - 1, Min: math.MaxInt64 - 1, Max: math.MaxInt64 - 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Summarize(tc.samples)
			// float64 cannot hold every nanosecond of the largest durations; a mean within 1µs is exact enough.
			if got.N != tc.want.N || got.Min != tc.want.Min || got.Max != tc.want.Max || absDiff(got.Mean, tc.want.Mean) > time.Microsecond {
				t.Errorf("Summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func absDiff(a, b time.Duration) time.Duration {
	if a > b {
		return a - b
	}
	return b - a
}
