package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// TestComputeStatus: what a reconcile observed becomes the conditions and counts users and GitOps tools read,
// without I/O.
func TestComputeStatus(t *testing.T) {
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
	p.Generation = 3
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// work is the cluster's work of the current template, as its agent reports it.
	work := func(cluster string, conds map[string]metav1.ConditionStatus) *workv1.ManifestWork {
		w, err := b.Build(cluster, []workv1.Manifest{p.Spec.ManifestWorkTemplate.Workload.Manifests[0]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Generation = 1
		framework.WorkConditions(w, conds)
		return w
	}
	// earlierWork is the cluster's work of an earlier template (another ConfigMap), as its agent reports it.
	earlierWork := func(cluster string, conds map[string]metav1.ConditionStatus) *workv1.ManifestWork {
		earlier := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		eb, err := manifestwork.NewBuilder(earlier, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := eb.Build(cluster, earlier.Spec.ManifestWorkTemplate.Workload.Manifests, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Generation = 1
		framework.WorkConditions(w, conds)
		return w
	}
	available := map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue}
	failedApply := map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionFalse}
	plan := func(clusters ...string) *planner.Plan {
		pl, err := planner.Compute(p, manifests, planner.Input{Clusters: clusters})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	upToDate := func(clusters ...string) map[string]bool {
		out := map[string]bool{}
		for _, c := range clusters {
			out[c] = true
		}
		return out
	}
	decided := func(clusters ...string) inputs {
		owned := map[string]*workv1.ManifestWork{}
		for _, c := range clusters {
			owned[c] = work(c, available)
		}
		return inputs{placementName: "p", placementFound: true, clusters: clusters, workName: "w", owned: owned, template: manifests}
	}

	// failing overrides c2: its ConfigMap has no /data/missing to replace.
	failing, err := override.Compile([]workv1alpha1.ClusterOverride{{Name: "missing",
		Clusters: &workv1alpha1.OverrideClusters{Names: []string{"c2"}},
		Patches:  []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/data/missing", Value: &workv1alpha1.JSON{Raw: []byte(`"x"`)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	overridden := func() observation {
		pl, err := planner.Compute(p, manifests, planner.Input{Clusters: []string{"c1", "c2"}, Overrides: failing})
		if err != nil {
			t.Fatal(err)
		}
		in := decided("c1", "c2")
		in.overrides = failing
		return observation{inputs: in, desired: desired{plan: pl, upToDate: upToDate("c1")}}
	}

	// want is the status and reason of each condition checked, and the summary.
	type want struct {
		conditions map[string]string // type: "True/Reason"
		summary    workv1alpha1.PlacedManifestWorkSummary
		// readyMessage, when set, is how Ready's message starts.
		readyMessage string
		// overrides is status.overrides, messages left out.
		overrides []workv1alpha1.OverrideStatus
	}
	cases := map[string]struct {
		obs  observation
		want want
	}{
		"every cluster available": {
			obs: observation{inputs: decided("c1", "c2"), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1", "c2")}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "True/AllClustersAvailable", workv1alpha1.ConditionStalled: "False/NotStalled",
				workv1alpha1.ConditionReconciling: "False/Ready", workv1alpha1.ConditionPlacementVerified: "True/PlacementDecided",
				workv1alpha1.ConditionManifestworkApplied: "True/AsExpected", workv1alpha1.ConditionDistributed: "True/Distributed",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}},
		},
		"the Placement is missing: the delivered works are described, and only the user can fix it": {
			obs: observation{inputs: inputs{placementName: "p", workName: "w", template: manifests,
				owned: map[string]*workv1.ManifestWork{"c1": work("c1", available)}}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/PlacementNotFound", workv1alpha1.ConditionStalled: "True/PlacementNotFound",
				workv1alpha1.ConditionPlacementVerified: "False/PlacementNotFound", workv1alpha1.ConditionManifestworkApplied: "False/NoClusters",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Applied: 1, Available: 1}},
		},
		"the Placement is not decided yet: kept and reconciling, not stalled": {
			obs: observation{inputs: func() inputs {
				in := decided("c1")
				in.undecided, in.clusters = "Placement \"p\" has no decision yet", nil
				return in
			}()},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/PlacementNotDecided", workv1alpha1.ConditionStalled: "False/NotStalled",
				workv1alpha1.ConditionReconciling: "True/PlacementNotDecided", workv1alpha1.ConditionPlacementVerified: "False/PlacementNotDecided",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Applied: 1, Available: 1}},
		},
		"the Placement is missing: a work on an earlier template counts as neither applied nor available": {
			obs: observation{inputs: inputs{placementName: "p", workName: "w", template: manifests,
				owned: map[string]*workv1.ManifestWork{"c1": work("c1", available), "c2": earlierWork("c2", available)}}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/PlacementNotFound", workv1alpha1.ConditionPlacementVerified: "False/PlacementNotFound",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Progressing: 1}},
		},
		"a template that cannot be used: no cluster carries it": {
			obs: observation{inputs: func() inputs {
				in := decided("c1")
				in.template = nil
				in.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: "manifest 0 has no name"}
				return in
			}()},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/InvalidTemplate", workv1alpha1.ConditionManifestworkApplied: "False/InvalidTemplate",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Progressing: 1}},
		},
		"an invalid spec stalls it and keeps the works": {
			obs: observation{inputs: func() inputs {
				in := decided("c1")
				in.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidSpec, Message: "bad"}
				return in
			}()},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/InvalidSpec", workv1alpha1.ConditionStalled: "True/InvalidSpec",
				workv1alpha1.ConditionDistributed: "False/InvalidSpec", workv1alpha1.ConditionManifestworkApplied: "False/InvalidSpec",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Applied: 1, Available: 1}},
		},
		"an interpreter's webhook that did not answer is retried, not stalled": {
			obs: observation{inputs: func() inputs {
				in := decided("c1")
				in.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInterpreterFailed, Message: "webhook ReviseReplica: timed out"}
				return in
			}()},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/InterpreterFailed", workv1alpha1.ConditionStalled: "False/NotStalled",
				workv1alpha1.ConditionReconciling: "True/InterpreterFailed", workv1alpha1.ConditionDistributed: "False/InterpreterFailed",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Applied: 1, Available: 1}},
		},
		"a foreign work blocks one cluster: that cluster is degraded, the PMW is not stalled": {
			obs: observation{inputs: decided("c1", "c2"), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1")},
				outcome: outcome{conflicts: []string{"c2"}}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/ManifestWorkConflict", workv1alpha1.ConditionStalled: "False/NotStalled",
				workv1alpha1.ConditionManifestworkApplied: "False/ManifestWorkConflict",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Degraded: 1}},
		},
		"refused writes are retried, said on ManifestworkApplied": {
			obs: observation{inputs: decided("c1", "c2"), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1", "c2")},
				outcome: outcome{writeErrors: []error{errors.New("quota")}, failedClusters: []string{"c2"}}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/WriteFailed", workv1alpha1.ConditionManifestworkApplied: "False/WriteFailed",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}},
		},
		"an agent that cannot apply makes its cluster degraded": {
			obs: observation{inputs: func() inputs {
				in := decided("c1", "c2")
				in.owned["c2"] = work("c2", failedApply)
				return in
			}(), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1", "c2")}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/ClustersDegraded", workv1alpha1.ConditionManifestworkApplied: "False/ApplyFailed",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Degraded: 1},
				readyMessage: "1 of 2 clusters are degraded, 1 available; for example c2: ApplyFailed"},
		},
		"overrides that cannot be used stall it and keep the works": {
			obs: observation{inputs: func() inputs {
				in := decided("c1")
				in.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidOverride, Message: "spec.overrides cannot be used"}
				return in
			}()},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/InvalidOverride", workv1alpha1.ConditionStalled: "True/InvalidOverride",
				workv1alpha1.ConditionDistributed: "False/InvalidOverride", workv1alpha1.ConditionManifestworkApplied: "False/InvalidOverride",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 1, Applied: 1, Available: 1}},
		},
		"an override that fails on one cluster: named on Distributed, not stalled, counted": {
			obs: overridden(),
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionReady: "False/OverrideFailed", workv1alpha1.ConditionStalled: "False/NotStalled",
				workv1alpha1.ConditionReconciling: "True/OverrideFailed", workv1alpha1.ConditionDistributed: "False/OverrideFailed",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Progressing: 1},
				readyMessage: "override missing fails on 1 clusters (c2): override missing on cluster c2: ConfigMap default/cfg",
				overrides:    []workv1alpha1.OverrideStatus{{Name: "missing", Failed: 1, FailedClusters: []string{"c2"}}}},
		},
		// While a failed revision is rolled back the plan is the completed revision's, so every cluster on it
		// counts as up to date; ManifestworkApplied must still not say the current template is applied.
		"a failed revision rolled back on every cluster is not applied": {
			obs: observation{inputs: decided("c1", "c2"), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1", "c2"),
				rollout: rolloutPlan{failure: failureStep{evaluated: true, rollingBack: true,
					failed: &workv1alpha1.FailedRevision{Revision: 2, Name: "web-v2", Clusters: []string{"c1"}},
					to:     &workv1alpha1.RevisionReference{Revision: 1, Name: "web-v1"}}}}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionManifestworkApplied: "False/RolledBack", workv1alpha1.ConditionRolloutComplete: "False/RolledBack",
				workv1alpha1.ConditionReady: "False/RolledBack", workv1alpha1.ConditionStalled: "True/RolledBack",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 2, Available: 2}},
		},
		"a cluster the rollout holds on an earlier template is progressing, not available": {
			obs: observation{inputs: decided("c1", "c2"), desired: desired{plan: plan("c1", "c2"), upToDate: upToDate("c1")}},
			want: want{conditions: map[string]string{
				workv1alpha1.ConditionManifestworkApplied: "False/WaitingForApply",
			}, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Progressing: 1}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := computeStatus(p, &tc.obs)
			if st.ObservedGeneration != p.Generation {
				t.Errorf("observedGeneration %d, want %d", st.ObservedGeneration, p.Generation)
			}
			got := map[string]string{}
			for typ := range tc.want.conditions {
				c := meta.FindStatusCondition(st.Conditions, typ)
				if c == nil {
					t.Fatalf("no condition %s", typ)
				}
				if c.ObservedGeneration != p.Generation {
					t.Errorf("condition %s describes generation %d, want %d", typ, c.ObservedGeneration, p.Generation)
				}
				got[typ] = string(c.Status) + "/" + c.Reason
			}
			if diff := cmp.Diff(tc.want.conditions, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if m := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady).Message; !strings.HasPrefix(m, tc.want.readyMessage) {
				t.Errorf("Ready's message %q, want it to start with %q", m, tc.want.readyMessage)
			}
			for i := range st.Overrides {
				st.Overrides[i].Message = ""
			}
			if diff := cmp.Diff(tc.want.overrides, st.Overrides); diff != "" {
				t.Errorf("status.overrides (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.summary, st.PlacedManifestWorkSummary); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// unansweredAggregator is a kind whose interpreter's webhook for AggregateStatus (under Fail) fails, with an
// error that differs on every call, as an answer with a wrong uid does.
type unansweredAggregator struct {
	calls *int
}

func (unansweredAggregator) Name() string                                      { return "ResourceInterpreter configs" }
func (unansweredAggregator) ReplicaPaths() []string                            { return nil }
func (unansweredAggregator) FeedbackPaths(template.Manifest) []workv1.JsonPath { return nil }
func (unansweredAggregator) Health(health.ManifestInput, health.Feedback) (health.Verdict, bool) {
	return health.Verdict{}, false
}
func (unansweredAggregator) Aggregation() []workv1alpha1.InterpreterAggregation { return nil }
func (unansweredAggregator) Retain() []string                                   { return nil }
func (unansweredAggregator) ReportsAggregateStatusFailures() bool               { return true }

func (k unansweredAggregator) AggregateStatus(template.Manifest, []string, []health.Feedback) ([]workv1alpha1.AggregatedField, bool, error) {
	*k.calls++
	return nil, false, fmt.Errorf("ResourceInterpreter configs: webhook AggregateStatus: %w", &interpreterwebhook.Error{
		URL: "https://configs.webhooks.svc:443/", Operation: workv1alpha1.OperationAggregateStatus, Reason: interpreterwebhook.ReasonRejected,
		Detail: fmt.Sprintf("answered unsuccessful: the roll-up store is down (call %d)", *k.calls)})
}

// oneAvailableWork plans p for cluster c1 and builds its work, applied and available for its generation.
func oneAvailableWork(t *testing.T, p *workv1alpha1.PlacementManifestWork) ([]template.Manifest, *planner.Plan, *workv1.ManifestWork) {
	t.Helper()
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := planner.Compute(p, manifests, planner.Input{Clusters: []string{"c1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Build("c1", p.Spec.ManifestWorkTemplate.Workload.Manifests, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Generation = 1
	framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
	return manifests, pl, w
}

// TestComputeStatusAggregationFailed: a webhook that does not roll a manifest's status up under Fail keeps the
// aggregated status last written and says so on StatusAggregated, without touching Ready (the workloads are
// available); computed again while it keeps failing, with another error, the status is the same, so the
// reconciles that retry it write nothing.
func TestComputeStatusAggregationFailed(t *testing.T) {
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
	p.Generation = 2
	manifests, pl, w := oneAvailableWork(t, p)
	calls := 0
	kinds := health.NewInterpreters()
	kinds.Add(schema.GroupKind{Kind: "ConfigMap"}, nil, unansweredAggregator{calls: &calls})
	obs := &observation{
		inputs: inputs{placementName: "p", placementFound: true, clusters: []string{"c1"}, workName: "w", template: manifests, kinds: kinds,
			owned: map[string]*workv1.ManifestWork{"c1": w}},
		desired: desired{plan: pl, upToDate: map[string]bool{"c1": true}},
	}
	written := []workv1alpha1.AggregatedField{{Name: "keys", Operation: workv1alpha1.AggregationSum, Clusters: 1, Value: ptr.To[int64](3)}}
	p.Status.Manifests = []workv1alpha1.ManifestSummary{{Name: "cfg", Namespace: "default", Kind: "ConfigMap", Aggregated: written}}

	st := computeStatus(p, obs)
	if diff := cmp.Diff(written, st.Manifests[0].Aggregated); diff != "" {
		t.Errorf("aggregated (-last written +got):\n%s", diff)
	}
	c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionStatusAggregated)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha1.ReasonInterpreterFailed || c.ObservedGeneration != p.Generation ||
		!strings.Contains(c.Message, "ConfigMap default/cfg (WebhookRejected)") || !strings.Contains(c.Message, "ResourceInterpreter configs: webhook AggregateStatus: interpreter webhook https://configs.webhooks.svc:443/") {
		t.Errorf("StatusAggregated = %+v, want False with InterpreterFailed naming the manifest, the interpreter and the webhook", c)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, workv1alpha1.ConditionReady) {
		t.Errorf("Ready = %+v, want True: the workloads are available", meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionReady))
	}

	p.Status = st
	again := computeStatus(p, obs)
	if calls != 2 {
		t.Fatalf("the webhook was asked %d times, want once per computation", calls)
	}
	if diff := cmp.Diff(st, again); diff != "" {
		t.Errorf("the status changed while the webhook keeps failing (-before +after):\n%s", diff)
	}
}

// TestAggregationRetry: a reconcile asks a webhook that did not roll the status up again in 30 s only when it
// asked it itself. A run whose works were removed (ttlSecondsAfterFinished) keeps its status as it was, a False
// StatusAggregated too, but nothing is rolled up any more: no retry, which would repeat forever.
func TestAggregationRetry(t *testing.T) {
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
	p.Generation = 2
	manifests, pl, w := oneAvailableWork(t, p)
	failing := health.NewInterpreters()
	calls := 0
	failing.Add(schema.GroupKind{Kind: "ConfigMap"}, nil, unansweredAggregator{calls: &calls})
	observe := func(kinds *health.Interpreters, owned map[string]*workv1.ManifestWork) *observation {
		return &observation{
			inputs:  inputs{placementName: "p", placementFound: true, clusters: []string{"c1"}, workName: "w", template: manifests, kinds: kinds, owned: owned},
			desired: desired{plan: pl, upToDate: map[string]bool{"c1": true}},
		}
	}
	// failed is the status a reconcile stored while the webhook failed.
	failed := computeStatus(p, observe(failing, map[string]*workv1.ManifestWork{"c1": w}))
	if !meta.IsStatusConditionFalse(failed.Conditions, workv1alpha1.ConditionStatusAggregated) {
		t.Fatalf("StatusAggregated = %+v, want False", meta.FindStatusCondition(failed.Conditions, workv1alpha1.ConditionStatusAggregated))
	}
	removed := failed.DeepCopy()
	removed.Completion = &workv1alpha1.CompletionStatus{ObservedGeneration: p.Generation, WorksRemovedTime: ptr.To(metav1.Now())}

	cases := map[string]struct {
		status *workv1alpha1.PlacementManifestWorkStatus
		kinds  *health.Interpreters
		owned  map[string]*workv1.ManifestWork
		want   time.Duration
	}{
		"the webhook fails: asked again in 30s":                                            {status: &failed, kinds: failing, owned: map[string]*workv1.ManifestWork{"c1": w}, want: interpreterRetry},
		"it answers at last: no retry":                                                     {status: &failed, kinds: health.NewInterpreters(), owned: map[string]*workv1.ManifestWork{"c1": w}},
		"the works were removed after the run, StatusAggregated False as it was: no retry": {status: removed, kinds: failing},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pmw := p.DeepCopy()
			pmw.Status = *tc.status.DeepCopy()
			obs := observe(tc.kinds, tc.owned)
			stored := &statusChange{before: pmw.Status, after: computeStatus(pmw, obs)}
			if got := aggregationRetry(obs, stored); got != tc.want {
				t.Errorf("retry in %s, want %s", got, tc.want)
			}
		})
	}
}

// TestRolloutStoppedCountsAgree: the rollout strategy stops at maxFailures on the clusters' health before the
// reconcile's writes (it decides which works are written), status.rollout counts after them. A Degraded updated
// cluster whose work this reconcile rewrote (new split shares after a failover) no longer counts as failed, so
// RolloutComplete must not say "0 of 5 updated clusters failed, more than maxFailures allows": the numbers in
// the message are status.rollout's, and it says which clusters count again once their agents report.
func TestRolloutStoppedCountsAgree(t *testing.T) {
	clusters := []string{"a", "b", "c", "d", "e"}
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
	p.UID, p.Generation = "uid", 1
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	owned, pl, _ := plannedWorks(t, p, clusters...)
	// a failed to apply the current template; the others are available: maxFailures 0 is breached.
	current := map[string]health.ClusterResult{}
	upToDate := map[string]bool{}
	for _, c := range clusters {
		owned[c].Generation = 1
		upToDate[c] = true
		if c == "a" {
			framework.WorkConditions(owned[c], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionFalse})
			current[c] = health.ClusterResult{Verdict: health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonApplyFailed}}
			continue
		}
		framework.WorkConditions(owned[c], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
		current[c] = health.ClusterResult{Verdict: health.Verdict{State: health.Healthy}}
	}
	// rewritten is a's work as the API server took this reconcile's update: a new generation no agent reported.
	rewritten := owned["a"].DeepCopy()
	rewritten.Generation = 2
	cases := map[string]struct {
		written    map[string]*workv1.ManifestWork
		wantFailed int32
		message    string
	}{
		"the failed cluster's work is not written: it counts": {wantFailed: 1,
			message: "The rollout stopped: 1 of 5 updated clusters failed, more than maxFailures allows; 5 of 5 clusters carry the current template"},
		"the failed cluster's work is rewritten for new shares: it counts again once its agent reports": {written: map[string]*workv1.ManifestWork{"a": rewritten},
			message: "The rollout stopped: more updated clusters had failed than maxFailures allows before this reconcile rewrote the works of a, which count again once their agents report on them; 0 of 5 updated clusters count as failed now; 5 of 5 clusters carry the current template"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := &observation{inputs: inputs{placementName: "p", placementFound: true, clusters: clusters, owned: owned, shares: ownedShares(owned),
				template: manifests, workName: manifestwork.WorkName(manifestwork.Owner(p))},
				desired: desired{plan: pl, upToDate: upToDate, current: current, rollout: rolloutPlan{maxFailures: true}},
				outcome: outcome{written: tc.written}}
			st := computeStatus(p, obs)
			if st.Rollout == nil || st.Rollout.Failed != tc.wantFailed || st.Rollout.Updated != 5 {
				t.Fatalf("status.rollout = %+v, want 5 updated, %d failed", st.Rollout, tc.wantFailed)
			}
			c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionRolloutComplete)
			if c == nil || c.Reason != workv1alpha1.ReasonRolloutMaxFailures || c.Message != tc.message {
				t.Errorf("RolloutComplete = %+v, want %s: %q", c, workv1alpha1.ReasonRolloutMaxFailures, tc.message)
			}
		})
	}
}

// TestTemplateChangeStatusIsFinal: the status the reconcile that rolls a new template out stores is the one the
// next reconcile computes, once the cache shows the works it wrote and before any agent applies them. So no
// second status write follows a template change, and the status never counts a cluster as having succeeded
// or failed with a template it has not applied: its health on the template its work carried before the write
// says nothing of the new one.
func TestTemplateChangeStatusIsFinal(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clusters := []string{"a", "b"}
	earlier := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
	earlier.UID, earlier.Generation = "uid", 1
	owned, _, _ := plannedWorks(t, earlier, clusters...)
	// a's agent applied the earlier template and it is available, b's failed to apply it; as the cache keeps it.
	for _, w := range owned {
		w.Generation = 1
	}
	framework.WorkConditions(owned["a"], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
	framework.WorkConditions(owned["b"], map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionFalse})
	for _, w := range owned {
		trimWork(w)
	}
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj()
	p.UID, p.Generation = "uid", 2
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	observe := func(owned map[string]*workv1.ManifestWork) *observation {
		return &observation{inputs: inputs{placementName: "p", placementFound: true,
			placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
			decisions: []clusterv1beta1.PlacementDecision{decisionOf(clusters...)}, clusters: clusters, owned: owned,
			shares: ownedShares(owned), template: manifests, workName: manifestwork.WorkName(manifestwork.Owner(p))}}
	}
	r := &PlacementManifestWorkReconciler{Now: func() time.Time { return now }}

	// The reconcile that sees the new template writes both works.
	first := observe(owned)
	wp, _, err := r.decide(context.Background(), p, first)
	if err != nil || wp == nil {
		t.Fatalf("decide: %v, plan %v", err, wp)
	}
	first.written = map[string]*workv1.ManifestWork{}
	for _, op := range wp.ops {
		// As the API server takes the update (a new generation) and apply keeps its answer.
		w := op.written(now)
		w.Generation++
		trimWork(w)
		first.written[op.cluster] = w
		first.upToDate[op.cluster] = true
	}
	if len(first.written) != len(clusters) {
		t.Fatalf("the new template is written to %d clusters, want %d", len(first.written), len(clusters))
	}
	stored := computeStatus(p, first)
	if r := stored.Rollout; r == nil || r.Updated != 2 || r.Succeeded != 0 || r.Failed != 0 {
		t.Errorf("status.rollout after the writes = %+v, want 2 updated, none succeeded (no agent applied the new template yet), none failed", r)
	}

	// The next reconcile, woken by those writes, finds them in the cache: it has nothing to write.
	p.Status = stored
	second := observe(first.written)
	wp, _, err = r.decide(context.Background(), p, second)
	if err != nil || wp == nil {
		t.Fatalf("decide: %v, plan %v", err, wp)
	}
	if len(wp.ops) != 0 {
		t.Fatalf("the next reconcile writes %d works again", len(wp.ops))
	}
	if diff := cmp.Diff(stored, computeStatus(p, second)); diff != "" {
		t.Errorf("the next reconcile computes another status, a second write (-stored +next):\n%s", diff)
	}
}
