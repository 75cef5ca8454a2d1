package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

func TestCluster(t *testing.T) {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	work := func(generation, observed int64, conds map[string]metav1.ConditionStatus, manifests ...*workv1.ManifestCondition) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
		for ty, s := range conds {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: ty, Status: s, ObservedGeneration: observed, Message: "m"})
		}
		for i, mc := range manifests {
			mc.ResourceMeta.Ordinal = int32(i)
			w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, *mc)
		}
		return w
	}
	applied := map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T}
	readyDeployment := func() *workv1.ManifestCondition {
		return status(T, map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3})
	}
	inputs := func(t *testing.T) []ManifestInput {
		return Inputs([]template.Manifest{parse(t, deploymentJSON), parse(t, configMapJSON)}, nil)
	}
	cases := map[string]struct {
		work        *workv1.ManifestWork
		unavailable string
		want        State
		reason      string
		applied     bool
	}{
		"no work yet":                            {want: Progressing, reason: workv1alpha1.ReasonWorkNotCreated},
		"no work, cluster unavailable":           {unavailable: "lease expired", want: Degraded, reason: workv1alpha1.ReasonClusterUnavailable},
		"healthy":                                {work: work(1, 1, applied, readyDeployment(), status(T, nil)), want: Healthy, applied: true},
		"healthy work on an unavailable cluster": {work: work(1, 1, applied, readyDeployment(), status(T, nil)), unavailable: "lease expired", want: Degraded, reason: workv1alpha1.ReasonClusterUnavailable, applied: true},
		"conditions of an old generation":        {work: work(2, 1, applied, readyDeployment(), status(T, nil)), want: Progressing, reason: workv1alpha1.ReasonWorkNotApplied},
		"apply failed":                           {work: work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: F}), want: Degraded, reason: workv1alpha1.ReasonApplyFailed},
		"work degraded":                          {work: work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkDegraded: T}), want: Degraded, reason: workv1alpha1.ReasonWorkDegraded, applied: true},
		"deployment not ready":                   {work: work(1, 1, applied, status(T, map[string]any{Generation: 1, ObservedGeneration: 1, ReadyReplicas: 0, UpdatedReplicas: 3, Replicas: 3}), status(T, nil)), want: Progressing, reason: workv1alpha1.ReasonManifestProgressing, applied: true},
		"applied, resources not yet found":       {work: work(1, 1, map[string]metav1.ConditionStatus{workv1.WorkApplied: T}, readyDeployment(), status(T, nil)), want: Progressing, reason: workv1alpha1.ReasonWorkNotAvailable, applied: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Cluster(ClusterInput{Work: tc.work, Unavailable: tc.unavailable, Manifests: inputs(t)})
			if got.State != tc.want || (tc.reason != "" && got.Reason != tc.reason) || got.Applied != tc.applied {
				t.Errorf("Cluster = %+v (applied %v), want %s %q (applied %v)", got.Verdict, got.Applied, tc.want, tc.reason, tc.applied)
			}
		})
	}
}

// TestClusterWorkDeleting: a work being deleted is on its way out with all it carries, so it is never
// available, however healthy its last report.
func TestClusterWorkDeleting(t *testing.T) {
	T := metav1.ConditionTrue
	deleting := func() *workv1.ManifestWork {
		now := metav1.Now()
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 1, DeletionTimestamp: &now}}
		for _, ty := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: ty, Status: T, ObservedGeneration: 1})
		}
		w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{*status(T, nil)}
		return w
	}
	cases := map[string]struct {
		unavailable string
		want        Verdict
	}{
		"deleting work, healthy report": {
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonWorkDeleting, Message: "the ManifestWork is being deleted"},
		},
		"deleting work on an unavailable cluster": {
			unavailable: "lease expired",
			want:        Verdict{State: Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: "lease expired"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Cluster(ClusterInput{Work: deleting(), Unavailable: tc.unavailable, Manifests: Inputs([]template.Manifest{parse(t, configMapJSON)}, nil)})
			if diff := cmp.Diff(tc.want, got.Verdict); diff != "" {
				t.Errorf("Cluster (-want +got):\n%s", diff)
			}
			if got.Applied {
				t.Error("a work being deleted counts as applied")
			}
		})
	}
}
