package scoreagent

import (
	"time"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
)

// DefaultValidFor is how long a score counts after it is measured when the generator does not say: the
// API's. The agent measures again well before then; a score that is not refreshed (the agent stopped, the
// cluster is cut off) stops counting, so placement does not rank a cluster by an old fact.
const DefaultValidFor = scoresv1alpha1.DefaultValidFor

// ValidUntil is the AddOnPlacementScore's validUntil for scores measured at measuredAt: measuredAt plus
// validFor, or DefaultValidFor when validFor is not positive. It is truncated to the second, which is what
// the API's metav1.Time keeps, so what the agent computes is what a reader sees.
func ValidUntil(measuredAt time.Time, validFor time.Duration) time.Time {
	if validFor <= 0 {
		validFor = DefaultValidFor
	}
	return measuredAt.Add(validFor).Truncate(time.Second)
}

// Expired says whether scores valid until validUntil no longer count at now. The instant itself counts as
// expired, as the PlacementManifestWork controller reads it. A zero validUntil never expires: OCM reads an
// AddOnPlacementScore without validUntil as valid forever.
func Expired(validUntil, now time.Time) bool {
	if validUntil.IsZero() {
		return false
	}
	return !now.Before(validUntil)
}
