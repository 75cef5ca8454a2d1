package fleet

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

func jobReport(cluster string, active, succeeded, failed int, state string) ClusterReport {
	r := ClusterReport{Cluster: cluster, CarriesCurrent: true, Applied: true, Available: true,
		Feedback: fb(health.Active, active, health.Succeeded, succeeded, health.Failed, failed),
		Health:   health.Verdict{State: health.Progressing, Message: "running"}}
	switch state {
	case "complete":
		r.Feedback[health.Complete] = fb(health.Complete, "True")[health.Complete]
		r.Health = health.Verdict{State: health.Healthy, Finished: true}
	case "failed":
		r.Feedback[health.FailedCondition] = fb(health.FailedCondition, "True")[health.FailedCondition]
		r.Health = health.Verdict{State: health.Degraded, Finished: true, Message: "BackoffLimitExceeded"}
	}
	return r
}

func jcond(t batchv1.JobConditionType, reason, msg string, at metav1.Time) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: at, LastTransitionTime: at}
}

func TestJobStatus(t *testing.T) {
	job := func(fields ...any) *unstructured.Unstructured {
		return obj("batch/v1", "Job", "migrate", append([]any{"metadata.generation", 1}, fields...)...)
	}
	started := metav1.NewTime(t0.Add(-time.Hour))
	startedAt := func(fields ...any) *unstructured.Unstructured {
		return job(append([]any{"status.startTime", started.UTC().Format(time.RFC3339)}, fields...)...)
	}
	completedMsg := "Reached expected number of succeeded pods on 2 clusters"
	cases := map[string]struct {
		obj          *unstructured.Unstructured
		clusters     []ClusterReport
		want         batchv1.JobStatus
		wantComplete bool // kubectl wait --for=condition=Complete
		wantFailed   bool // kubectl wait --for=condition=Failed
		wantEvents   []Event
	}{
		"running: counts summed, started": {
			obj:      job(),
			clusters: []ClusterReport{jobReport("eu-1", 1, 0, 0, ""), jobReport("eu-2", 2, 1, 0, "")},
			want:     batchv1.JobStatus{Active: 3, Succeeded: 1, StartTime: &t0m},
			wantEvents: []Event{
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-1: 1 active, 0 succeeded, 0 failed", Cluster: "eu-1"},
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 2 active, 1 succeeded, 0 failed", Cluster: "eu-2"},
			},
		},
		"complete on one cluster only": {
			obj:      startedAt(),
			clusters: []ClusterReport{jobReport("eu-1", 0, 1, 0, "complete"), jobReport("eu-2", 1, 0, 0, "")},
			want:     batchv1.JobStatus{Active: 1, Succeeded: 1, StartTime: &started},
			wantEvents: []Event{
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 1 active, 0 succeeded, 0 failed", Cluster: "eu-2"},
			},
		},
		"complete on every cluster: Complete, with what status validation asks for": {
			obj:      startedAt(),
			clusters: []ClusterReport{jobReport("eu-1", 0, 1, 0, "complete"), jobReport("eu-2", 0, 1, 1, "complete")},
			want: batchv1.JobStatus{Succeeded: 2, Failed: 1, StartTime: &started, CompletionTime: &t0m, Conditions: []batchv1.JobCondition{
				jcond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", completedMsg, t0m),
				jcond(batchv1.JobComplete, "CompletionsReached", completedMsg, t0m),
			}},
			wantComplete: true,
		},
		"a cluster still on an earlier template is not complete": {
			obj:      startedAt(),
			clusters: []ClusterReport{jobReport("eu-1", 0, 1, 0, "complete"), stale(jobReport("eu-2", 0, 1, 0, "complete"))},
			want:     batchv1.JobStatus{Succeeded: 2, StartTime: &started},
		},
		"failed on one cluster, running on another: FailureTarget, not yet Failed": {
			obj:      startedAt(),
			clusters: []ClusterReport{jobReport("eu-1", 0, 0, 3, "failed"), jobReport("eu-2", 1, 0, 0, "")},
			want: batchv1.JobStatus{Active: 1, Failed: 3, StartTime: &started, Conditions: []batchv1.JobCondition{
				jcond(batchv1.JobFailureTarget, JobReasonFailedOnCluster, "the Job failed on 1 cluster eu-1", t0m),
			}},
			wantEvents: []Event{
				{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-1: 0 active, 0 succeeded, 3 failed: BackoffLimitExceeded", Cluster: "eu-1"},
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 1 active, 0 succeeded, 0 failed", Cluster: "eu-2"},
			},
		},
		"failed on one cluster, finished on the others: Failed": {
			obj:      startedAt(),
			clusters: []ClusterReport{jobReport("eu-1", 0, 0, 3, "failed"), jobReport("eu-2", 0, 1, 0, "complete")},
			want: batchv1.JobStatus{Succeeded: 1, Failed: 3, StartTime: &started, Conditions: []batchv1.JobCondition{
				jcond(batchv1.JobFailureTarget, JobReasonFailedOnCluster, "the Job failed on 1 cluster eu-1", t0m),
				jcond(batchv1.JobFailed, JobReasonFailedOnCluster, "the Job failed on 1 cluster eu-1", t0m),
			}},
			wantFailed: true,
			wantEvents: []Event{
				{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-1: 0 active, 0 succeeded, 3 failed: BackoffLimitExceeded", Cluster: "eu-1"},
			},
		},
		"Complete is final, counters never go down (a cluster left)": {
			obj: startedAt("status.completionTime", t0.Format(time.RFC3339), "status.succeeded", 2,
				"status.conditions", []any{
					map[string]any{"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": completedMsg},
					map[string]any{"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": completedMsg},
				}),
			clusters: []ClusterReport{jobReport("eu-3", 1, 0, 0, "")},
			want: batchv1.JobStatus{Succeeded: 2, StartTime: &started, CompletionTime: &t0m, Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: completedMsg},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: completedMsg},
			}},
			wantComplete: true,
			wantEvents: []Event{
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-3: 1 active, 0 succeeded, 0 failed", Cluster: "eu-3"},
			},
		},
		"suspended and not started: no startTime": {
			obj:      job("spec.suspend", true),
			clusters: []ClusterReport{jobReport("eu-1", 0, 0, 0, "")},
			want:     batchv1.JobStatus{},
			wantEvents: []Event{
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-1: 0 active, 0 succeeded, 0 failed", Cluster: "eu-1"},
			},
		},
		"no cluster: never complete": {
			obj:  job(),
			want: batchv1.JobStatus{},
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventNoClusters,
				Message: "no cluster is selected: nothing runs; check the namespace's placement and the ManagedClusterSets bound to it"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, events := Status(tc.obj, tc.clusters, t0)
			fleetObj := withStatus(tc.obj, status)
			got := typed[batchv1.Job](t, fleetObj).Status
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := conditionTrue(fleetObj, "Complete"); got != tc.wantComplete {
				t.Errorf("kubectl wait --for=condition=Complete = %v, want %v", got, tc.wantComplete)
			}
			if got := conditionTrue(fleetObj, "Failed"); got != tc.wantFailed {
				t.Errorf("kubectl wait --for=condition=Failed = %v, want %v", got, tc.wantFailed)
			}
			checkJobTransition(t, typed[batchv1.Job](t, tc.obj).Status, got)
			checkAtRest(t, tc.obj, status, tc.clusters)
		})
	}
}

// TestJobTransitions walks random sequences of reports and checks that every status written is one the API
// server's Job status validation admits after the one before.
func TestJobTransitions(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	states := []string{"", "", "complete", "failed"}
	for i := range 500 {
		o := obj("batch/v1", "Job", "migrate", "metadata.generation", 1)
		now := t0
		for step := range 8 {
			var clusters []ClusterReport
			for c := range r.IntN(4) {
				rep := jobReport([]string{"eu-1", "eu-2", "eu-3"}[c], r.IntN(3), r.IntN(3), r.IntN(3), states[r.IntN(len(states))])
				if r.IntN(6) == 0 {
					rep = stale(rep)
				}
				clusters = append(clusters, rep)
			}
			prev := typed[batchv1.Job](t, o).Status
			status, _ := Status(o, clusters, now)
			o = withStatus(o, status)
			next := typed[batchv1.Job](t, o).Status
			if !checkJobTransition(t, prev, next) {
				t.Fatalf("sequence %d step %d: clusters %+v", i, step, clusters)
			}
			now = now.Add(time.Minute)
		}
	}
}

// checkJobTransition checks the rules of the API server's Job status validation (with JobManagedBy, as
// Kubernetes 1.32 and later run it) that the fleet's writes could break.
func checkJobTransition(t *testing.T, prev, next batchv1.JobStatus) bool {
	t.Helper()
	is := func(st batchv1.JobStatus, c batchv1.JobConditionType) bool { return jobTrue(st.Conditions, c) }
	complete, failed := is(next, batchv1.JobComplete), is(next, batchv1.JobFailed)
	finished := complete || failed
	var problems []string
	check := func(ok bool, rule string) {
		if !ok {
			problems = append(problems, rule)
		}
	}
	check(!complete || !failed, "Complete and Failed")
	check(!complete || !is(next, batchv1.JobFailureTarget), "Complete and FailureTarget")
	check(!complete || next.CompletionTime != nil, "Complete without completionTime")
	check(complete || next.CompletionTime == nil, "completionTime without Complete")
	check(!complete || is(next, batchv1.JobSuccessCriteriaMet), "Complete without SuccessCriteriaMet")
	check(!failed || is(next, batchv1.JobFailureTarget), "Failed without FailureTarget")
	check(!is(next, batchv1.JobSuccessCriteriaMet) || !failed && !is(next, batchv1.JobFailureTarget), "SuccessCriteriaMet with a failure")
	check(!finished || next.Active == 0, "finished with active pods")
	check(!finished || next.StartTime != nil, "finished without startTime")
	check(next.StartTime == nil || next.CompletionTime == nil || !next.CompletionTime.Before(next.StartTime), "completionTime before startTime")
	check(prev.StartTime == nil || next.StartTime != nil && next.StartTime.Equal(prev.StartTime), "startTime changed")
	check(prev.CompletionTime == nil || next.CompletionTime != nil && next.CompletionTime.Equal(prev.CompletionTime), "completionTime changed")
	check(next.Succeeded >= prev.Succeeded && next.Failed >= prev.Failed, "a counter decreased")
	for _, c := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget} {
		check(!is(prev, c) || is(next, c), "terminal condition "+string(c)+" removed")
	}
	if len(problems) > 0 {
		t.Errorf("status validation would refuse %+v after %+v: %v", next, prev, problems)
		return false
	}
	return true
}
