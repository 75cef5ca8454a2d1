package fleet

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// gcFinalizers are the finalizers the API server adds to an object deleted with propagationPolicy Foreground
// (foregroundDeletion: `kubectl delete --cascade=foreground`, Argo CD's prune) or Orphan (orphan:
// `--cascade=orphan`). Only a garbage collector removes them, once it has deleted or orphaned the object's
// dependents; a fleet API server without kube-controller-manager has none, so the object stays Terminating.
var gcFinalizers = []string{metav1.FinalizerDeleteDependents, metav1.FinalizerOrphanDependents}

// HeldByGC tells whether o is being deleted and holds one of the garbage collector's finalizers.
func HeldByGC(o metav1.Object) bool {
	return o.GetDeletionTimestamp() != nil && slices.ContainsFunc(o.GetFinalizers(), isGCFinalizer)
}

// WithoutGCFinalizers are the finalizers of o, an object being deleted, without the garbage collector's, in
// order: what a garbage collector would leave once o has no dependents left to delete or orphan. ok is false
// when there is nothing to remove: o is not held by them (HeldByGC), or an object names o as its owner (owners
// are the UIDs that the ownerReferences of o's namespace name), whose dependents a garbage collector must delete
// or orphan first. Someone else's finalizers are always kept.
func WithoutGCFinalizers(o metav1.Object, owners map[types.UID]bool) (finalizers []string, ok bool) {
	if !HeldByGC(o) || owners[o.GetUID()] {
		return nil, false
	}
	rest := slices.DeleteFunc(slices.Clone(o.GetFinalizers()), isGCFinalizer)
	if len(rest) == 0 {
		rest = nil
	}
	return rest, true
}

func isGCFinalizer(f string) bool { return slices.Contains(gcFinalizers, f) }
