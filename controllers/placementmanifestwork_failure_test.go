package controllers

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

func TestJudgeFailure(t *testing.T) {
	v1 := workv1alpha1.RevisionReference{Revision: 1, Name: "web-v1"}
	v2 := workv1alpha1.RevisionReference{Revision: 2, Name: "web-v2"}
	v3 := workv1alpha1.RevisionReference{Revision: 3, Name: "web-v3"}
	failed2 := &workv1alpha1.FailedRevision{Revision: 2, Name: "web-v2", Clusters: []string{"a"}}
	pmw := func(policy workv1alpha1.RolloutFailurePolicy, completed *workv1alpha1.RevisionReference, retry string) *workv1alpha1.PlacementManifestWork {
		p := &workv1alpha1.PlacementManifestWork{}
		p.Spec.FailurePolicy = policy
		p.Status.CompletedRevision = completed
		if retry != "" {
			p.Annotations = map[string]string{workv1alpha1.AnnotationRetryRevision: retry}
		}
		return p
	}
	many := []string{"c00", "c01", "c02", "c03", "c04", "c05", "c06", "c07", "c08", "c09", "c10", "c11"}
	type want struct {
		Failed                                       *workv1alpha1.FailedRevision
		Retried                                      int64
		Recorded, Retry, RollingBack, Hold, NoTarget bool
	}
	cases := map[string]struct {
		pmw  *workv1alpha1.PlacementManifestWork
		in   failureInput
		want want
	}{
		"Rollback records a breach and rolls back": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:   failureInput{current: v2, breached: true, failedClusters: []string{"a"}, canRollBack: true},
			want: want{Failed: failed2, Recorded: true, RollingBack: true},
		},
		"at most 10 failed clusters are listed": {
			pmw: pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:  failureInput{current: v2, breached: true, failedClusters: many, canRollBack: true},
			want: want{Failed: &workv1alpha1.FailedRevision{Revision: 2, Name: "web-v2", Clusters: many[:10], ClustersNotListed: 2},
				Recorded: true, RollingBack: true},
		},
		"keeps rolling back on later reconciles, breached or not": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:   failureInput{current: v2, record: failureRecord{failed: failed2}, canRollBack: true},
			want: want{Failed: failed2, RollingBack: true},
		},
		"Pause records nothing": {
			pmw: pmw(workv1alpha1.FailurePolicyPause, &v1, ""),
			in:  failureInput{current: v2, breached: true, failedClusters: []string{"a"}, canRollBack: true},
		},
		"the default policy is Pause": {
			pmw: pmw("", &v1, ""),
			in:  failureInput{current: v2, breached: true, failedClusters: []string{"a"}},
		},
		"the first rollout failed: nothing to return to": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, nil, ""),
			in:   failureInput{current: v1, breached: true, failedClusters: []string{"a"}},
			want: want{NoTarget: true},
		},
		"the spec moved to another template: the record is cleared": {
			pmw: pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:  failureInput{current: v3, record: failureRecord{failed: failed2}, canRollBack: true},
		},
		"the failed template came back under a new number: the record is cleared": {
			pmw: pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:  failureInput{current: workv1alpha1.RevisionReference{Revision: 4, Name: "web-v2"}, record: failureRecord{failed: failed2}, canRollBack: true},
		},
		"the policy changed to Pause: the record is cleared": {
			pmw: pmw(workv1alpha1.FailurePolicyPause, &v1, ""),
			in:  failureInput{current: v2, record: failureRecord{failed: failed2}, canRollBack: true},
		},
		"a retry of the failed revision's number is consumed": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, "2"),
			in:   failureInput{current: v2, breached: true, failedClusters: []string{"a"}, record: failureRecord{failed: failed2}, canRollBack: true},
			want: want{Retried: 2, Retry: true},
		},
		"a retry of another number does nothing": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, "1"),
			in:   failureInput{current: v2, record: failureRecord{failed: failed2}, canRollBack: true},
			want: want{Failed: failed2, RollingBack: true},
		},
		"a retry already consumed does nothing": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, "2"),
			in:   failureInput{current: v2, record: failureRecord{failed: failed2, retried: 2}, canRollBack: true},
			want: want{Failed: failed2, Retried: 2, RollingBack: true},
		},
		"after a retry, a new failure is recorded again": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, "2"),
			in:   failureInput{current: v2, breached: true, failedClusters: []string{"a"}, record: failureRecord{retried: 2}, canRollBack: true},
			want: want{Failed: failed2, Retried: 2, Recorded: true, RollingBack: true},
		},
		"the completed revision cannot be read: hold": {
			pmw:  pmw(workv1alpha1.FailurePolicyRollback, &v1, ""),
			in:   failureInput{current: v2, record: failureRecord{failed: failed2}},
			want: want{Failed: failed2, Hold: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := judgeFailure(tc.pmw, tc.in)
			got := want{Failed: s.failed, Retried: s.retried, Recorded: s.recorded, Retry: s.retry, RollingBack: s.rollingBack, Hold: s.hold, NoTarget: s.noTarget}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRolledBackDesiredState: the desired state of the completed revision, planned with the rollout strategy,
// brings the cluster that carries the failed revision back to exactly the completed revision's work, and writes
// no other cluster.
func TestRolledBackDesiredState(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	newPMW := func(v string) *workv1alpha1.PlacementManifestWork {
		p := framework.MakePMW("web", "ns").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj()
		p.UID = "uid"
		p.Spec.FailurePolicy = workv1alpha1.FailurePolicyRollback
		p.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
		return p
	}
	hashed := func(p *workv1alpha1.PlacementManifestWork, clusters ...string) map[string]*workv1.ManifestWork {
		out, _, b := plannedWorks(t, p, clusters...)
		for _, w := range out {
			w.Annotations[workv1alpha1.AnnotationTemplateHash] = b.TemplateHash()
			w.Generation = 1
		}
		return out
	}
	v1, v2 := newPMW("1"), newPMW("2")
	clusters := []string{"a", "b", "c"}
	completed := hashed(v1, clusters...)
	owned := map[string]*workv1.ManifestWork{"a": hashed(v2, "a")["a"], "b": completed["b"], "c": completed["c"]}
	framework.WorkConditions(owned["a"], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionFalse, workv1.WorkAvailable: metav1.ConditionFalse})
	for _, c := range []string{"b", "c"} {
		framework.WorkConditions(owned[c], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
	}

	// The spec stays v2; the copy carries v1's template-relevant fields, as the revision records them.
	rb := revision.WithTemplate(v2, &v1.Spec)
	if diff := cmp.Diff(v2.Spec.RolloutStrategy, rb.Spec.RolloutStrategy); diff != "" {
		t.Errorf("the rollout strategy is the spec's (-want +got):\n%s", diff)
	}
	manifests, err := planner.ParseTemplate(rb)
	if err != nil {
		t.Fatal(err)
	}
	decision := decisionOf(clusters...)
	obs := &observation{inputs: inputs{placementFound: true, placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
		decisions: []clusterv1beta1.PlacementDecision{decision}, clusters: clusters, owned: owned, template: manifests}}
	d, invalid, _, err := desiredState(rb, &obs.inputs, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatal(err, invalid)
	}
	obs.desired = d
	if got := d.current["a"].State; got != health.Degraded {
		t.Errorf("a is judged by what its work carries: got %s, want Degraded", got)
	}
	wp := planWrites(rb, obs, nil, now)
	var writes, upToDate []string
	for _, op := range wp.ops {
		writes = append(writes, op.cluster)
		if diff := cmp.Diff(completed[op.cluster].Spec, op.written(now).Spec); diff != "" {
			t.Errorf("%s does not get the completed revision's work back (-want +got):\n%s", op.cluster, diff)
		}
		if got := op.written(now).Annotations[workv1alpha1.AnnotationTemplateHash]; got != completed[op.cluster].Annotations[workv1alpha1.AnnotationTemplateHash] {
			t.Errorf("%s carries template hash %s, want the completed one", op.cluster, got)
		}
	}
	for c := range wp.upToDate {
		upToDate = append(upToDate, c)
	}
	sort.Strings(upToDate)
	if diff := cmp.Diff([]string{"a"}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c"}, upToDate); diff != "" {
		t.Errorf("clusters that carry the completed revision (-want +got):\n%s", diff)
	}
}

func TestRolledBackStatusAndEvents(t *testing.T) {
	healthy := health.ClusterResult{Verdict: health.Verdict{State: health.Healthy}}
	failed := &workv1alpha1.FailedRevision{Revision: 2, Name: "web-v2", Clusters: []string{"a"}}
	step := failureStep{evaluated: true, failed: failed, rollingBack: true, to: &workv1alpha1.RevisionReference{Revision: 1, Name: "web-v1"}}
	cur := map[string]health.ClusterResult{"a": healthy, "b": healthy}

	st, c := rolloutStatus("web", []string{"a", "b"}, &desired{upToDate: map[string]bool{"b": true}, current: cur, rollout: rolloutPlan{failure: step}}, cur, "revision 2")
	if c.Reason != workv1alpha1.ReasonRolledBack || c.Message != "Revision 2 failed on clusters a (more than maxFailures allows) and is being rolled back to revision 1, the last completed: 1 of 2 clusters carry it; it is not rolled out again until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it" {
		t.Errorf("rolling back: got %s %q", c.Reason, c.Message)
	}
	rolling := workv1alpha1.PlacementManifestWorkStatus{FailedRevision: failed, Rollout: st}
	meta.SetStatusCondition(&rolling.Conditions, c)

	st, c = rolloutStatus("web", []string{"a", "b"}, &desired{upToDate: map[string]bool{"a": true, "b": true}, current: cur, rollout: rolloutPlan{failure: step}}, cur, "revision 2")
	if c.Reason != workv1alpha1.ReasonRolledBack || c.Message != "Revision 2 failed on clusters a (more than maxFailures allows) and was rolled back to revision 1, the last completed, on every cluster; it is not rolled out again until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it" {
		t.Errorf("rolled back: got %s %q", c.Reason, c.Message)
	}
	done := workv1alpha1.PlacementManifestWorkStatus{FailedRevision: failed, Rollout: st}
	meta.SetStatusCondition(&done.Conditions, c)

	degraded := map[string]health.ClusterResult{"a": {Verdict: health.Verdict{State: health.Degraded}}}
	_, c = rolloutStatus("web", []string{"a"}, &desired{upToDate: map[string]bool{"a": true}, current: degraded,
		rollout: rolloutPlan{maxFailures: true, failure: failureStep{noTarget: true}}}, degraded, "revision 1")
	if c.Reason != workv1alpha1.ReasonRolloutMaxFailures || c.Message != "The rollout stopped: 1 of 1 updated clusters failed, more than maxFailures allows; 1 of 1 clusters carry the current template; failurePolicy Rollback had nothing to return to: no earlier revision completed" {
		t.Errorf("nothing to return to: got %s %q", c.Reason, c.Message)
	}

	reasons := func(old, updated *workv1alpha1.PlacementManifestWorkStatus) []string {
		var out []string
		for _, e := range rolloutEvents(old, updated) {
			out = append(out, e.Type+" "+e.Reason)
		}
		return out
	}
	none := &workv1alpha1.PlacementManifestWorkStatus{}
	cases := map[string]struct {
		old, updated *workv1alpha1.PlacementManifestWorkStatus
		want         []string
	}{
		"a failure is recorded":                   {old: none, updated: &rolling, want: []string{"Warning RolloutFailed"}},
		"still rolling back":                      {old: &rolling, updated: &rolling},
		"no cluster carries the failed one":       {old: &rolling, updated: &done, want: []string{"Normal RolledBack"}},
		"recorded and rolled back in one step":    {old: none, updated: &done, want: []string{"Warning RolloutFailed", "Normal RolledBack"}},
		"stays rolled back":                       {old: &done, updated: &done},
		"the record is cleared (spec or a retry)": {old: &done, updated: none},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, reasons(tc.old, tc.updated)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
