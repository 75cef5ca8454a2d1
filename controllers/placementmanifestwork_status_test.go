package controllers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/status"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

func TestReadiness(t *testing.T) {
	decided := []string{"c1", "c2"}
	cases := map[string]struct {
		obs                 observation
		summary             workv1alpha1.PlacedManifestWorkSummary
		rollout             *metav1.Condition
		ready, recon, stall metav1.ConditionStatus
		reason              string
		// message, when set, is part of Ready's message.
		message string
	}{
		"all available": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 2},
			ready: metav1.ConditionTrue, recon: metav1.ConditionFalse, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonAllClustersAvailable,
		},
		"progressing": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 1, Progressing: 1},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonClustersProgressing,
		},
		"degraded": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 1, Degraded: 1},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonClustersDegraded,
		},
		"no clusters decided: nothing to deliver is done": {
			obs:   observation{inputs: inputs{placementFound: true}},
			ready: metav1.ConditionTrue, recon: metav1.ConditionFalse, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionEmpty,
		},
		"no clusters decided, works kept for the move timeout": {
			obs:   observation{inputs: inputs{placementFound: true}, desired: desired{leaving: 2}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionEmpty,
		},
		"no clusters decided, the works of clusters that are away kept while they are": {
			obs: observation{inputs: inputs{placementFound: true, placementName: "p", unavailable: map[string]string{"c1": "Unknown"},
				owned: map[string]*workv1.ManifestWork{"c1": {}, "c2": {}}}, desired: desired{leaving: 2}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementDecisionEmpty,
			message: "the works of 2 clusters are kept: 1 while their ManagedCluster is not available",
		},
		"placement not decided yet: waiting, not stalled": {
			obs:   observation{inputs: inputs{placementFound: true, undecided: "not yet"}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonPlacementNotDecided,
		},
		"write errors": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}, outcome: outcome{writeErrors: []error{errors.New("boom")}}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 2},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonWriteFailed,
		},
		"invalid template stalls": {
			obs:   observation{inputs: inputs{placementFound: true, clusters: decided, invalid: &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: "bad"}}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionFalse, stall: metav1.ConditionTrue, reason: workv1alpha1.ReasonInvalidTemplate,
		},
		"missing placement stalls": {
			obs:   observation{inputs: inputs{placementName: "p"}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionFalse, stall: metav1.ConditionTrue, reason: workv1alpha1.ReasonPlacementNotFound,
		},
		"a foreign work blocks its cluster only: not stalled": {
			obs:   observation{inputs: inputs{placementFound: true, clusters: decided}, outcome: outcome{conflicts: []string{"c2"}}},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonManifestWorkConflict,
		},
		"an invalid rollout strategy stalls": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, rollout: &metav1.Condition{Reason: workv1alpha1.ReasonInvalidRolloutStrategy},
			ready: metav1.ConditionFalse, recon: metav1.ConditionFalse, stall: metav1.ConditionTrue, reason: workv1alpha1.ReasonInvalidRolloutStrategy,
		},
		"a rollout stopped by maxFailures stalls": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, rollout: &metav1.Condition{Reason: workv1alpha1.ReasonRolloutMaxFailures},
			ready: metav1.ConditionFalse, recon: metav1.ConditionFalse, stall: metav1.ConditionTrue, reason: workv1alpha1.ReasonRolloutMaxFailures,
		},
		// A cluster completes a run only when it is healthy, so a completed run (Completed=True) is Ready; a
		// failed Job degrades its cluster, so a failed run is not.
		"a completed run is Ready": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2},
			ready: metav1.ConditionTrue, recon: metav1.ConditionFalse, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonAllClustersAvailable,
		},
		"a failed run is not Ready": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 1, Degraded: 1},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonClustersDegraded,
		},
		"a progressing rollout is reconciling": {
			obs: observation{inputs: inputs{placementFound: true, clusters: decided}}, rollout: &metav1.Condition{Reason: workv1alpha1.ReasonRolloutProgressing},
			ready: metav1.ConditionFalse, recon: metav1.ConditionTrue, stall: metav1.ConditionFalse, reason: workv1alpha1.ReasonRolloutProgressing,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ready, recon, stall := readiness(&tc.obs, tc.summary, tc.rollout)
			got := []metav1.ConditionStatus{ready.Status, recon.Status, stall.Status}
			if diff := cmp.Diff([]metav1.ConditionStatus{tc.ready, tc.recon, tc.stall}, got); diff != "" {
				t.Errorf("Ready, Reconciling, Stalled (-want +got):\n%s", diff)
			}
			if ready.Reason != tc.reason {
				t.Errorf("Ready reason = %s, want %s", ready.Reason, tc.reason)
			}
			if !strings.Contains(ready.Message, tc.message) {
				t.Errorf("Ready message = %q, want it to say %q", ready.Message, tc.message)
			}
		})
	}
}

// TestAppliedCondition: ManifestworkApplied is True only when every decided cluster applied the current template;
// a rolled-back revision is never reported applied, even once every cluster applied the completed one.
func TestAppliedCondition(t *testing.T) {
	in := &inputs{placementName: "p", placementFound: true, clusters: []string{"a", "b"}, workName: "w"}
	failed := &workv1alpha1.FailedRevision{Revision: 2, Name: "web-v2", Clusters: []string{"a"}}
	completed := &workv1alpha1.RevisionReference{Revision: 1, Name: "web-v1"}
	rollingBack := failureStep{evaluated: true, failed: failed, rollingBack: true, to: completed}
	held := failureStep{evaluated: true, failed: failed, hold: true, to: completed}
	applied := func(n int32) workv1alpha1.PlacedManifestWorkSummary {
		return workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: n, Available: n}
	}
	type want struct {
		status          metav1.ConditionStatus
		reason, message string
	}
	cases := map[string]struct {
		out     outcome
		failure failureStep
		summary workv1alpha1.PlacedManifestWorkSummary
		want    want
	}{
		"every cluster applied the current template": {
			summary: applied(2),
			want:    want{metav1.ConditionTrue, workv1alpha1.ReasonAsExpected, "All 2 clusters applied the current ManifestWork"},
		},
		"being rolled back: the clusters back on the completed revision are not the current template": {
			failure: rollingBack, summary: applied(1),
			want: want{metav1.ConditionFalse, workv1alpha1.ReasonRolledBack,
				"Revision 2 failed and is rolled back: 1 of 2 clusters applied revision 1, the last completed, not the current template; no cluster gets revision 2 until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it"},
		},
		"rolled back on every cluster: still not applied": {
			failure: rollingBack, summary: applied(2),
			want: want{metav1.ConditionFalse, workv1alpha1.ReasonRolledBack,
				"Revision 2 failed and is rolled back: 2 of 2 clusters applied revision 1, the last completed, not the current template; no cluster gets revision 2 until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it"},
		},
		"being rolled back with a refused write: the write is said first": {
			out: outcome{writeErrors: []error{errors.New("quota")}, failedClusters: []string{"a"}}, failure: rollingBack, summary: applied(2),
			want: want{metav1.ConditionFalse, workv1alpha1.ReasonWriteFailed, "1 ManifestWork writes failed and will be retried, for clusters a; first error: quota"},
		},
		// Held (the completed revision cannot be delivered), the plan stays the current template's: a cluster
		// counts as applied only when it carries the current (failed) revision, so True is still the truth.
		"a failed revision held where every cluster carries it": {
			failure: held, summary: applied(2),
			want: want{metav1.ConditionTrue, workv1alpha1.ReasonAsExpected, "All 2 clusters applied the current ManifestWork"},
		},
		"a failed revision held where a cluster carries the completed one": {
			failure: held, summary: applied(1),
			want: want{metav1.ConditionFalse, workv1alpha1.ReasonWaitingForApply, "1 of 2 clusters applied the current ManifestWork"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := appliedCondition(in, &tc.out, tc.failure, nil, tc.summary)
			if diff := cmp.Diff(tc.want, want{c.Status, c.Reason, c.Message}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("ManifestworkApplied (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	cond := func(t, reason string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: reason}
	}
	status := func(degraded int32, conds ...metav1.Condition) *workv1alpha1.PlacementManifestWorkStatus {
		st := &workv1alpha1.PlacementManifestWorkStatus{PlacedManifestWorkSummary: workv1alpha1.PlacedManifestWorkSummary{Total: 3, Degraded: degraded}}
		for _, c := range conds {
			meta.SetStatusCondition(&st.Conditions, c)
		}
		return st
	}
	conflict := cond(workv1alpha1.ConditionManifestworkApplied, workv1alpha1.ReasonManifestWorkConflict, metav1.ConditionFalse)
	ready := cond(workv1alpha1.ConditionReady, workv1alpha1.ReasonAllClustersAvailable, metav1.ConditionTrue)
	running := cond(workv1alpha1.ConditionCompleted, workv1alpha1.ReasonRunning, metav1.ConditionFalse)
	progressingRollout := cond(workv1alpha1.ConditionRolloutComplete, workv1alpha1.ReasonRolloutProgressing, metav1.ConditionFalse)
	pausedRollout := cond(workv1alpha1.ConditionRolloutComplete, workv1alpha1.ReasonRolloutPaused, metav1.ConditionFalse)
	awaiting := cond(workv1alpha1.ConditionRolloutComplete, workv1alpha1.ReasonRolloutAwaitingApproval, metav1.ConditionFalse)
	started1, started2 := metav1.Unix(1000, 0), metav1.Unix(2000, 0)
	// revisions is a status whose current revision is current (named "r<n>"), completed completed, and whose
	// rollout started at startedAt.
	revisions := func(approvals []workv1alpha1.RolloutApproval, current, completed int64, startedAt *metav1.Time) *workv1alpha1.PlacementManifestWorkStatus {
		st := status(0)
		st.Approvals = approvals
		st.CurrentRevision = &workv1alpha1.RevisionReference{Revision: current, Name: fmt.Sprintf("r%d", current)}
		st.CompletedRevision = &workv1alpha1.RevisionReference{Revision: completed, Name: fmt.Sprintf("r%d", completed)}
		st.Rollout = &workv1alpha1.RolloutStatus{Total: 3, StartedAt: startedAt}
		return st
	}
	cases := map[string]struct {
		old, updated *workv1alpha1.PlacementManifestWorkStatus
		want         []string
	}{
		"nothing changed":  {old: status(0), updated: status(0)},
		"enters a failure": {old: status(0), updated: status(0, conflict), want: []string{workv1alpha1.ReasonManifestWorkConflict}},
		"a spec it cannot decode": {old: status(0), updated: status(0, cond(workv1alpha1.ConditionManifestworkApplied, workv1alpha1.ReasonInvalidSpec, metav1.ConditionFalse)),
			want: []string{workv1alpha1.ReasonInvalidSpec}},
		"a dependency is missing": {old: status(0), updated: status(0, cond(workv1alpha1.ConditionDistributed, workv1alpha1.ReasonDependencyNotFound, metav1.ConditionFalse)),
			want: []string{workv1alpha1.ReasonDependencyNotFound}},
		"a webhook does not roll the status up": {old: status(0, cond(workv1alpha1.ConditionStatusAggregated, workv1alpha1.ReasonStatusAggregated, metav1.ConditionTrue)),
			updated: status(0, cond(workv1alpha1.ConditionStatusAggregated, workv1alpha1.ReasonInterpreterFailed, metav1.ConditionFalse)),
			want:    []string{workv1alpha1.ReasonInterpreterFailed}},
		"stays in a failure":    {old: status(0, conflict), updated: status(0, conflict)},
		"becomes degraded":      {old: status(0), updated: status(2), want: []string{EventDegraded}},
		"stays degraded":        {old: status(1), updated: status(2)},
		"recovers and is ready": {old: status(1), updated: status(0, ready), want: []string{EventRecovered, EventReady}},
		"a run completes": {old: status(0, running), updated: status(0, cond(workv1alpha1.ConditionCompleted, workv1alpha1.ReasonAllClustersCompleted, metav1.ConditionTrue)),
			want: []string{workv1alpha1.EventReasonCompleted}},
		"a run fails somewhere": {old: status(0, running), updated: status(1, cond(workv1alpha1.ConditionCompleted, workv1alpha1.ReasonClustersFailed, metav1.ConditionFalse)),
			want: []string{EventDegraded, workv1alpha1.EventReasonRunFailed}},
		"a run keeps running":      {old: status(0, running), updated: status(0, running)},
		"the rollout is paused":    {old: status(0, progressingRollout), updated: status(0, pausedRollout), want: []string{workv1alpha1.EventReasonRolloutPaused}},
		"the rollout stays paused": {old: status(0, pausedRollout), updated: status(0, pausedRollout)},
		"a revision starts":        {old: revisions(nil, 1, 0, nil), updated: revisions(nil, 2, 1, &started1), want: []string{workv1alpha1.EventReasonRolloutStarted}},
		"a revision rolls on":      {old: revisions(nil, 2, 1, &started1), updated: revisions(nil, 2, 1, &started1)},
		"a revision completes":     {old: revisions(nil, 2, 1, &started1), updated: revisions(nil, 2, 2, nil), want: []string{workv1alpha1.EventReasonRolloutCompleted}},
		"another revision replaces a started one": {old: revisions(nil, 2, 1, &started1), updated: revisions(nil, 3, 1, &started2),
			want: []string{workv1alpha1.EventReasonRolloutStarted}},
		"the rollout reaches a gate": {old: status(0, progressingRollout), updated: status(0, awaiting), want: []string{workv1alpha1.EventReasonRolloutAwaitingApproval}},
		"a gate is approved": {old: revisions(nil, 2, 1, &started1), updated: revisions([]workv1alpha1.RolloutApproval{{Revision: 2, Gate: "canary"}}, 2, 1, &started1),
			want: []string{workv1alpha1.EventReasonRolloutApproved}},
		"an approval stays recorded": {old: revisions([]workv1alpha1.RolloutApproval{{Revision: 2, Gate: "canary"}}, 2, 1, &started1),
			updated: revisions([]workv1alpha1.RolloutApproval{{Revision: 2, Gate: "canary"}}, 2, 1, &started1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range Events(tc.old, tc.updated) {
				got = append(got, e.Reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// withShares gives health each split manifest's share, whatever field is split, and the replicas it asks for
// only when .spec.replicas is: a Job split on parallelism with a share of 0 is asked for nothing.
func TestWithShares(t *testing.T) {
	p := framework.MakePMW("x", "ns").Manifest(framework.Deployment("web", "default", 4)).Manifest(framework.Job("batch", "default", 2)).Obj()
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	base := health.Inputs(manifests, nil)
	got := withShares(base, map[string]int32{
		planner.SplitKey(manifests[0], ".spec.replicas"):    3,
		planner.SplitKey(manifests[1], ".spec.parallelism"): 0,
	})
	if s, r := got[0].Share, got[0].Replicas; s == nil || *s != 3 || r == nil || *r != 3 {
		t.Errorf("Deployment: share %v, replicas %v, want 3 and 3", s, r)
	}
	if s, r := got[1].Share, got[1].Replicas; s == nil || *s != 0 || r != nil {
		t.Errorf("Job: share %v, replicas %v, want 0 and unset", s, r)
	}
	if base[0].Share != nil || base[1].Share != nil {
		t.Error("withShares modified the base inputs")
	}
}

// TestPrimaryShare: a manifest split in several fields is judged by one of them, chosen without regard to map
// order: the interpreter's first field, else .spec.replicas, else the first by name.
func TestPrimaryShare(t *testing.T) {
	job := health.Builtin(schema.GroupKind{Group: "batch", Kind: "Job"})
	cases := map[string]struct {
		fields map[string]int32
		kind   health.Interpreter
		want   string
	}{
		"none":                          {want: ""},
		"the only one":                  {fields: map[string]int32{".spec.workers": 2}, want: ".spec.workers"},
		"the interpreter's first field": {fields: map[string]int32{".spec.replicas": 1, ".spec.parallelism": 2}, kind: job, want: ".spec.parallelism"},
		"else .spec.replicas":           {fields: map[string]int32{".spec.head": 1, ".spec.replicas": 2}, want: ".spec.replicas"},
		"else the first by name":        {fields: map[string]int32{".spec.workers": 1, ".spec.head": 2}, want: ".spec.head"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, v, ok := primaryShare(tc.fields, tc.kind)
			if got != tc.want || ok != (tc.want != "") || (ok && v != tc.fields[tc.want]) {
				t.Errorf("primaryShare = %q, %d, %v; want %q", got, v, ok, tc.want)
			}
		})
	}
}

// TestWithOverrides: a cluster an override selects is judged against the manifest as the override delivers
// it (a Deployment whose replicas it raises asks for those); another cluster, or a manifest the override fails
// on, against the template's.
func TestWithOverrides(t *testing.T) {
	p := framework.MakePMW("x", "ns").Manifest(framework.Deployment("web", "default", 3)).Obj()
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	set, err := override.Compile([]workv1alpha1.ClusterOverride{{
		Name:     "bigger",
		Clusters: &workv1alpha1.OverrideClusters{Names: []string{"c1"}},
		Patches:  []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/replicas", Value: &workv1alpha1.JSON{Raw: []byte("5")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	in := &inputs{overrides: set}
	base := health.Inputs(manifests, nil)
	ready := &workv1.ManifestCondition{Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue}}}
	for _, name := range []string{health.Generation, health.ObservedGeneration, health.Replicas, health.ReadyReplicas, health.AvailableReplicas, health.UpdatedReplicas} {
		n := int64(3)
		if name == health.Generation || name == health.ObservedGeneration {
			n = 1
		}
		ready.StatusFeedbacks.Values = append(ready.StatusFeedbacks.Values, workv1.FeedbackValue{Name: health.FeedbackPrefix + name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: &n}})
	}
	cases := map[string]struct {
		cluster string
		want    health.State
	}{
		"the override asks for 5, 3 run": {cluster: "c1", want: health.Progressing},
		"no override: 3 of 3 run":        {cluster: "c2", want: health.Healthy},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := overridden(base, resolvedOverrides(in, tc.cluster, nil))
			got[0].Status = ready
			if v := health.Manifest(got[0]); v.State != tc.want {
				t.Errorf("verdict %+v, want %s", v, tc.want)
			}
			if base[0].Manifest.Object.Object["spec"].(map[string]any)["replicas"] != int64(3) {
				t.Error("overridden changed the template's manifest")
			}
		})
	}
}

// TestAggregatedCondition: StatusAggregated is set only when a manifest's webhook rolls its status up under
// Fail; a failure names the manifests, the kind of failure and the error. While the same manifests fail for
// the same reason its message stays as first written, although the webhook's own words in the error may differ
// from call to call, so a webhook that keeps failing costs no status write; another manifest or reason is a new
// message.
func TestAggregatedCondition(t *testing.T) {
	callErr := func(reason interpreterwebhook.ErrorReason, detail string) error {
		return fmt.Errorf("ResourceInterpreter databases: webhook AggregateStatus: %w",
			&interpreterwebhook.Error{URL: "https://db.webhooks.svc:443/", Operation: workv1alpha1.OperationAggregateStatus, Reason: reason, Detail: detail})
	}
	// The client's own words are the same call after call (interpreterwebhook's TestCallFailsAlikeTwice); the
	// webhook's are quoted as they are, and may tell the time.
	refused := func(at string) error {
		return callErr(interpreterwebhook.ReasonRejected, fmt.Sprintf("answered unsuccessful: the roll-up store is down (%s)", at))
	}
	orders, users := "Database.example.io shop/orders", "Database.example.io shop/users"
	failing := func(err error, manifests ...string) status.Rollup {
		r := status.Rollup{WebhookAggregations: 2}
		for _, m := range manifests {
			r.AggregationFailures = append(r.AggregationFailures, status.AggregationFailure{Manifest: m, Err: err})
		}
		return r
	}
	first, _ := aggregatedCondition(failing(refused("10:00:00"), orders), nil)
	// Five manifests whose names (240 bytes each) alone exceed the message bound of 1024 bytes.
	long := make([]string, 5)
	for i := range long {
		long[i] = fmt.Sprintf("Database.example.io shop/%s-%d", strings.Repeat("x", 240), i)
	}
	longFirst, _ := aggregatedCondition(failing(refused("10:00:00"), long...), nil)
	cases := map[string]struct {
		rollup  status.Rollup
		last    *metav1.Condition
		absent  bool
		status  metav1.ConditionStatus
		reason  string
		message string // the whole message, or a part of it when partial
		partial bool
	}{
		"no webhook rolls a status up under Fail": {rollup: status.Rollup{}, absent: true},
		"every webhook answered": {rollup: status.Rollup{WebhookAggregations: 2}, status: metav1.ConditionTrue, reason: workv1alpha1.ReasonStatusAggregated,
			message: "The interpreter webhooks rolled the status of 2 manifests up"},
		"a webhook failed": {rollup: failing(refused("10:00:00"), orders), status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed,
			message: `The interpreter webhook did not roll the status up (AggregateStatus) for Database.example.io shop/orders (WebhookRejected): its status.manifests[].aggregated stays as last written (absent when none was), and the webhook is asked again every 30s. Error: ResourceInterpreter databases: webhook AggregateStatus: interpreter webhook https://db.webhooks.svc:443/ (AggregateStatus) answered unsuccessful: the roll-up store is down (10:00:00)`},
		"it fails again, the webhook telling another time: the message stays": {rollup: failing(refused("10:00:30"), orders), last: &first,
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed, message: first.Message},
		"it fails for another reason": {rollup: failing(callErr(interpreterwebhook.ReasonTimeout, "timed out after 10s"), orders), last: &first,
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed, message: "(WebhookTimeout): its status.manifests[].aggregated", partial: true},
		"another manifest fails too": {rollup: failing(refused("10:00:30"), orders, users), last: &first,
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed, message: `for Database.example.io shop/orders, Database.example.io shop/users (WebhookRejected): their status.manifests[].aggregated`, partial: true},
		"long names: fewer are named, and the kind of failure, the retry and the error's start are kept": {rollup: failing(refused("10:00:00"), long...),
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed,
			message: long[1] + " and 3 more (WebhookRejected): their status.manifests[].aggregated stays as last written (absent when none was), and the webhook is asked again every 30s. Error: ResourceInterpreter databases: webhook AggregateStatus:", partial: true},
		"long names fail again, the webhook telling another time: the message stays": {rollup: failing(refused("10:00:30"), long...), last: &longFirst,
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed, message: longFirst.Message},
		"an error of no call (no webhook client) is told as it is": {rollup: failing(errors.New("ResourceInterpreter databases: webhook AggregateStatus: the manager has no webhook client"), orders),
			status: metav1.ConditionFalse, reason: workv1alpha1.ReasonInterpreterFailed, message: "for Database.example.io shop/orders: its", partial: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, ok := aggregatedCondition(tc.rollup, tc.last)
			if ok == tc.absent {
				t.Fatalf("set = %v, want %v", ok, !tc.absent)
			}
			if tc.absent {
				return
			}
			if c.Type != workv1alpha1.ConditionStatusAggregated || c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("condition = %s %s %s, want %s %s %s", c.Type, c.Status, c.Reason, workv1alpha1.ConditionStatusAggregated, tc.status, tc.reason)
			}
			if tc.partial && !strings.Contains(c.Message, tc.message) || !tc.partial && c.Message != tc.message {
				t.Errorf("message = %q, want %q", c.Message, tc.message)
			}
			if tc.partial && c.Message == first.Message {
				t.Error("the message of another failure is the first one's")
			}
			if len(c.Message) > 1024 {
				t.Errorf("message of %d bytes, more than the 1024 an event's note may have", len(c.Message))
			}
		})
	}
}
