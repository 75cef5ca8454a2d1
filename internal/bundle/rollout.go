package bundle

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// The patterns of the CRD's rules on spec.rolloutStrategy (api/v1alpha1), so what Wrap accepts the API server
// admits.
var (
	minSuccessTimePattern   = regexp.MustCompile(`^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$`)
	progressDeadlinePattern = regexp.MustCompile(`^(None|([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?)$`)
	percentPattern          = regexp.MustCompile(`^(100|[0-9]{1,2})%$`)
)

// rolloutStrategy builds spec.rolloutStrategy from the options; nil when none is asked for.
func rolloutStrategy(o Options) (*clusterv1alpha1.RolloutStrategy, error) {
	var typ clusterv1alpha1.RolloutType
	switch strings.ToLower(o.Rollout) {
	case "":
		for _, f := range [][2]string{{"max-concurrency", o.MaxConcurrency}, {"min-success-time", o.MinSuccessTime},
			{"progress-deadline", o.ProgressDeadline}, {"max-failures", o.MaxFailures}} {
			if f[1] != "" {
				return nil, fmt.Errorf("--%s needs a rollout strategy: add --rollout Progressive (or ProgressivePerGroup, or All)", f[0])
			}
		}
		return nil, nil
	case "all":
		typ = clusterv1alpha1.All
	case "progressive":
		typ = clusterv1alpha1.Progressive
	case "progressivepergroup":
		typ = clusterv1alpha1.ProgressivePerGroup
	default:
		return nil, fmt.Errorf("rollout %q: use All, Progressive or ProgressivePerGroup", o.Rollout)
	}
	if o.MaxConcurrency != "" && typ != clusterv1alpha1.Progressive {
		return nil, fmt.Errorf("--max-concurrency applies only to --rollout Progressive, not %s", typ)
	}
	if typ == clusterv1alpha1.All && (o.MinSuccessTime != "" || o.MaxFailures != "") {
		return nil, fmt.Errorf("--min-success-time and --max-failures apply only to --rollout Progressive or ProgressivePerGroup; All updates every cluster at once")
	}
	var cfg clusterv1alpha1.RolloutConfig
	if o.MinSuccessTime != "" {
		d, err := minSuccessTime(o.MinSuccessTime)
		if err != nil {
			return nil, err
		}
		cfg.MinSuccessTime = metav1.Duration{Duration: d}
	}
	if o.ProgressDeadline != "" {
		if !progressDeadlinePattern.MatchString(o.ProgressDeadline) {
			return nil, fmt.Errorf("--progress-deadline %q: use None or whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m", o.ProgressDeadline)
		}
		cfg.ProgressDeadline = o.ProgressDeadline
	}
	if o.MaxFailures != "" {
		v, err := countOrPercent("max-failures", o.MaxFailures)
		if err != nil {
			return nil, err
		}
		cfg.MaxFailures = v
	}
	rs := &clusterv1alpha1.RolloutStrategy{Type: typ}
	switch typ {
	case clusterv1alpha1.All:
		if cfg != (clusterv1alpha1.RolloutConfig{}) {
			rs.All = &clusterv1alpha1.RolloutAll{RolloutConfig: cfg}
		}
	case clusterv1alpha1.Progressive:
		rs.Progressive = &clusterv1alpha1.RolloutProgressive{RolloutConfig: cfg}
		if o.MaxConcurrency != "" {
			v, err := countOrPercent("max-concurrency", o.MaxConcurrency)
			if err != nil {
				return nil, err
			}
			rs.Progressive.MaxConcurrency = v
		}
	case clusterv1alpha1.ProgressivePerGroup:
		rs.ProgressivePerGroup = &clusterv1alpha1.RolloutProgressivePerGroup{RolloutConfig: cfg}
	}
	return rs, nil
}

// minSuccessTime parses a duration the CRD admits for minSuccessTime.
func minSuccessTime(s string) (time.Duration, error) {
	bad := fmt.Errorf("--min-success-time %q: use a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)", s)
	if !minSuccessTimePattern.MatchString(s) {
		return 0, bad
	}
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad
	}
	return d, nil
}

// countOrPercent parses a number of clusters (0 to 2147483647) or a percentage (0% to 100%).
func countOrPercent(flag, s string) (intstr.IntOrString, error) {
	if percentPattern.MatchString(s) {
		return intstr.FromString(s), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 || strings.HasPrefix(s, "+") {
		return intstr.IntOrString{}, fmt.Errorf("--%s %q: use a whole number of clusters from 0 to 2147483647 or a percentage from 0%% to 100%%", flag, s)
	}
	return intstr.FromInt32(int32(n)), nil
}
