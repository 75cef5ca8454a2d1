// Package failover decides, per cluster, whether the split shares it holds are carried by other clusters: a
// cluster that stays degraded or unavailable beyond a grace period is failed over, and it gets its shares back
// only after staying available for a recovery period, so a flapping cluster does not move replicas back and
// forth. The state lives in two annotations of the cluster's ManifestWork, so it survives restarts.
package failover

import "time"

const (
	// AnnotationUnhealthySince is when the cluster was first seen degraded or unavailable.
	AnnotationUnhealthySince = "work.open-cluster-management.io/placementmanifestwork-unhealthy-since"
	// AnnotationHealthySince is when a failed-over cluster was first seen available again.
	AnnotationHealthySince = "work.open-cluster-management.io/placementmanifestwork-healthy-since"
)

// Defaults of FailoverPolicy.
const (
	DefaultGracePeriod    = 5 * time.Minute
	DefaultRecoveryPeriod = 2 * time.Minute
)

// Health is what failover needs to know of a cluster now.
type Health int

const (
	// Available: the cluster is healthy.
	Available Health = iota
	// Progressing: neither healthy nor degraded; failover state does not move.
	Progressing
	// Unhealthy: the cluster is degraded or its ManagedCluster is unavailable.
	Unhealthy
)

// Policy is a FailoverPolicy with its defaults applied.
type Policy struct {
	Grace, Recovery time.Duration
}

// Decision is a cluster's failover state after Decide.
type Decision struct {
	// Annotations are the failover annotations the cluster's ManifestWork should carry (possibly none).
	Annotations map[string]string
	// FailedOver is true when other clusters carry the cluster's split shares.
	FailedOver bool
	// RecheckAfter, when positive, is when the decision changes with time alone.
	RecheckAfter time.Duration
}

// Decide moves one cluster's failover state forward given its health now and its work's annotations.
//
//   - Unhealthy: the unhealthy-since time is recorded when missing; the cluster is failed over once it is
//     older than the grace period. A recovery in progress is forgotten.
//   - Available: a cluster that was never failed over forgets its unhealthy-since time. A failed-over one
//     records healthy-since and gets its shares back once that is older than the recovery period.
//   - Progressing: nothing is recorded or forgotten; a failed-over cluster stays failed over and a recovery in
//     progress restarts when it is available again.
func Decide(p Policy, now time.Time, h Health, annotations map[string]string) Decision {
	unhealthySince, hasUnhealthy := parse(annotations[AnnotationUnhealthySince])
	healthySince, hasHealthy := parse(annotations[AnnotationHealthySince])
	failedOver := hasUnhealthy && now.Sub(unhealthySince) >= p.Grace
	d := Decision{Annotations: map[string]string{}}

	switch h {
	case Unhealthy:
		if !hasUnhealthy {
			unhealthySince = now
		}
		d.Annotations[AnnotationUnhealthySince] = format(unhealthySince)
		d.FailedOver = now.Sub(unhealthySince) >= p.Grace
		if !d.FailedOver {
			d.RecheckAfter = p.Grace - now.Sub(unhealthySince)
		}
	case Available:
		if !failedOver {
			return d // recovered before the grace period ended, or never unhealthy
		}
		if !hasHealthy {
			healthySince = now
		}
		if now.Sub(healthySince) >= p.Recovery {
			return d // recovered for long enough: shares come back
		}
		d.Annotations[AnnotationUnhealthySince] = format(unhealthySince)
		d.Annotations[AnnotationHealthySince] = format(healthySince)
		d.FailedOver = true
		d.RecheckAfter = p.Recovery - now.Sub(healthySince)
	default:
		if hasUnhealthy {
			d.Annotations[AnnotationUnhealthySince] = format(unhealthySince)
			d.FailedOver = failedOver
			if !failedOver {
				d.RecheckAfter = p.Grace - now.Sub(unhealthySince)
			}
		}
	}
	return d
}

func parse(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

func format(t time.Time) string { return t.UTC().Format(time.RFC3339) }
