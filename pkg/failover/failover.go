// Package failover decides, per cluster, whether the split shares it holds are carried by other clusters: a
// cluster that stays degraded or unavailable without a break for a grace period is failed over, and it gets
// its shares back only after staying available for a recovery period, so a flapping cluster does not move
// replicas back and forth.
//
// The state is the manager's own (kept in memory, and for failed-over clusters in the PlacementManifestWork's
// status so a restart keeps them failed over), never read from a ManifestWork: a work agent may edit its own
// ManifestWork, and what it writes there must not move other clusters' replicas.
package failover

import "time"

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
	// Progressing: neither healthy nor degraded.
	Progressing
	// Unhealthy: the cluster is degraded or its ManagedCluster is unavailable.
	Unhealthy
)

// Policy is a FailoverPolicy with its defaults applied.
type Policy struct {
	Grace, Recovery time.Duration
}

// State is one cluster's failover state.
type State struct {
	// UnhealthySince is when the cluster's current unbroken unhealthy spell began; zero when it is not unhealthy.
	UnhealthySince time.Time
	// FailedOver is true when other clusters carry the cluster's split shares.
	FailedOver bool
	// FailedOverSince is when the cluster was failed over.
	FailedOverSince time.Time
	// HealthySince is, for a failed-over cluster, when its current unbroken available spell began.
	HealthySince time.Time
}

// Next moves one cluster's failover state forward given its health now. It also returns, when positive, how
// long until the state changes with time alone.
//
//   - Unhealthy: the spell starts when it has not; the cluster fails over once the spell lasts the grace period.
//   - Available: the unhealthy spell ends. A failed-over cluster starts (or continues) its available spell and
//     gets its shares back once that lasts the recovery period.
//   - Progressing: the unhealthy spell ends too, so an outage of a minute followed by a slow recovery is not a
//     failover; a failed-over cluster stays failed over, and its recovery starts again once it is available.
func Next(p Policy, now time.Time, h Health, s State) (State, time.Duration) {
	switch h {
	case Unhealthy:
		s.HealthySince = time.Time{}
		if s.UnhealthySince.IsZero() {
			s.UnhealthySince = now
		}
		if s.FailedOver {
			return s, 0
		}
		if left := p.Grace - now.Sub(s.UnhealthySince); left > 0 {
			return s, left
		}
		s.FailedOver, s.FailedOverSince = true, now
		return s, 0
	case Available:
		s.UnhealthySince = time.Time{}
		if !s.FailedOver {
			return State{}, 0
		}
		if s.HealthySince.IsZero() {
			s.HealthySince = now
		}
		if left := p.Recovery - now.Sub(s.HealthySince); left > 0 {
			return s, left
		}
		return State{}, 0
	default:
		s.UnhealthySince, s.HealthySince = time.Time{}, time.Time{}
		return s, 0
	}
}
