package kubectlpmw

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestPlanApproval(t *testing.T) {
	pmw := func(annotation, awaiting string, recorded ...workv1alpha1.RolloutApproval) *workv1alpha1.PlacementManifestWork {
		p := &workv1alpha1.PlacementManifestWork{}
		p.Name = "web"
		p.Spec.RolloutGates = []workv1alpha1.RolloutGate{{Name: "canary", AfterGroup: "canary"}, {Name: "first", AfterClusters: ptr.To[int32](1)}}
		if annotation != "" {
			p.Annotations = map[string]string{workv1alpha1.AnnotationApprove: annotation}
		}
		p.Status.CurrentRevision = &workv1alpha1.RevisionReference{Revision: 4, Name: "web-abc"}
		p.Status.Rollout = &workv1alpha1.RolloutStatus{AwaitingApproval: awaiting}
		p.Status.Approvals = recorded
		return p
	}
	cases := map[string]struct {
		pmw      *workv1alpha1.PlacementManifestWork
		gate     string
		revision int64
		want     Approval
		wantErr  string
	}{
		"the gate the rollout waits at, for the current revision": {
			pmw: pmw("", "canary"), want: Approval{Revision: 4, Gate: "canary", Value: "4/canary"},
		},
		"entries of older revisions are dropped, the current ones kept": {
			pmw: pmw("3/canary,4/first", "canary"), want: Approval{Revision: 4, Gate: "canary", Value: "4/first,4/canary"},
		},
		"ahead of time, for a named revision": {
			pmw: pmw("", ""), gate: "first", revision: 5, want: Approval{Revision: 5, Gate: "first", Value: "5/first"},
		},
		"already in the annotation": {
			pmw: pmw("4/canary", "canary"), want: Approval{Revision: 4, Gate: "canary", Already: true},
		},
		"already recorded by the manager": {
			pmw: pmw("", "canary", workv1alpha1.RolloutApproval{Revision: 4, Gate: "canary"}), want: Approval{Revision: 4, Gate: "canary", Already: true},
		},
		"nothing waits and no gate named": {pmw: pmw("", ""), wantErr: "waits at no gate now; name one with --gate (canary, first)"},
		"an unknown gate":                 {pmw: pmw("", ""), gate: "nope", wantErr: `has no rollout gate "nope" (its gates: canary, first)`},
		"no gates at all": {
			pmw: &workv1alpha1.PlacementManifestWork{}, wantErr: "has no rollout gates",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PlanApproval(tc.pmw, tc.gate, tc.revision)
			if tc.wantErr != "" {
				var ee *exitError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ee) || ee.code != ExitUsage {
					t.Fatalf("err = %v, want a usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("approval (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApprovePatch(t *testing.T) {
	got := string(ApprovePatch("4/canary", "123"))
	want := `{"metadata":{"annotations":{"work.open-cluster-management.io/approve":"4/canary"},"resourceVersion":"123"}}`
	if got != want {
		t.Errorf("patch = %s, want %s", got, want)
	}
}
