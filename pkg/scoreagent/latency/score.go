package latency

import (
	"math"
	"time"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// DefaultHalfMillis is the latency that scores 0 when the generator does not choose one: the API's.
const DefaultHalfMillis int32 = scoresv1alpha1.DefaultHalfMillis

// Score maps a latency in milliseconds to an AddOnPlacementScore value:
//
//	round(100 - 200*ms/(ms+halfMillis))
//
// 0 ms scores 100, halfMillis scores 0, and slower latencies approach -100 without reaching it before
// 399*halfMillis (40 s at the default 100, longer than any probe may wait). Before rounding the score
// falls strictly as the latency grows, so a faster cluster never scores below a slower one: with weight +1
// in the Placement's prioritizer the fastest clusters rank highest, and a Score split gives them the most
// replicas (clusters slower than halfMillis score below 0 and weigh nothing there). The seed's raw
// milliseconds with weight -1 do not keep the order: the AddOnPlacementScore CRD bounds scores to
// [-100, 100], so a latency above 100 ms is refused, or capped at 100 by its writer and ties with every other.
//
// The resolution is finest where it matters: at halfMillis 100 a point is 0.5 ms near 0 ms, 2 ms at 100 ms
// and 60 ms at 1 s. A halfMillis near the latencies being compared spreads them best. A halfMillis that is
// not positive means DefaultHalfMillis; a negative latency counts as 0 and NaN as the worst.
func Score(ms float64, halfMillis int32) int32 {
	if halfMillis <= 0 {
		halfMillis = DefaultHalfMillis
	}
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 1):
		return scoreagent.MinScore
	case ms <= 0:
		return scoreagent.MaxScore
	}
	return int32(math.Round(100 - 200*ms/(ms+float64(halfMillis))))
}

// Millis is a duration in (fractional) milliseconds, the unit Score takes.
func Millis(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
