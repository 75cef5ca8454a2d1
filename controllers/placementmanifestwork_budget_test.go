package controllers

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

func TestGateByBudget(t *testing.T) {
	const key = "apps/v1/Deployment default/web .spec.replicas"
	split := workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", FieldPath: ".spec.replicas", Total: 10}
	// work is a cluster's work carrying share, whose agent reports available replicas (none when negative).
	work := func(share, available int32) *workv1.ManifestWork {
		enc, _ := json.Marshal(map[string]int32{key: share})
		w := &workv1.ManifestWork{}
		w.Annotations = map[string]string{workv1alpha1.AnnotationShares: string(enc)}
		if available >= 0 {
			w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue}}
			w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
				ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"},
				StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
					{Name: health.FeedbackPrefix + health.AvailableReplicas, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(int64(available))}},
				}},
			}}
		}
		return w
	}
	step := func(cluster string, existing *workv1.ManifestWork) writeOp {
		return writeOp{cluster: cluster, existing: existing, desired: existing.DeepCopy(), templateChange: true}
	}
	reshare := func(cluster string, existing *workv1.ManifestWork, share int32) writeOp {
		return writeOp{cluster: cluster, existing: existing, desired: work(share, -1)}
	}
	// The fleet of the cases below on inflated reports: 6 replicas split 2/2/2 over a, b and c, and a's agent
	// reports 1000 of its 2 available (compromised, or buggy).
	inflated := func() map[string]*workv1.ManifestWork {
		return map[string]*workv1.ManifestWork{"a": work(2, 1000), "b": work(2, 2), "c": work(2, 2)}
	}
	cases := map[string]struct {
		budget      *intstr.IntOrString
		onCompleted bool
		// total is the split total, 10 when 0.
		total int32
		owned map[string]*workv1.ManifestWork
		// record is the manager's record of the shares it delivered (obs.previous); the shares the owned works
		// carry when nil. planned are the shares the plan gives the decided clusters now.
		record, planned map[string]map[string]int32
		// unavailable are the clusters whose ManagedCluster is not available.
		unavailable map[string]string
		ops         func(owned map[string]*workv1.ManifestWork) []writeOp
		wantKept    []string
		want        *workv1alpha1.DisruptionBudgetStatus
	}{
		"no budget: everything passes": {
			owned: map[string]*workv1.ManifestWork{"a": work(5, 5), "b": work(5, 5)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("a", o["a"]), step("b", o["b"])}
			},
			wantKept: []string{"a", "b"},
		},
		"a skewed cluster goes alone while nothing is unavailable (progress rule), the next waits": {
			budget: ptr.To(intstr.FromInt32(2)),
			owned:  map[string]*workv1.ManifestWork{"big": work(6, 6), "s1": work(2, 2), "s2": work(2, 2)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("big", o["big"]), step("s1", o["s1"])}
			},
			wantKept: []string{"big"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 2, Held: []string{"s1"},
				Message: "The rollout step of cluster s1 waits: it would make 8 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 2"},
		},
		"replicas unavailable already: only steps that risk nothing pass": {
			budget: ptr.To(intstr.FromString("20%")),
			owned:  map[string]*workv1.ManifestWork{"a": work(4, 1), "b": work(3, 3), "c": work(3, 0)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("b", o["b"]), step("c", o["c"])}
			},
			wantKept: []string{"c"},
			want: &workv1alpha1.DisruptionBudgetStatus{UnavailableReplicas: 6, MaxUnavailableReplicas: 2, Held: []string{"b"},
				Message: "The rollout step of cluster b waits: it would make 9 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 2"},
		},
		"a share decrease waits until the replicas moved elsewhere are available; an increase never waits": {
			budget: ptr.To(intstr.FromInt32(0)),
			// "new" joined with 3 replicas, all available: 13 run for a total of 10.
			owned: map[string]*workv1.ManifestWork{"a": work(5, 5), "b": work(5, 5), "new": work(3, 3)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{reshare("a", o["a"], 4), reshare("b", o["b"], 1), reshare("new", o["new"], 5)}
			},
			wantKept: []string{"a", "new"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The share decrease of cluster b waits: it would make 2 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"a leaving cluster is removed once the others carry the total": {
			budget: ptr.To(intstr.FromInt32(0)),
			owned:  map[string]*workv1.ManifestWork{"a": work(5, 5), "b": work(5, 5), "old": work(4, 4)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{{cluster: "old", existing: o["old"], delete: true}}
			},
			wantKept: []string{"old"},
			want:     &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0},
		},
		"a leaving cluster stays while its replicas are needed": {
			budget: ptr.To(intstr.FromInt32(1)),
			owned:  map[string]*workv1.ManifestWork{"a": work(5, 5), "b": work(5, 1), "old": work(4, 4)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{{cluster: "old", existing: o["old"], delete: true}}
			},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 1, Held: []string{"old"},
				Message: "The removal of cluster old waits: it would make 4 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 1"},
		},
		"a report older than the work's generation counts as nothing available": {
			budget: ptr.To(intstr.FromInt32(2)),
			owned: map[string]*workv1.ManifestWork{"big": func() *workv1.ManifestWork {
				w := work(6, 6)
				w.Generation = 2 // written again, not yet applied by the agent
				return w
			}(), "s1": work(2, 2), "s2": work(2, 2)},
			ops:      func(o map[string]*workv1.ManifestWork) []writeOp { return []writeOp{step("s1", o["s1"])} },
			wantKept: nil,
			want: &workv1alpha1.DisruptionBudgetStatus{UnavailableReplicas: 6, MaxUnavailableReplicas: 2, Held: []string{"s1"},
				Message: "The rollout step of cluster s1 waits: it would make 8 of 10 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 2"},
		},
		"a step back to the completed revision (a rollback) is never held, however many replicas are down": {
			budget:      ptr.To(intstr.FromInt32(0)),
			onCompleted: true,
			owned:       map[string]*workv1.ManifestWork{"a": work(5, 3), "b": work(5, 5)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("a", o["a"]), step("b", o["b"])}
			},
			wantKept: []string{"a", "b"},
			want:     &workv1alpha1.DisruptionBudgetStatus{UnavailableReplicas: 2, MaxUnavailableReplicas: 0},
		},
		"an agent reporting more than its share makes no room for another cluster's rollout step": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6, owned: inflated(),
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("c", o["c"]), step("b", o["b"])}
			},
			wantKept: []string{"c"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The rollout step of cluster b waits: it would make 4 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"an agent reporting more than its share makes no room for another cluster's share decrease": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6, owned: inflated(),
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{reshare("b", o["b"], 1)}
			},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The share decrease of cluster b waits: it would make 1 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"an agent reporting more than its share makes no room for a leaving cluster's removal": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6,
			owned: map[string]*workv1.ManifestWork{"a": work(2, 1000), "b": work(2, 2), "c": work(2, 1), "old": work(2, 2)},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{{cluster: "old", existing: o["old"], delete: true}}
			},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"old"},
				Message: "The removal of cluster old waits: it would make 1 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"the manager's record caps a report, not the shares annotation the agent can edit": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6,
			owned:  map[string]*workv1.ManifestWork{"a": work(1000, 1000), "b": work(2, 2), "c": work(2, 2)},
			record: map[string]map[string]int32{"a": {key: 2}, "b": {key: 2}, "c": {key: 2}},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("c", o["c"]), step("b", o["b"])}
			},
			wantKept: []string{"c"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The rollout step of cluster b waits: it would make 4 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"a cluster missing from the record counts at most the share planned for it": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6,
			owned:   map[string]*workv1.ManifestWork{"a": work(1000, 1000), "b": work(2, 2), "c": work(2, 2)},
			record:  map[string]map[string]int32{"b": {key: 2}, "c": {key: 2}},
			planned: map[string]map[string]int32{"a": {key: 2}, "b": {key: 2}, "c": {key: 2}},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("c", o["c"]), step("b", o["b"])}
			},
			wantKept: []string{"c"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The rollout step of cluster b waits: it would make 4 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"a cluster neither recorded nor planned counts as nothing available": {
			budget: ptr.To(intstr.FromInt32(0)), total: 6,
			owned:  map[string]*workv1.ManifestWork{"a": work(2, 2), "b": work(2, 2), "c": work(2, 2), "old": work(1000, 1000)},
			record: map[string]map[string]int32{"a": {key: 2}, "b": {key: 2}, "c": {key: 2}},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("c", o["c"]), step("b", o["b"])}
			},
			wantKept: []string{"c"},
			want: &workv1alpha1.DisruptionBudgetStatus{MaxUnavailableReplicas: 0, Held: []string{"b"},
				Message: "The rollout step of cluster b waits: it would make 4 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 0"},
		},
		"an unavailable cluster's last report counts as nothing available": {
			// 6 over a, b and c, one of a's replicas down; the cluster that left while away last reported 2.
			budget: ptr.To(intstr.FromInt32(1)), total: 6,
			owned:       map[string]*workv1.ManifestWork{"a": work(2, 1), "b": work(2, 2), "c": work(2, 2), "away": work(2, 2)},
			record:      map[string]map[string]int32{"a": {key: 2}, "b": {key: 2}, "c": {key: 2}, "away": {key: 2}},
			unavailable: map[string]string{"away": "the ManagedCluster's availability is Unknown"},
			ops: func(o map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{step("c", o["c"])}
			},
			want: &workv1alpha1.DisruptionBudgetStatus{UnavailableReplicas: 1, MaxUnavailableReplicas: 1, Held: []string{"c"},
				Message: "The rollout step of cluster c waits: it would make 3 of 6 replicas of Deployment.apps default/web unavailable, maxUnavailableReplicas is 1"},
		},
		"a cluster without a work (created) is never held": {
			budget: ptr.To(intstr.FromInt32(0)),
			owned:  map[string]*workv1.ManifestWork{"a": work(10, 3)},
			ops: func(map[string]*workv1.ManifestWork) []writeOp {
				return []writeOp{{cluster: "new", desired: work(5, -1), templateChange: true}}
			},
			wantKept: []string{"new"},
			want:     &workv1alpha1.DisruptionBudgetStatus{UnavailableReplicas: 7, MaxUnavailableReplicas: 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pmw := &workv1alpha1.PlacementManifestWork{}
			if tc.budget != nil {
				pmw.Spec.DisruptionBudget = &workv1alpha1.DisruptionBudget{MaxUnavailableReplicas: *tc.budget}
			}
			obs := &observation{}
			obs.owned, obs.onCompleted, obs.unavailable = tc.owned, tc.onCompleted, tc.unavailable
			obs.previous = tc.record
			if obs.previous == nil {
				obs.previous = ownedShares(tc.owned)
			}
			s := split
			if tc.total != 0 {
				s.Total = tc.total
			}
			obs.plan = &planner.Plan{Splits: []workv1alpha1.SplitStatus{s}, SplitKeys: []string{key}, Shares: tc.planned}
			kept, out := gateByBudget(pmw, obs, tc.ops(tc.owned))
			var got []string
			for _, op := range kept {
				got = append(got, op.cluster)
			}
			if diff := cmp.Diff(tc.wantKept, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, out.status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAvailableReplicasStaleReport: a report read before the agent applied the work's template (its template
// marker is another template's) counts as no report, like one of an earlier generation.
func TestAvailableReplicasStaleReport(t *testing.T) {
	split := workv1alpha1.SplitStatus{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "default"}
	report := func(marker string) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 2, Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: "new"}}}
		w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
		n, m := int64(3), marker
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
			ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Kind: "Deployment", Name: "web", Namespace: "default"},
			StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
				{Name: health.FeedbackPrefix + health.AvailableReplicas, Value: workv1.FieldValue{Type: workv1.Integer, Integer: &n}},
				{Name: health.FeedbackPrefix + health.TemplateHash, Value: workv1.FieldValue{Type: workv1.String, String: &m}},
			}},
		}}
		return w
	}
	if n, ok := availableReplicas(report("new"), split); !ok || n != 3 {
		t.Errorf("with the work's marker: %d, %v; want 3, true", n, ok)
	}
	if n, ok := availableReplicas(report("old"), split); ok {
		t.Errorf("with another template's marker: %d, %v; want no report", n, ok)
	}
}
