package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	workv1 "open-cluster-management.io/api/work/v1"
)

// expectedWrite is a ManifestWork write that succeeded and that the cache must show before the next plan.
type expectedWrite struct {
	// staleVersion is the resourceVersion the update replaced; empty for a create.
	staleVersion string
	// deletedUID is the UID of a deleted work; empty for a create or update.
	deletedUID types.UID
	// version is the resourceVersion an update returned; empty for a create or delete, which only the cached
	// list shows.
	version string
}

// seenIn says whether the cached work of the cluster (nil when none) reflects the write. An update is shown
// by the cached work at or past the version the update returned: the work's own version, not how far the cache
// has come hub-wide, because while a relist replaces the cache's objects one by one, the cache holds works
// newer than some it has not replaced yet (a run of 100 x 500 planned 2,280 updates again from such works).
// Where versions do not compare, any version other than the replaced one is the written one or newer.
func (e expectedWrite) seenIn(cached *workv1.ManifestWork) bool {
	switch {
	case e.deletedUID != "":
		return cached == nil || cached.UID != e.deletedUID || !cached.DeletionTimestamp.IsZero()
	case e.staleVersion != "":
		if cached == nil {
			return true
		}
		if e.version != "" {
			if c, err := resourceversion.CompareResourceVersion(cached.ResourceVersion, e.version); err == nil {
				return c >= 0
			}
		}
		return cached.ResourceVersion != e.staleVersion
	default:
		// A create: only a cache that lists it shows it. One that never shows (deleted at once by someone else)
		// ends the wait at expectationCap.
		return cached != nil
	}
}

// workCache is how far the cache of ManifestWorks has come: the newest resourceVersion its watch delivered
// (the event handler sees an event once the cache holds it) and when that last advanced. A cache that falls
// minutes behind the hub still advances, and waiting for it is cheaper than repeating writes it has not shown
// yet. Resource versions that are not the API server's comparable integers are ignored: the wait then follows
// each PlacementManifestWork's own writes only.
type workCache struct {
	mu         sync.Mutex
	newest     string
	advancedAt time.Time
}

// observed records that the cache delivered a ManifestWork at version, at now.
func (c *workCache) observed(version string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.newest != "" {
		if cmp, err := resourceversion.CompareResourceVersion(version, c.newest); err != nil || cmp <= 0 {
			return
		}
	} else if _, err := resourceversion.CompareResourceVersion(version, version); err != nil {
		return
	}
	c.newest, c.advancedAt = version, now
}

// lastAdvance is when the cache last advanced. Taken before listing from the cache, progress it makes during the
// list counts from the next reconcile on.
func (c *workCache) lastAdvance() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.advancedAt
}
