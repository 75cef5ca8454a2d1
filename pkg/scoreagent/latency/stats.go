package latency

import "time"

// Summary describes a probe's runs.
type Summary struct {
	N        int
	Mean     time.Duration
	Min, Max time.Duration
}

// Summarize returns the mean, minimum and maximum of samples; the zero Summary for none. The mean, not the
// median, is what the seed asks for; with at most MaxRuns samples an outlier moves it, which is also what
// a user of the site would feel.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	s := Summary{N: len(samples), Min: samples[0], Max: samples[0]}
	// Sum in float64 so that no samples can overflow the sum; the mean lies between Min and Max, which
	// bound it again where float64 rounds past them.
	var sum float64
	for _, d := range samples {
		sum += float64(d)
		s.Min = min(s.Min, d)
		s.Max = max(s.Max, d)
	}
	switch mean := sum / float64(len(samples)); {
	case mean >= float64(s.Max):
		s.Mean = s.Max
	case mean <= float64(s.Min):
		s.Mean = s.Min
	default:
		s.Mean = time.Duration(mean)
	}
	return s
}
