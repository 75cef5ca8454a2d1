package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

func TestPlanRollout(t *testing.T) {
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	decision := decisionOf("a", "b", "c")
	work := func(hash string) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: hash}}}
	}
	// availableWork carries the current template since updated (the manager's updatedAt) and has been
	// WorkAvailable since availableSince for its current generation: the work agent keeps the condition's
	// lastTransitionTime while it stays True across a template update.
	availableWork := func(updated, availableSince time.Time) *workv1.ManifestWork {
		w := work("new")
		w.Generation = 2
		w.Annotations[workv1alpha1.AnnotationUpdatedAt] = updated.UTC().Format(time.RFC3339)
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 2,
			LastTransitionTime: metav1.NewTime(availableSince)}}
		return w
	}
	now := time.Now()
	progressive := func(p clusterv1alpha1.RolloutProgressive) *clusterv1alpha1.RolloutStrategy {
		return &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &p}
	}
	soak := progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1),
		RolloutConfig: clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: 5 * time.Minute}}})
	healthyA := map[string]health.ClusterResult{"a": {Verdict: health.Verdict{State: health.Healthy}}}
	cases := map[string]struct {
		strategy    *clusterv1alpha1.RolloutStrategy
		owned       map[string]*workv1.ManifestWork
		current     map[string]health.ClusterResult
		failing     []string // clusters an override fails on
		wantAllowed map[string]bool
		wantErr     bool
		wantBreach  bool
		// wantSoaking: the plan rechecks when the first cluster's minSuccessTime (5m) from now ends.
		wantSoaking bool
	}{
		"no strategy: every cluster": {wantAllowed: nil},
		"maxConcurrency 1, nothing applied: the first cluster": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}),
			wantAllowed: map[string]bool{"a": true},
		},
		"maxConcurrency 1, the first progressing: it keeps its slot": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}),
			owned:       map[string]*workv1.ManifestWork{"a": work("new"), "b": work("old"), "c": work("old")},
			current:     map[string]health.ClusterResult{"a": {Verdict: health.Verdict{State: health.Progressing}}},
			wantAllowed: map[string]bool{"a": true},
		},
		"maxConcurrency 1, the first available: the next one": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}),
			owned:       map[string]*workv1.ManifestWork{"a": work("new"), "b": work("old"), "c": work("old")},
			current:     map[string]health.ClusterResult{"a": {Verdict: health.Verdict{State: health.Healthy}}},
			wantAllowed: map[string]bool{"b": true},
		},
		"minSuccessTime 5m, available for an hour but the template arrived now: it soaks, the next waits": {
			strategy:    soak,
			owned:       map[string]*workv1.ManifestWork{"a": availableWork(now, now.Add(-time.Hour)), "b": work("old"), "c": work("old")},
			current:     healthyA,
			wantAllowed: map[string]bool{"a": true},
			wantSoaking: true,
		},
		"minSuccessTime 5m, the template arrived 10m ago and available since: the next one": {
			strategy:    soak,
			owned:       map[string]*workv1.ManifestWork{"a": availableWork(now.Add(-10*time.Minute), now.Add(-time.Hour)), "b": work("old"), "c": work("old")},
			current:     healthyA,
			wantAllowed: map[string]bool{"b": true},
		},
		"minSuccessTime 5m, the template arrived 10m ago, available only since a minute: it soaks": {
			strategy:    soak,
			owned:       map[string]*workv1.ManifestWork{"a": availableWork(now.Add(-10*time.Minute), now.Add(-time.Minute)), "b": work("old"), "c": work("old")},
			current:     healthyA,
			wantAllowed: map[string]bool{"a": true},
		},
		"a failure beyond maxFailures stops the rollout": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}),
			owned:       map[string]*workv1.ManifestWork{"a": work("new"), "b": work("old"), "c": work("old")},
			current:     map[string]health.ClusterResult{"a": {Verdict: health.Verdict{State: health.Degraded}}},
			wantAllowed: map[string]bool{"a": true},
			wantBreach:  true,
		},
		"maxConcurrency 1, an override fails on the first: the next one, the rollout not held by it": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}),
			owned:       map[string]*workv1.ManifestWork{"a": work("old"), "b": work("old"), "c": work("old")},
			failing:     []string{"a"},
			wantAllowed: map[string]bool{"b": true},
		},
		"a malformed deadline allows nothing and is an error": {
			strategy:    progressive(clusterv1alpha1.RolloutProgressive{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "soon"}}),
			wantAllowed: map[string]bool{},
			wantErr:     true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pmw := &workv1alpha1.PlacementManifestWork{Spec: workv1alpha1.PlacementManifestWorkSpec{RolloutStrategy: tc.strategy}}
			obs := &observation{inputs: inputs{placement: placement, decisions: []clusterv1beta1.PlacementDecision{decision}, clusters: []string{"a", "b", "c"}, owned: tc.owned}, desired: desired{templateHash: "new"}}
			if len(tc.failing) > 0 {
				obs.plan = &planner.Plan{OverrideFailures: map[string]*override.ClusterError{}}
				for _, c := range tc.failing {
					obs.plan.OverrideFailures[c] = &override.ClusterError{Cluster: c}
				}
			}
			got := planRollout(pmw, obs, tc.current)
			if (got.err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error: %v", got.err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantAllowed, got.allowed); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			if got.maxFailures != tc.wantBreach {
				t.Errorf("maxFailures = %v, want %v", got.maxFailures, tc.wantBreach)
			}
			if tc.wantSoaking && (got.recheck <= 4*time.Minute || got.recheck > 5*time.Minute) {
				t.Errorf("recheck = %s, want the end of the 5m soak from now", got.recheck)
			}
		})
	}
}

// TestRolloutStatusPaused: spec.paused is RolloutPaused while some cluster is held back, naming the revision,
// and not once every cluster carries the current template. A recorded failure (rolled back, or stopped at
// maxFailures) wins over the pause: the rollout condition says so, mentions the pause, and Stalled is True, so
// kubectl pmw rollout status and GitOps tools stop waiting.
func TestRolloutStatusPaused(t *testing.T) {
	healthy := health.ClusterResult{Verdict: health.Verdict{State: health.Healthy}}
	degraded := health.ClusterResult{Verdict: health.Verdict{State: health.Degraded}}
	rollingBack := failureStep{evaluated: true, rollingBack: true, failed: &workv1alpha1.FailedRevision{Revision: 3, Name: "web-v3", Clusters: []string{"a"}},
		to: &workv1alpha1.RevisionReference{Revision: 2, Name: "web-v2"}}
	hold := failureStep{evaluated: true, hold: true, failed: &workv1alpha1.FailedRevision{Revision: 3, Name: "web-v3", Clusters: []string{"a"}}}
	const alsoPaused = "; the rollout is also paused (spec.paused): the clusters keep what they carry until it is resumed"
	cases := map[string]struct {
		upToDate    map[string]bool
		paused      bool
		degraded    bool // cluster a is degraded
		maxFailures bool
		failure     failureStep
		wantReason  string
		wantMsg     string
		wantStalled metav1.ConditionStatus
	}{
		"paused, one cluster held": {upToDate: map[string]bool{"a": true}, paused: true, wantReason: workv1alpha1.ReasonRolloutPaused,
			wantMsg:     "The rollout is paused (spec.paused): revision 3 is held back from 1 of 2 clusters, which keep what they carry; set spec.paused to false to resume",
			wantStalled: metav1.ConditionFalse},
		"paused, nothing held": {upToDate: map[string]bool{"a": true, "b": true}, paused: true, wantReason: workv1alpha1.ReasonRolloutSucceeded,
			wantMsg: "All 2 clusters carry the current template", wantStalled: metav1.ConditionFalse},
		"not paused": {upToDate: map[string]bool{"a": true}, wantReason: workv1alpha1.ReasonRolloutProgressing, wantMsg: "1 of 2 clusters carry the current template",
			wantStalled: metav1.ConditionFalse},
		"paused, a failed revision being rolled back": {upToDate: map[string]bool{"b": true}, paused: true, degraded: true, maxFailures: true, failure: rollingBack,
			wantReason:  workv1alpha1.ReasonRolledBack,
			wantMsg:     "Revision 3 failed on clusters a (more than maxFailures allows) and is being rolled back to revision 2, the last completed: 1 of 2 clusters carry it; it is not rolled out again until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it" + alsoPaused,
			wantStalled: metav1.ConditionTrue},
		"paused, a failed revision rolled back on every cluster": {upToDate: map[string]bool{"a": true, "b": true}, paused: true, failure: rollingBack,
			wantReason:  workv1alpha1.ReasonRolledBack,
			wantMsg:     "Revision 3 failed on clusters a (more than maxFailures allows) and was rolled back to revision 2, the last completed, on every cluster; it is not rolled out again until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it",
			wantStalled: metav1.ConditionTrue},
		"paused, a failed revision that cannot be rolled back": {upToDate: map[string]bool{"a": true}, paused: true, degraded: true, failure: hold,
			wantReason:  workv1alpha1.ReasonRolloutMaxFailures,
			wantMsg:     "Revision 3 failed on clusters a and cannot be rolled back: the completed revision's ControllerRevision cannot be read, so every cluster keeps what it carries; change the spec (revert it in git) or retry with kubectl pmw rollout retry" + alsoPaused,
			wantStalled: metav1.ConditionTrue},
		"paused, stopped at maxFailures": {upToDate: map[string]bool{"a": true}, paused: true, degraded: true, maxFailures: true,
			wantReason:  workv1alpha1.ReasonRolloutMaxFailures,
			wantMsg:     "The rollout stopped: 1 of 1 updated clusters failed, more than maxFailures allows; 1 of 2 clusters carry the current template" + alsoPaused,
			wantStalled: metav1.ConditionTrue},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			current := map[string]health.ClusterResult{"a": healthy, "b": healthy}
			if tc.degraded {
				current["a"] = degraded
			}
			d := &desired{upToDate: tc.upToDate, current: current, rollout: rolloutPlan{paused: tc.paused, maxFailures: tc.maxFailures, failure: tc.failure}}
			_, c := rolloutStatus("web", []string{"a", "b"}, d, current, "revision 3")
			if c.Reason != tc.wantReason || c.Message != tc.wantMsg {
				t.Errorf("got %s %q, want %s %q", c.Reason, c.Message, tc.wantReason, tc.wantMsg)
			}
			obs := &observation{inputs: inputs{placementFound: true, clusters: []string{"a", "b"}}}
			_, _, stalled := readiness(obs, workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 1}, &c)
			if stalled.Status != tc.wantStalled {
				t.Errorf("Stalled %s (%s), want %s", stalled.Status, stalled.Reason, tc.wantStalled)
			}
		})
	}
}

// TestPlanRolloutPassesKeptClusters: a cluster kept on its work (its overrides or their dependencies fail there)
// takes no slot, and does not hold its decision group: the rollout goes on to the next group (ProgressivePerGroup)
// and past a mandatory group (Progressive).
func TestPlanRolloutPassesKeptClusters(t *testing.T) {
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	g0 := decisionOf("a", "b")
	g0.Labels[clusterv1beta1.DecisionGroupIndexLabel] = "0"
	g1 := decisionOf("c", "d")
	g1.Name = "p-2"
	g1.Labels[clusterv1beta1.DecisionGroupIndexLabel] = "1"
	work := func(hash string) *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: hash}}}
	}
	for name, tc := range map[string]struct {
		strategy *clusterv1alpha1.RolloutStrategy
		want     map[string]bool
	}{
		"per group": {
			strategy: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{}},
			want:     map[string]bool{"c": true, "d": true},
		},
		"progressive past a mandatory group": {
			strategy: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromInt32(1),
				MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{
					MandatoryDecisionGroups: []clusterv1alpha1.MandatoryDecisionGroup{{GroupIndex: 0}}}}},
			want: map[string]bool{"c": true},
		},
	} {
		t.Run(name, func(t *testing.T) {
			pmw := &workv1alpha1.PlacementManifestWork{Spec: workv1alpha1.PlacementManifestWorkSpec{RolloutStrategy: tc.strategy}}
			// a is kept (a dependency of its overridden manifests is missing), b carries the new template and is
			// healthy, c and d wait.
			obs := &observation{inputs: inputs{placement: placement, decisions: []clusterv1beta1.PlacementDecision{g0, g1},
				clusters: []string{"a", "b", "c", "d"},
				owned:    map[string]*workv1.ManifestWork{"a": work("old"), "b": work("new"), "c": work("old"), "d": work("old")}},
				desired: desired{templateHash: "new"}}
			obs.plan = &planner.Plan{DependencyFailures: map[string]*planner.InvalidError{"a": {Reason: workv1alpha1.ReasonDependencyNotFound}}}
			got := planRollout(pmw, obs, map[string]health.ClusterResult{"b": {Verdict: health.Verdict{State: health.Healthy}}})
			if got.err != nil {
				t.Fatal(got.err)
			}
			if diff := cmp.Diff(tc.want, got.allowed); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
		})
	}
}
