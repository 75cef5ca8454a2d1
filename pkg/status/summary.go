// Package status rolls the ManifestWorks of a PlacementManifestWork up into its summary and conditions.
package status

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// WorkState is what one cluster's ManifestWork reports for its current generation.
type WorkState struct {
	Applied, AppliedFalse, Available, Progressing, Degraded bool
}

// currentCondition returns the condition of type t only when it was reported for the work's current generation.
func currentCondition(work *workv1.ManifestWork, t string) *metav1.Condition {
	c := meta.FindStatusCondition(work.Status.Conditions, t)
	if c == nil || c.ObservedGeneration != work.Generation {
		return nil
	}
	return c
}

// StateOf reads a ManifestWork's conditions, ignoring those of an older generation.
func StateOf(work *workv1.ManifestWork) WorkState {
	is := func(t string, s metav1.ConditionStatus) bool {
		c := currentCondition(work, t)
		return c != nil && c.Status == s
	}
	return WorkState{
		Applied:      is(workv1.WorkApplied, metav1.ConditionTrue),
		AppliedFalse: is(workv1.WorkApplied, metav1.ConditionFalse),
		Available:    is(workv1.WorkAvailable, metav1.ConditionTrue),
		Progressing:  is(workv1.WorkProgressing, metav1.ConditionTrue),
		Degraded:     is(workv1.WorkDegraded, metav1.ConditionTrue),
	}
}

// Summarize counts the decided clusters by the state of their ManifestWork. works holds the current
// ManifestWork of each decided cluster that has one; total is the number of decided clusters.
func Summarize(total int, works []*workv1.ManifestWork) workv1alpha1.PlacedManifestWorkSummary {
	s := workv1alpha1.PlacedManifestWorkSummary{Total: int32(total)}
	for _, w := range works {
		st := StateOf(w)
		if st.Applied {
			s.Applied++
		}
		if st.Available {
			s.Available++
		}
		if st.Progressing {
			s.Progressing++
		}
		if st.Degraded {
			s.Degraded++
		}
	}
	return s
}
