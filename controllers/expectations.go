package controllers

import (
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
)

// expectedWrite is a ManifestWork write that succeeded and that the cache must show before the next plan.
type expectedWrite struct {
	// staleVersion is the resourceVersion the update replaced; empty for a create.
	staleVersion string
	// deletedUID is the UID of a deleted work; empty for a create or update.
	deletedUID types.UID
}

// seenIn says whether the cached work of the cluster (nil when none) reflects the write. The watch delivers
// versions in order, so any version other than the replaced one is the written one or newer.
func (e expectedWrite) seenIn(cached *workv1.ManifestWork) bool {
	switch {
	case e.deletedUID != "":
		return cached == nil || cached.UID != e.deletedUID || !cached.DeletionTimestamp.IsZero()
	case e.staleVersion != "":
		return cached == nil || cached.ResourceVersion != e.staleVersion
	default:
		return cached != nil
	}
}
