package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// work is a ManifestWork of the given generation whose conditions were each reported for generation observed.
func work(generation, observed int64, conds map[string]metav1.ConditionStatus) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
	for t, s := range conds {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: t, Status: s, ObservedGeneration: observed})
	}
	return w
}

func TestSummarize(t *testing.T) {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	cases := map[string]struct {
		total int
		works []*workv1.ManifestWork
		want  workv1alpha1.PlacedManifestWorkSummary
	}{
		"no works yet": {total: 3, want: workv1alpha1.PlacedManifestWorkSummary{Total: 3}},
		"each condition counted": {
			total: 3,
			works: []*workv1.ManifestWork{
				work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T}),
				work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkProgressing: T}),
				work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: F, workv1.WorkDegraded: T}),
			},
			want: workv1alpha1.PlacedManifestWorkSummary{Total: 3, Applied: 2, Available: 1, Progressing: 1, Degraded: 1},
		},
		"conditions of an older generation do not count": {
			total: 2,
			works: []*workv1.ManifestWork{
				work(2, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T, workv1.WorkDegraded: T}),
				work(2, 2, map[string]metav1.ConditionStatus{workv1.WorkApplied: T}),
			},
			want: workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Summarize(tc.total, tc.works)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}
