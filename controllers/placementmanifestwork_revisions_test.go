package controllers

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

func TestRevisionStatus(t *testing.T) {
	rev := func(n int64, name string) *workv1alpha1.RevisionReference {
		return &workv1alpha1.RevisionReference{Revision: n, Name: name}
	}
	complete := &metav1.Condition{Type: workv1alpha1.ConditionRolloutComplete, Status: metav1.ConditionTrue}
	progressing := &metav1.Condition{Type: workv1alpha1.ConditionRolloutComplete, Status: metav1.ConditionFalse}
	all := workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 2}
	plan := &revision.Plan{Current: *rev(3, "b"), Numbers: map[string]int64{"a": 2, "b": 3}}
	cases := map[string]struct {
		before             workv1alpha1.PlacementManifestWorkStatus
		plan               *revision.Plan
		err                error
		rollout            *metav1.Condition
		summary            workv1alpha1.PlacedManifestWorkSummary
		current, completed *workv1alpha1.RevisionReference
	}{
		"no plan keeps both": {
			before:  workv1alpha1.PlacementManifestWorkStatus{CurrentRevision: rev(1, "a"), CompletedRevision: rev(1, "a")},
			current: rev(1, "a"), completed: rev(1, "a"),
		},
		"a failed revision write keeps both": {
			before: workv1alpha1.PlacementManifestWorkStatus{CurrentRevision: rev(1, "a"), CompletedRevision: rev(1, "a")},
			plan:   plan, err: errors.New("forbidden"), rollout: complete, summary: all,
			current: rev(1, "a"), completed: rev(1, "a"),
		},
		"rolling out: the completed revision stays, with its number as renumbered": {
			before: workv1alpha1.PlacementManifestWorkStatus{CurrentRevision: rev(1, "a"), CompletedRevision: rev(1, "a")},
			plan:   plan, rollout: progressing, summary: all,
			current: rev(3, "b"), completed: rev(2, "a"),
		},
		"every cluster carries it but one is not available yet": {
			before: workv1alpha1.PlacementManifestWorkStatus{CompletedRevision: rev(2, "a")},
			plan:   plan, rollout: complete, summary: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Available: 1, Progressing: 1},
			current: rev(3, "b"), completed: rev(2, "a"),
		},
		"rolled out and available everywhere: completed": {
			before: workv1alpha1.PlacementManifestWorkStatus{CompletedRevision: rev(2, "a")},
			plan:   plan, rollout: complete, summary: all,
			current: rev(3, "b"), completed: rev(3, "b"),
		},
		"no cluster: nothing completes": {
			plan: plan, rollout: complete,
			current: rev(3, "b"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := tc.before
			st.PlacedManifestWorkSummary = tc.summary
			obs := &observation{}
			obs.revisionPlan, obs.revisionError = tc.plan, tc.err
			revisionStatus(&st, obs, tc.rollout)
			if diff := cmp.Diff(tc.current, st.CurrentRevision); diff != "" {
				t.Errorf("currentRevision (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.completed, st.CompletedRevision); diff != "" {
				t.Errorf("completedRevision (-want +got):\n%s", diff)
			}
		})
	}
}
