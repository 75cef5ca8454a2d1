package controllers

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// backup is a manifest of a kind the manager does not know; a ResourceInterpreter may say it finishes.
func backup(name string) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Backup", "metadata": map[string]any{"name": name, "namespace": "default"}}
}

// Verdicts of one manifest on one cluster.
var (
	vCompleted   = health.ManifestResult{Verdict: health.Verdict{State: health.Healthy, Finished: true}}
	vFailed      = health.ManifestResult{Verdict: health.Verdict{State: health.Degraded, Reason: health.ReasonJobFailed, Finished: true}}
	vRunning     = health.ManifestResult{Verdict: health.Verdict{State: health.Progressing, Reason: health.ReasonJobRunning}}
	vHealthy     = health.ManifestResult{Verdict: health.Verdict{State: health.Healthy}}
	vProgressing = health.ManifestResult{Verdict: health.Verdict{State: health.Progressing}}
)

// clusterOf is a cluster's result with the given manifest verdicts, its own state the worst of them (as
// health.Cluster decides it for an applied and available work).
func clusterOf(ms ...health.ManifestResult) health.ClusterResult {
	r := health.ClusterResult{Verdict: health.Verdict{State: health.Healthy}, Applied: true, Manifests: ms}
	for _, m := range ms {
		switch {
		case m.State == health.Degraded:
			r.Verdict = health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonManifestDegraded}
		case m.State == health.Progressing && r.State == health.Healthy:
			r.Verdict = health.Verdict{State: health.Progressing, Reason: workv1alpha1.ReasonManifestProgressing}
		}
	}
	return r
}

// TestJudgeRun covers the rule that says a cluster finished: never while a workload still runs.
func TestJudgeRun(t *testing.T) {
	inputs := func(objs ...map[string]any) []health.ManifestInput {
		w := framework.MakePMW("x", "ns")
		for _, o := range objs {
			w.Manifest(o)
		}
		manifests, err := planner.ParseTemplate(w.Obj())
		if err != nil {
			t.Fatal(err)
		}
		return health.Inputs(manifests, nil)
	}
	job := inputs(framework.Job("crunch", "default", 2), framework.ConfigMap("cfg", "default", nil))
	deployment := inputs(framework.Deployment("web", "default", 2), framework.ConfigMap("cfg", "default", nil))
	backups := inputs(backup("daily"), framework.ConfigMap("cfg", "default", nil))
	two := inputs(backup("daily"), backup("weekly"))
	zero := int64(0)
	idle := inputs(framework.Job("crunch", "default", 2), framework.ConfigMap("cfg", "default", nil))
	idle[0].Share = &zero
	unavailable := clusterOf(vCompleted, vHealthy)
	unavailable.Verdict = health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonClusterUnavailable}
	notAvailable := clusterOf(vCompleted, vHealthy)
	notAvailable.Verdict = health.Verdict{State: health.Progressing, Reason: workv1alpha1.ReasonWorkNotAvailable}

	type want struct {
		finishing, finished bool
		completed, failed   []string
	}
	cases := map[string]struct {
		base    []health.ManifestInput
		results map[string]health.ClusterResult
		// perCluster are the manifests as delivered to a cluster, when not base.
		perCluster map[string][]health.ManifestInput
		clusters   []string
		strays     bool
		want       want
	}{
		"a Job completed on both clusters; the ConfigMap beside it holds nothing back": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vCompleted, vHealthy)},
			want: want{finishing: true, finished: true, completed: []string{"a", "b"}},
		},
		"failed on one: every cluster finished": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vFailed, vHealthy)},
			want: want{finishing: true, finished: true, completed: []string{"a"}, failed: []string{"b"}},
		},
		"still running on one": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vRunning, vHealthy)},
			want: want{finishing: true, completed: []string{"a"}},
		},
		"a cluster without a work carrying the current template runs": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy)},
			want: want{finishing: true, completed: []string{"a"}},
		},
		"not reported for the work's current generation": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": {Verdict: health.Verdict{State: health.Progressing, Reason: workv1alpha1.ReasonWorkNotApplied}}},
			want: want{finishing: true, completed: []string{"a"}},
		},
		"a cluster with a split share of 0 has nothing to run": {
			base: job, perCluster: map[string][]health.ManifestInput{"b": idle},
			results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vHealthy, vHealthy)},
			want:    want{finishing: true, finished: true, completed: []string{"a", "b"}},
		},
		"a completed Job beside a progressing manifest has not completed": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vProgressing), "b": clusterOf(vCompleted, vHealthy)},
			want: want{finishing: true, completed: []string{"b"}},
		},
		"an unavailable cluster's last report does not count": {
			base: job, results: map[string]health.ClusterResult{"a": unavailable, "b": clusterOf(vCompleted, vHealthy)},
			want: want{finishing: true, completed: []string{"b"}},
		},
		"completed, but the work is not yet available": {
			base: job, results: map[string]health.ClusterResult{"a": notAvailable, "b": clusterOf(vCompleted, vHealthy)},
			want: want{finishing: true, completed: []string{"b"}},
		},
		"a kind that finished on one cluster finishes everywhere: the other still runs": {
			base: backups, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vHealthy, vHealthy)},
			want: want{finishing: true, completed: []string{"a"}},
		},
		"a kind that finished nowhere holds completion back while it progresses": {
			base: two, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vProgressing), "b": clusterOf(vCompleted, vProgressing)},
			want: want{finishing: true},
		},
		"no manifest finishes: no completion at all": {
			base: deployment, results: map[string]health.ClusterResult{"a": clusterOf(vHealthy, vHealthy), "b": clusterOf(vHealthy, vHealthy)},
			want: want{},
		},
		"the work of a cluster that left is still there": {
			base: job, results: map[string]health.ClusterResult{"a": clusterOf(vCompleted, vHealthy), "b": clusterOf(vCompleted, vHealthy)},
			strays: true,
			want:   want{finishing: true, completed: []string{"a", "b"}},
		},
		"no cluster decided is not finished": {
			base: job, clusters: []string{},
			want: want{finishing: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clusters := tc.clusters
			if clusters == nil {
				clusters = []string{"a", "b"}
			}
			r := judgeRun(clusters, tc.base, tc.strays, func(c string) (health.ClusterResult, []health.ManifestInput, bool) {
				res, ok := tc.results[c]
				if m, ok := tc.perCluster[c]; ok {
					return res, m, true
				}
				return res, tc.base, ok
			})
			got := want{finishing: r.finishing, finished: r.finished, completed: r.completed, failed: r.failed}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanCompletion covers the TTL decision, from the status alone where a restart needs it.
func TestPlanCompletion(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	pmw := func(ttl *int32, c *workv1alpha1.CompletionStatus) *workv1alpha1.PlacementManifestWork {
		p := framework.MakePMW("x", "ns").Manifest(framework.Job("crunch", "default", 2)).Obj()
		p.Generation = 3
		p.Spec.TTLSecondsAfterFinished, p.Status.Completion = ttl, c
		return p
	}
	finished := run{finishing: true, finished: true, total: 2, completed: []string{"a", "b"}}
	running := run{finishing: true, total: 2, completed: []string{"a"}}
	cases := map[string]struct {
		pmw  *workv1alpha1.PlacementManifestWork
		run  run
		want completionPlan
	}{
		"without a TTL the works stay": {
			pmw: pmw(nil, &workv1alpha1.CompletionStatus{ObservedGeneration: 3, FinishedTime: at(-time.Hour)}), run: finished,
			want: completionPlan{evaluated: true, now: now},
		},
		"just finished: the TTL counts from now": {
			pmw: pmw(ptr.To[int32](60), nil), run: finished,
			want: completionPlan{evaluated: true, now: now, recheck: time.Minute},
		},
		"finished 20s ago, as the status says after a restart": {
			pmw: pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, FinishedTime: at(-20 * time.Second)}), run: finished,
			want: completionPlan{evaluated: true, now: now, recheck: 40 * time.Second},
		},
		"the TTL has passed: the removal is due and is carried out soon": {
			pmw: pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, FinishedTime: at(-time.Minute)}), run: finished,
			want: completionPlan{evaluated: true, now: now, removeDue: true, recheck: removalRecheck},
		},
		"a TTL of 0 is due as soon as the run finished": {
			pmw: pmw(ptr.To[int32](0), nil), run: finished,
			want: completionPlan{evaluated: true, now: now, removeDue: true, recheck: removalRecheck},
		},
		"a run that is not finished keeps its works, whatever an old finishedTime says": {
			pmw: pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, FinishedTime: at(-time.Hour)}), run: running,
			want: completionPlan{evaluated: true, now: now},
		},
		"a finishedTime of an earlier generation does not count": {
			pmw: pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 2, FinishedTime: at(-time.Hour)}), run: finished,
			want: completionPlan{evaluated: true, now: now, recheck: time.Minute},
		},
		"removed, as the status says after a restart, while the works are gone": {
			pmw:  pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, FinishedTime: at(-2 * time.Minute), WorksRemovedTime: at(-time.Minute)}),
			run:  running,
			want: completionPlan{evaluated: true, now: now, removed: true},
		},
		"removed for an earlier generation: the new spec runs again": {
			pmw:  pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 2, FinishedTime: at(-2 * time.Minute), WorksRemovedTime: at(-time.Minute)}),
			run:  running,
			want: completionPlan{evaluated: true, now: now},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := planCompletion(tc.pmw, tc.run, now)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(completionPlan{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompletionStatus covers status.completion and the Completed condition.
func TestCompletionStatus(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	earlier := &metav1.Time{Time: now.Add(-time.Minute)}
	pmw := func(ttl *int32, c *workv1alpha1.CompletionStatus) *workv1alpha1.PlacementManifestWork {
		p := framework.MakePMW("x", "ns").Manifest(framework.Job("crunch", "default", 2)).Obj()
		p.Generation = 3
		p.Spec.TTLSecondsAfterFinished, p.Status.Completion = ttl, c
		return p
	}
	type want struct {
		completion *workv1alpha1.CompletionStatus
		status     metav1.ConditionStatus
		reason     string
	}
	cases := map[string]struct {
		pmw  *workv1alpha1.PlacementManifestWork
		run  run
		plan completionPlan
		want want
	}{
		"no manifest finishes": {pmw: pmw(nil, nil), run: run{total: 2}},
		"running": {
			pmw: pmw(nil, nil), run: run{finishing: true, total: 2, completed: []string{"a"}},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 1}, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonRunning},
		},
		"completed everywhere: finished now": {
			pmw: pmw(nil, nil), run: run{finishing: true, finished: true, total: 2, completed: []string{"a", "b"}},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: &metav1.Time{Time: now}},
				status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAllClustersCompleted},
		},
		"finished earlier: the time is kept": {
			pmw: pmw(nil, &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: earlier}),
			run: run{finishing: true, finished: true, total: 2, completed: []string{"a"}, failed: []string{"b"}},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 1, Failed: 1, FinishedTime: earlier},
				status: metav1.ConditionFalse, reason: workv1alpha1.ReasonClustersFailed},
		},
		"finished in an earlier generation: this one finished now": {
			pmw: pmw(nil, &workv1alpha1.CompletionStatus{ObservedGeneration: 2, Completed: 2, FinishedTime: earlier}),
			run: run{finishing: true, finished: true, total: 2, completed: []string{"a", "b"}},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: &metav1.Time{Time: now}},
				status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAllClustersCompleted},
		},
		"the removal is due: it is recorded": {
			pmw:  pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: earlier}),
			run:  run{finishing: true, finished: true, total: 2, completed: []string{"a", "b"}},
			plan: completionPlan{removeDue: true},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: earlier, WorksRemovedTime: &metav1.Time{Time: now}},
				status: metav1.ConditionTrue, reason: workv1alpha1.ReasonAllClustersCompleted},
		},
		"the removal was due, but a write made a cluster run again: nothing is recorded": {
			pmw:  pmw(ptr.To[int32](60), &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 2, FinishedTime: earlier}),
			run:  run{finishing: true, total: 2, completed: []string{"a"}},
			plan: completionPlan{removeDue: true},
			want: want{completion: &workv1alpha1.CompletionStatus{ObservedGeneration: 3, Completed: 1}, status: metav1.ConditionFalse, reason: workv1alpha1.ReasonRunning},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.plan.evaluated, tc.plan.now = true, now.Add(300*time.Millisecond)
			completion, cond := completionStatus(tc.pmw, tc.run, tc.plan)
			got := want{completion: completion}
			if cond != nil {
				got.status, got.reason = cond.Status, cond.Reason
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// jobWorks are the works of a PMW with a Job, for the given clusters, as the manager writes them, reported by
// their agents with the given Job feedback (none when nil).
func jobWorks(t *testing.T, p *workv1alpha1.PlacementManifestWork, feedback map[string]map[string]any) (map[string]*workv1.ManifestWork, *planner.Plan, *manifestwork.Builder) {
	t.Helper()
	clusters := make([]string, 0, len(feedback))
	for c := range feedback {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	out, plan, b := plannedWorks(t, p, clusters...)
	for _, c := range clusters {
		w := out[c]
		w.Generation = 1
		if values := feedback[c]; values != nil {
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
			prefixed := map[string]any{}
			for k, v := range values {
				prefixed[health.FeedbackPrefix+k] = v
			}
			framework.Feedback(w, 0, prefixed)
		}
	}
	return out, plan, b
}

// TestCompletionPlanWritesAndStatus runs a split Job through planWrites and computeStatus: the removal after
// the TTL is recorded first and carried out by the next reconcile, and the status keeps the result.
func TestCompletionPlanWritesAndStatus(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	complete := map[string]any{health.Succeeded: 1, health.Complete: "True"}
	newPMW := func(c *workv1alpha1.CompletionStatus) *workv1alpha1.PlacementManifestWork {
		p := framework.MakePMW("crunch", "ns").Manifest(framework.Job("crunch", "default", 2)).Manifest(framework.ConfigMap("cfg", "default", nil)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "crunch", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		p.UID, p.Generation = "uid", 1
		p.Spec.TTLSecondsAfterFinished = ptr.To[int32](30)
		p.Status.Completion = c
		return p
	}
	reconcile := func(p *workv1alpha1.PlacementManifestWork, owned map[string]*workv1.ManifestWork, clusters ...string) (writePlan, *observation) {
		manifests, err := planner.ParseTemplate(p)
		if err != nil {
			t.Fatal(err)
		}
		in := inputs{placementFound: true, placementName: "p", placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
			clusters: clusters, owned: owned, shares: ownedShares(owned), template: manifests}
		d, invalid, _, err := desiredState(p, &in, remembered{deliveredKnown: true}, now)
		if err != nil || invalid != nil {
			t.Fatalf("desiredState: %v %v", err, invalid)
		}
		obs := &observation{inputs: in, desired: d}
		wp := planWrites(p, obs, nil, now)
		obs.rollout, obs.upToDate, obs.leaving = wp.rollout, wp.upToDate, wp.leaving
		return wp, obs
	}
	opsOf := func(wp writePlan) (writes, deletes []string) {
		for _, op := range wp.ops {
			if op.delete {
				deletes = append(deletes, op.cluster)
			} else {
				writes = append(writes, op.cluster)
			}
		}
		return writes, deletes
	}

	// Completed on both, first seen now: finishedTime is now, the TTL counts from it.
	owned, _, _ := jobWorks(t, newPMW(nil), map[string]map[string]any{"a": complete, "b": complete})
	p := newPMW(nil)
	wp, obs := reconcile(p, owned, "a", "b")
	if writes, deletes := opsOf(wp); len(writes)+len(deletes) > 0 || wp.recheck != 30*time.Second {
		t.Fatalf("just finished: writes %v, deletes %v, recheck %v; want none and 30s", writes, deletes, wp.recheck)
	}
	st := computeStatus(p, obs)
	want := &workv1alpha1.CompletionStatus{ObservedGeneration: 1, Completed: 2, FinishedTime: &metav1.Time{Time: now}}
	if diff := cmp.Diff(want, st.Completion); diff != "" {
		t.Fatalf("completion (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionCompleted); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Completed = %v, want True", c)
	}
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("a completed run is Ready: %v", c)
	}

	// The TTL has passed: the removal is recorded, nothing is deleted yet.
	p = newPMW(st.Completion)
	p.Status.Conditions, p.Status.PlacedManifestWorkSummary = st.Conditions, st.PlacedManifestWorkSummary
	now = now.Add(30 * time.Second)
	wp, obs = reconcile(p, owned, "a", "b")
	if writes, deletes := opsOf(wp); len(writes)+len(deletes) > 0 || wp.recheck != removalRecheck {
		t.Fatalf("TTL passed: writes %v, deletes %v, recheck %v; want none and %v", writes, deletes, wp.recheck, removalRecheck)
	}
	st = computeStatus(p, obs)
	if st.Completion.WorksRemovedTime == nil || !st.Completion.WorksRemovedTime.Time.Equal(now) {
		t.Fatalf("worksRemovedTime = %v, want %v", st.Completion.WorksRemovedTime, now)
	}

	// The next reconcile, or one after a restart, reads the removal from the status: every work goes, none is
	// written, and the status keeps the result.
	p = newPMW(st.Completion)
	p.Status = *st.DeepCopy()
	wp, _ = reconcile(p, owned, "a", "b")
	if writes, deletes := opsOf(wp); len(writes) > 0 || !cmp.Equal(deletes, []string{"a", "b"}) {
		t.Fatalf("removed: writes %v, deletes %v; want none and a, b", writes, deletes)
	}
	// Once the works are gone, with a cluster that joined meanwhile: nothing is written, the status stays.
	wp, obs = reconcile(p, map[string]*workv1.ManifestWork{}, "a", "b", "c")
	if len(wp.ops) > 0 {
		t.Fatalf("works gone: %d writes, want none", len(wp.ops))
	}
	if diff := cmp.Diff(p.Status, computeStatus(p, obs)); diff != "" {
		t.Fatalf("the status after the removal changed (-before +after):\n%s", diff)
	}

	// A new generation runs again.
	p.Generation = 2
	wp, _ = reconcile(p, map[string]*workv1.ManifestWork{}, "a", "b")
	if writes, _ := opsOf(wp); !cmp.Equal(writes, []string{"a", "b"}) {
		t.Fatalf("new generation: writes %v, want a, b", writes)
	}
}
