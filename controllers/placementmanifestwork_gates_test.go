package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	rolloutsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"
	placementsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestHoldAtGates(t *testing.T) {
	groups := map[string]placementsdk.GroupKey{
		"c1": {GroupName: "canary"}, "c2": {GroupName: "canary"},
		"w1": {GroupIndex: 1}, "w2": {GroupIndex: 1}, "w3": {GroupIndex: 2},
	}
	st := func(cluster string, s rolloutsdk.RolloutStatus) rolloutsdk.ClusterRolloutStatus {
		return rolloutsdk.ClusterRolloutStatus{ClusterName: cluster, Status: s, GroupKey: groups[cluster]}
	}
	afterClusters := func(n int32) workv1alpha1.RolloutGate {
		return workv1alpha1.RolloutGate{Name: "first", AfterClusters: ptr.To(n)}
	}
	afterCanary := workv1alpha1.RolloutGate{Name: "canary-ok", AfterGroup: "canary"}
	cases := map[string]struct {
		gates        []workv1alpha1.RolloutGate
		approved     []string
		statuses     []rolloutsdk.ClusterRolloutStatus // every decided cluster
		toRollout    []string                          // sdk-go's step, in its order
		wantAllowed  []string
		wantAwaiting string
	}{
		"afterClusters caps the first step at N": {
			gates:       []workv1alpha1.RolloutGate{afterClusters(1)},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.ToApply), st("w2", rolloutsdk.ToApply), st("w3", rolloutsdk.ToApply)},
			toRollout:   []string{"w1", "w2"},
			wantAllowed: []string{"w1"}, wantAwaiting: "first",
		},
		"afterClusters reached: nobody else, and the wait is named": {
			gates:       []workv1alpha1.RolloutGate{afterClusters(1)},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.Succeeded), st("w2", rolloutsdk.ToApply), st("w3", rolloutsdk.ToApply)},
			toRollout:   []string{"w2"},
			wantAllowed: nil, wantAwaiting: "first",
		},
		"afterClusters not reached and nothing held: no wait": {
			gates:       []workv1alpha1.RolloutGate{afterClusters(2)},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.Succeeded), st("w2", rolloutsdk.ToApply), st("w3", rolloutsdk.ToApply)},
			toRollout:   []string{"w2"},
			wantAllowed: []string{"w2"},
		},
		"an approved gate holds nothing": {
			gates:       []workv1alpha1.RolloutGate{afterClusters(1)},
			approved:    []string{"first"},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.Succeeded), st("w2", rolloutsdk.ToApply), st("w3", rolloutsdk.ToApply)},
			toRollout:   []string{"w2", "w3"},
			wantAllowed: []string{"w2", "w3"},
		},
		"clusters that carry the revision are not held (their slot is theirs)": {
			gates:       []workv1alpha1.RolloutGate{afterClusters(1)},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.Progressing), st("w2", rolloutsdk.ToApply)},
			toRollout:   []string{"w1", "w2"},
			wantAllowed: []string{"w1"}, wantAwaiting: "first",
		},
		"afterGroup: the canary group rolls out": {
			gates:       []workv1alpha1.RolloutGate{afterCanary},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("c1", rolloutsdk.ToApply), st("c2", rolloutsdk.ToApply), st("w1", rolloutsdk.ToApply)},
			toRollout:   []string{"c1", "c2"},
			wantAllowed: []string{"c1", "c2"},
		},
		"afterGroup: the canary done, the next group waits": {
			gates:       []workv1alpha1.RolloutGate{afterCanary},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("c1", rolloutsdk.Succeeded), st("c2", rolloutsdk.Succeeded), st("w1", rolloutsdk.ToApply), st("w2", rolloutsdk.ToApply)},
			toRollout:   []string{"w1", "w2"},
			wantAllowed: nil, wantAwaiting: "canary-ok",
		},
		"afterGroup approved: the next group goes": {
			gates:       []workv1alpha1.RolloutGate{afterCanary},
			approved:    []string{"canary-ok"},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("c1", rolloutsdk.Succeeded), st("c2", rolloutsdk.Succeeded), st("w1", rolloutsdk.ToApply), st("w2", rolloutsdk.ToApply)},
			toRollout:   []string{"w1", "w2"},
			wantAllowed: []string{"w1", "w2"},
		},
		"afterGroup by index, a later gate after the first approved": {
			gates:       []workv1alpha1.RolloutGate{afterCanary, {Name: "wave1-ok", AfterGroup: "1"}},
			approved:    []string{"canary-ok"},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("c1", rolloutsdk.Succeeded), st("w1", rolloutsdk.Succeeded), st("w2", rolloutsdk.Succeeded), st("w3", rolloutsdk.ToApply)},
			toRollout:   []string{"w3"},
			wantAllowed: nil, wantAwaiting: "wave1-ok",
		},
		"afterGroup naming no decided group holds nothing": {
			gates:       []workv1alpha1.RolloutGate{{Name: "x", AfterGroup: "gone"}},
			statuses:    []rolloutsdk.ClusterRolloutStatus{st("w1", rolloutsdk.ToApply)},
			toRollout:   []string{"w1"},
			wantAllowed: []string{"w1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			allowed := map[string]bool{}
			var step []rolloutsdk.ClusterRolloutStatus
			for _, c := range tc.toRollout {
				allowed[c] = true
				for _, s := range tc.statuses {
					if s.ClusterName == c {
						step = append(step, s)
					}
				}
			}
			isApproved := func(g string) bool {
				for _, a := range tc.approved {
					if a == g {
						return true
					}
				}
				return false
			}
			awaiting := holdAtGates(tc.gates, isApproved, tc.statuses, step, groups, allowed)
			var got []string
			for _, c := range tc.toRollout {
				if allowed[c] {
					got = append(got, c)
				}
			}
			if diff := cmp.Diff(tc.wantAllowed, got); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			if awaiting != tc.wantAwaiting {
				t.Errorf("awaiting = %q, want %q", awaiting, tc.wantAwaiting)
			}
		})
	}
}

func TestRecordApprovals(t *testing.T) {
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	pmw := func(annotation string, recorded ...workv1alpha1.RolloutApproval) *workv1alpha1.PlacementManifestWork {
		p := &workv1alpha1.PlacementManifestWork{}
		p.Spec.RolloutGates = []workv1alpha1.RolloutGate{{Name: "canary", AfterGroup: "canary"}, {Name: "wave1", AfterGroup: "1"}}
		if annotation != "" {
			p.Annotations = map[string]string{workv1alpha1.AnnotationApprove: annotation}
		}
		p.Status.Approvals = recorded
		return p
	}
	at := func(rev int64, gate string, t metav1.Time) workv1alpha1.RolloutApproval {
		return workv1alpha1.RolloutApproval{Revision: rev, Gate: gate, ApprovedAt: t}
	}
	cases := map[string]struct {
		pmw     *workv1alpha1.PlacementManifestWork
		current int64
		want    []workv1alpha1.RolloutApproval
	}{
		"no annotation": {pmw: pmw(""), current: 4},
		"an approval of the current revision is recorded, stamped now": {
			pmw: pmw("4/canary"), current: 4, want: []workv1alpha1.RolloutApproval{at(4, "canary", metav1.NewTime(now))},
		},
		"an approval of an earlier revision approves nothing": {pmw: pmw("3/canary"), current: 4},
		"a gate the spec does not have is not recorded":       {pmw: pmw("4/other"), current: 4},
		"a recorded approval keeps its time": {
			pmw: pmw("4/canary", at(4, "canary", earlier)), current: 4, want: []workv1alpha1.RolloutApproval{at(4, "canary", earlier)},
		},
		"several entries, malformed ones ignored": {
			pmw: pmw(" 4/canary, x/wave1, 4/, 4/wave1,-1/canary"), current: 4,
			want: []workv1alpha1.RolloutApproval{at(4, "canary", metav1.NewTime(now)), at(4, "wave1", metav1.NewTime(now))},
		},
		"revision unknown (0): nothing recorded": {pmw: pmw("0/canary"), current: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := recordApprovals(tc.pmw, tc.current, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("approvals (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("bounded, the oldest dropped", func(t *testing.T) {
		var recorded []workv1alpha1.RolloutApproval
		for i := int64(1); i <= maxApprovalsRecorded; i++ {
			recorded = append(recorded, at(i, "canary", earlier))
		}
		got := recordApprovals(pmw("21/canary", recorded...), 21, now)
		if len(got) != maxApprovalsRecorded || got[0].Revision != 2 || got[len(got)-1].Revision != 21 {
			t.Errorf("got %d approvals from revision %d to %d, want %d from 2 to 21", len(got), got[0].Revision, got[len(got)-1].Revision, maxApprovalsRecorded)
		}
	})
}
