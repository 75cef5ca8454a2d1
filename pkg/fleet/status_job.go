package fleet

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// job is the fleet Job's status. The API server validates a Job's status transitions (the JobManagedBy
// rules, on by default since Kubernetes 1.32): a finished Job has a startTime and no active pods, Complete
// comes with SuccessCriteriaMet and a completionTime that never changes, Failed with FailureTarget,
// terminal conditions are never removed, and the succeeded and failed counters never decrease. The status
// keeps to them, so the controller's writes are never refused.
func (v view) job() *batchv1.JobStatus {
	var prev batchv1.JobStatus
	v.previous(&prev)
	var active, succeeded, failed int64
	complete, finished := len(v.clusters) > 0, true
	var failedOn []string
	anyApplied := false
	for _, c := range v.clusters {
		active += c.Feedback.Count(health.Active)
		succeeded += c.Feedback.Count(health.Succeeded)
		failed += c.Feedback.Count(health.Failed)
		anyApplied = anyApplied || c.Applied
		done := c.Feedback.Text(health.Complete) == string(corev1.ConditionTrue)
		lost := c.Feedback.Text(health.FailedCondition) == string(corev1.ConditionTrue)
		if lost {
			failedOn = append(failedOn, c.Cluster)
		}
		if !done || !c.CarriesCurrent {
			complete = false
		}
		if !done && !lost {
			finished = false
		}
	}
	st := &batchv1.JobStatus{
		Active:         int32Of(active),
		Succeeded:      max(int32Of(succeeded), prev.Succeeded),
		Failed:         max(int32Of(failed), prev.Failed),
		StartTime:      prev.StartTime,
		CompletionTime: prev.CompletionTime,
	}
	if jobTrue(prev.Conditions, batchv1.JobComplete) || jobTrue(prev.Conditions, batchv1.JobFailed) {
		st.Active = 0
		st.Conditions = prev.Conditions
		return st
	}
	suspended, _, _ := unstructured.NestedBool(v.obj.Object, "spec", "suspend")
	if st.StartTime == nil && (anyApplied && !suspended || complete || len(failedOn) > 0) {
		st.StartTime = &v.now
	}
	switch {
	case jobTrue(prev.Conditions, batchv1.JobFailureTarget) || len(failedOn) > 0:
		msg := "the Job failed on " + text.Count(len(failedOn), "cluster", "clusters") + " " + strings.Join(failedOn, ", ")
		if len(failedOn) == 0 {
			msg = prevMessage(prev.Conditions, batchv1.JobFailureTarget)
		}
		st.Conditions = append(st.Conditions, v.jobCondition(prev.Conditions, batchv1.JobFailureTarget, JobReasonFailedOnCluster, msg))
		if finished {
			st.Active = 0
			st.Conditions = append(st.Conditions, v.jobCondition(prev.Conditions, batchv1.JobFailed, JobReasonFailedOnCluster, msg))
		}
	case complete:
		st.Active = 0
		completion := v.now
		if completion.Before(st.StartTime) {
			completion = *st.StartTime
		}
		st.CompletionTime = &completion
		msg := fmt.Sprintf("Reached expected number of succeeded pods on %s", text.Count(len(v.clusters), "cluster", "clusters"))
		st.Conditions = append(st.Conditions,
			v.jobCondition(prev.Conditions, batchv1.JobSuccessCriteriaMet, reasonCompletionsReached, msg),
			v.jobCondition(prev.Conditions, batchv1.JobComplete, reasonCompletionsReached, msg))
	}
	return st
}

func jobTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func prevMessage(conds []batchv1.JobCondition, t batchv1.JobConditionType) string {
	for _, c := range conds {
		if c.Type == t {
			return c.Message
		}
	}
	return ""
}

// jobCondition is a True condition of type t, with the times of the previous one of that type when it was
// True already, as the job controller keeps them.
func (v view) jobCondition(prev []batchv1.JobCondition, t batchv1.JobConditionType, reason, message string) batchv1.JobCondition {
	c := batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: v.now, LastTransitionTime: v.now}
	for _, p := range prev {
		if p.Type == t && p.Status == corev1.ConditionTrue {
			c.LastTransitionTime = p.LastTransitionTime
			c.LastProbeTime = p.LastProbeTime
			if p.Reason == reason && p.Message == message {
				return p
			}
		}
	}
	return c
}
