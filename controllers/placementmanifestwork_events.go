package controllers

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// Event reasons, as users see them in kubectl get events (kept with the condition reasons in the API package).
const (
	EventDegraded  = workv1alpha1.EventReasonDegraded
	EventRecovered = workv1alpha1.EventReasonRecovered
	EventReady     = workv1alpha1.EventReasonReady
)

// Event is one event to record on a PlacementManifestWork.
type Event struct {
	Type, Reason, Message string
}

// failureReasons are condition reasons that are failures worth an event when a condition enters them.
var failureReasons = map[string]bool{
	workv1alpha1.ReasonPlacementNotFound:            true,
	workv1alpha1.ReasonManifestWorkConflict:         true,
	workv1alpha1.ReasonWriteFailed:                  true,
	workv1alpha1.ReasonInvalidTemplate:              true,
	workv1alpha1.ReasonInvalidSpec:                  true,
	workv1alpha1.ReasonInvalidSplitField:            true,
	workv1alpha1.ReasonApplyFailed:                  true,
	workv1alpha1.ReasonReplicasUnplaced:             true,
	workv1alpha1.ReasonManifestWorkTooLarge:         true,
	workv1alpha1.ReasonStrategyMatchesNoManifest:    true,
	workv1alpha1.ReasonStrategyMatchesManyManifests: true,
	workv1alpha1.ReasonDependencyNotFound:           true,
	workv1alpha1.ReasonInterpreterFailed:            true,
	workv1alpha1.ReasonInvalidOverride:              true,
	workv1alpha1.ReasonOverrideFailed:               true,
}

// Events compares the old and new status and returns the events the change deserves: a warning when a
// condition enters a failure reason, the transitions into and out of degraded, the end of a run that finishes
// (completed, or failed somewhere), and into Ready. Nothing is
// repeated while the state stays the same.
func Events(old, updated *workv1alpha1.PlacementManifestWorkStatus) []Event {
	var out []Event
	for _, t := range []string{workv1alpha1.ConditionPlacementVerified, workv1alpha1.ConditionManifestworkApplied, workv1alpha1.ConditionDistributed,
		workv1alpha1.ConditionStatusAggregated} {
		n := meta.FindStatusCondition(updated.Conditions, t)
		if n == nil || n.Status == metav1.ConditionTrue || !failureReasons[n.Reason] {
			continue
		}
		if o := meta.FindStatusCondition(old.Conditions, t); o != nil && o.Reason == n.Reason && o.Status == n.Status {
			continue
		}
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: n.Reason, Message: n.Message})
	}
	was, is := old.PlacedManifestWorkSummary.Degraded, updated.PlacedManifestWorkSummary.Degraded
	switch {
	case was == 0 && is > 0:
		msg := fmt.Sprintf("%d of %d clusters are degraded", is, updated.PlacedManifestWorkSummary.Total)
		if len(updated.UnhealthyClusters) > 0 && updated.UnhealthyClusters[0].State == "Degraded" {
			u := updated.UnhealthyClusters[0]
			msg += fmt.Sprintf(", for example %s: %s: %s", u.Cluster, u.Reason, u.Message)
		}
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: EventDegraded, Message: msg})
	case was > 0 && is == 0:
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: EventRecovered, Message: "No cluster is degraded any more"})
	}
	if was, is := meta.FindStatusCondition(old.Conditions, workv1alpha1.ConditionCompleted), meta.FindStatusCondition(updated.Conditions, workv1alpha1.ConditionCompleted); is != nil &&
		(was == nil || was.Reason != is.Reason) {
		switch is.Reason {
		case workv1alpha1.ReasonAllClustersCompleted:
			out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonCompleted, Message: is.Message})
		case workv1alpha1.ReasonClustersFailed:
			out = append(out, Event{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventReasonRunFailed, Message: is.Message})
		}
	}
	out = append(out, rolloutEvents(old, updated)...)
	if !meta.IsStatusConditionTrue(old.Conditions, workv1alpha1.ConditionReady) && meta.IsStatusConditionTrue(updated.Conditions, workv1alpha1.ConditionReady) {
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: EventReady, Message: meta.FindStatusCondition(updated.Conditions, workv1alpha1.ConditionReady).Message})
	}
	return out
}

// rolloutEvents are the events of a revision's rollout: RolloutStarted and RolloutCompleted, RolloutPaused when
// spec.paused starts holding clusters back, RolloutAwaitingApproval when a gate holds it and RolloutApproved
// when an approval is acted on, RolloutFailed when a failed revision is recorded (failurePolicy Rollback) and
// RolledBack when no cluster carries it any more.
func rolloutEvents(old, updated *workv1alpha1.PlacementManifestWorkStatus) []Event {
	var out []Event
	was, is := meta.FindStatusCondition(old.Conditions, workv1alpha1.ConditionRolloutComplete), meta.FindStatusCondition(updated.Conditions, workv1alpha1.ConditionRolloutComplete)
	if started(updated) && (!started(old) || !old.Rollout.StartedAt.Equal(updated.Rollout.StartedAt)) {
		msg := fmt.Sprintf("Revision %d started rolling out to %d clusters", updated.CurrentRevision.Revision, updated.Rollout.Total)
		if c := updated.CompletedRevision; c != nil {
			msg += fmt.Sprintf("; revision %d is the last completed", c.Revision)
		}
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolloutStarted, Message: msg})
	}
	if justCompleted(old, updated) {
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolloutCompleted,
			Message: fmt.Sprintf("Revision %d is rolled out: all %d clusters carry it and are available", updated.CompletedRevision.Revision, updated.Rollout.Total)})
	}
	entered := func(reason string) bool {
		return is != nil && is.Reason == reason && (was == nil || was.Reason != is.Reason)
	}
	if entered(workv1alpha1.ReasonRolloutPaused) {
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolloutPaused, Message: is.Message})
	}
	if entered(workv1alpha1.ReasonRolloutAwaitingApproval) {
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolloutAwaitingApproval, Message: is.Message})
	}
	for _, a := range updated.Approvals {
		if !approved(old.Approvals, a.Revision, a.Gate) {
			out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolloutApproved,
				Message: fmt.Sprintf("Gate %s is approved for revision %d (annotation %s); the rollout goes on", a.Gate, a.Revision, workv1alpha1.AnnotationApprove)})
		}
	}
	if newlyFailed(old, updated) {
		msg := fmt.Sprintf("Revision %d failed on %s", updated.FailedRevision.Revision, failedNames(updated.FailedRevision))
		if is != nil && is.Reason == workv1alpha1.ReasonRolledBack {
			msg = is.Message
		}
		out = append(out, Event{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventReasonRolloutFailed, Message: msg})
	}
	if rolledBack(updated) && !rolledBack(old) {
		out = append(out, Event{Type: corev1.EventTypeNormal, Reason: workv1alpha1.EventReasonRolledBack, Message: is.Message})
	}
	return out
}

// started reports whether the status records a rollout in progress (status.rollout.startedAt).
func started(st *workv1alpha1.PlacementManifestWorkStatus) bool {
	return st.Rollout != nil && st.Rollout.StartedAt != nil && st.CurrentRevision != nil
}

// justCompleted reports whether the rollout the old status recorded ended with its revision completed.
func justCompleted(old, updated *workv1alpha1.PlacementManifestWorkStatus) bool {
	c := updated.CompletedRevision
	return started(old) && updated.Rollout != nil && updated.Rollout.StartedAt == nil && c != nil && c.Name == old.CurrentRevision.Name
}

// newlyFailed reports whether the updated status records a failed revision the old one did not.
func newlyFailed(old, updated *workv1alpha1.PlacementManifestWorkStatus) bool {
	n, o := updated.FailedRevision, old.FailedRevision
	return n != nil && (o == nil || o.Name != n.Name || o.Revision != n.Revision)
}

// rolledBack reports whether a failed revision was rolled back on every cluster: RolloutComplete is RolledBack
// and status.rollout, which then counts the clusters that carry the completed revision, counts them all.
func rolledBack(st *workv1alpha1.PlacementManifestWorkStatus) bool {
	c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionRolloutComplete)
	return st.FailedRevision != nil && c != nil && c.Reason == workv1alpha1.ReasonRolledBack &&
		st.Rollout != nil && st.Rollout.Updated == st.Rollout.Total
}

// record emits the events of a status change.
func (r *PlacementManifestWorkReconciler) record(pmw *workv1alpha1.PlacementManifestWork, old, updated *workv1alpha1.PlacementManifestWorkStatus) {
	if r.Recorder == nil {
		return
	}
	for _, e := range Events(old, updated) {
		r.Recorder.Eventf(pmw, nil, e.Type, e.Reason, "Reconcile", "%s", e.Message)
	}
}
