package controllers

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/status"
)

// maxNamesInMessage bounds how many clusters a condition message names.
const maxNamesInMessage = 5

// computeStatus turns what a reconcile observed into the PlacementManifestWork's status. It does no I/O.
func computeStatus(pmw *workv1alpha1.PlacementManifestWork, obs *observation) workv1alpha1.PlacementManifestWorkStatus {
	st := *pmw.Status.DeepCopy()
	st.ObservedGeneration = pmw.Generation
	st.Placement = obs.placementName

	works := obs.current
	total := len(obs.clusters)
	switch {
	case !obs.placementFound:
		// The works are kept while the Placement is missing, so they are what the summary describes.
		works = mapValues(obs.owned)
		total = len(works)
	case obs.plan == nil:
		works = worksOf(obs.owned, obs.clusters)
	}
	st.PlacedManifestWorkSummary = status.Summarize(total, works)
	if obs.plan != nil {
		st.Splits = obs.plan.Splits
	}

	setCondition(&st, pmw, placementCondition(obs))
	setCondition(&st, pmw, appliedCondition(obs, works, st.PlacedManifestWorkSummary))
	setCondition(&st, pmw, distributedCondition(pmw, obs))
	return st
}

func setCondition(st *workv1alpha1.PlacementManifestWorkStatus, pmw *workv1alpha1.PlacementManifestWork, c metav1.Condition) {
	c.ObservedGeneration = pmw.Generation
	meta.SetStatusCondition(&st.Conditions, c)
}

func placementCondition(obs *observation) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionPlacementVerified}
	switch {
	case !obs.placementFound:
		c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementNotFound
		c.Message = fmt.Sprintf("Placement %q does not exist in this namespace; the %d ManifestWorks already delivered are kept", obs.placementName, len(obs.owned))
	case len(obs.clusters) == 0:
		c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionEmpty
		c.Message = fmt.Sprintf("Placement %q selects no cluster: check its predicates and the ManagedClusterSetBindings of this namespace", obs.placementName)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecided
		c.Message = fmt.Sprintf("Placement %q selects %d clusters", obs.placementName, len(obs.clusters))
	}
	return c
}

func appliedCondition(obs *observation, works []*workv1.ManifestWork, summary workv1alpha1.PlacedManifestWorkSummary) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionManifestworkApplied, Status: metav1.ConditionFalse}
	switch {
	case obs.invalid != nil:
		c.Reason, c.Message = obs.invalid.Reason, obs.invalid.Message
	case !obs.placementFound || len(obs.clusters) == 0:
		c.Reason, c.Message = workv1alpha1.ReasonNoClusters, "No cluster is decided, so no ManifestWork is written"
	case len(obs.conflicts) > 0:
		c.Reason = workv1alpha1.ReasonManifestWorkConflict
		c.Message = fmt.Sprintf("A ManifestWork named %q that this PlacementManifestWork does not own exists in %s; it is left alone and those clusters get nothing until it is removed or renamed",
			obs.workName, names(obs.conflicts))
	case len(obs.writeErrors) > 0:
		c.Reason = workv1alpha1.ReasonWriteFailed
		c.Message = fmt.Sprintf("%d ManifestWork writes failed and will be retried: %v", len(obs.writeErrors), obs.writeErrors[0])
	default:
		var failed []string
		for _, w := range works {
			if status.StateOf(w).AppliedFalse {
				failed = append(failed, w.Namespace)
			}
		}
		sort.Strings(failed)
		switch {
		case len(failed) > 0:
			c.Reason = workv1alpha1.ReasonApplyFailed
			c.Message = fmt.Sprintf("%d of %d clusters report Applied=False: %s", len(failed), summary.Total, names(failed))
		case summary.Applied < summary.Total:
			c.Reason = workv1alpha1.ReasonWaitingForApply
			c.Message = fmt.Sprintf("%d of %d clusters applied the current ManifestWork", summary.Applied, summary.Total)
		default:
			c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAsExpected
			c.Message = fmt.Sprintf("All %d clusters applied the current ManifestWork", summary.Total)
		}
	}
	return c
}

func distributedCondition(pmw *workv1alpha1.PlacementManifestWork, obs *observation) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionDistributed, Status: metav1.ConditionFalse}
	switch {
	case obs.invalid != nil:
		c.Reason, c.Message = obs.invalid.Reason, obs.invalid.Message
	case obs.plan != nil && len(obs.plan.Problems) > 0:
		msgs := make([]string, 0, len(obs.plan.Problems))
		for _, p := range obs.plan.Problems {
			msgs = append(msgs, p.Message)
		}
		c.Reason, c.Message = obs.plan.Problems[0].Reason, strings.Join(msgs, "; ")
	default:
		c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonDistributed
		manifests := len(pmw.Spec.ManifestWorkTemplate.Workload.Manifests)
		splits := 0
		if obs.plan != nil {
			splits = len(obs.plan.Splits)
		}
		c.Message = fmt.Sprintf("%d manifests: %d replicated, %d split", manifests, manifests-splits, splits)
	}
	return c
}

// names lists the first few names and counts the rest.
func names(all []string) string {
	if len(all) <= maxNamesInMessage {
		return strings.Join(all, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(all[:maxNamesInMessage], ", "), len(all)-maxNamesInMessage)
}

func mapValues(m map[string]*workv1.ManifestWork) []*workv1.ManifestWork {
	out := make([]*workv1.ManifestWork, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	return out
}

func worksOf(m map[string]*workv1.ManifestWork, clusters []string) []*workv1.ManifestWork {
	out := make([]*workv1.ManifestWork, 0, len(clusters))
	for _, c := range clusters {
		if w, ok := m[c]; ok {
			out = append(out, w)
		}
	}
	return out
}
