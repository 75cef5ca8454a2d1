package status

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

func integer(n int64) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Integer, Integer: &n} }

func outcome(cluster string, state health.State, reason string, applied bool, manifests ...health.ManifestResult) ClusterOutcome {
	return ClusterOutcome{Cluster: cluster, ClusterResult: health.ClusterResult{
		Verdict: health.Verdict{State: state, Reason: reason, Message: reason + " on " + cluster}, Applied: applied, Manifests: manifests,
	}}
}

func TestAggregate(t *testing.T) {
	manifests, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	dep := func(state health.State, ready int64) health.ManifestResult {
		return health.ManifestResult{Verdict: health.Verdict{State: state}, Feedback: health.Feedback{
			health.ReadyReplicas: integer(ready), health.Generation: integer(4),
		}}
	}
	got := Aggregate([]ClusterOutcome{
		outcome("c1", health.Healthy, "", true, dep(health.Healthy, 2)),
		outcome("c2", health.Progressing, workv1alpha1.ReasonManifestProgressing, true, dep(health.Progressing, 1)),
		outcome("c3", health.Degraded, workv1alpha1.ReasonClusterUnavailable, false),
		outcome("c0", health.Progressing, workv1alpha1.ReasonWorkNotCreated, false),
	}, manifests, nil, nil)

	want := Rollup{
		Summary: workv1alpha1.PlacedManifestWorkSummary{Total: 4, Applied: 2, Available: 1, Progressing: 2, Degraded: 1},
		Manifests: []workv1alpha1.ManifestSummary{{
			Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment",
			Healthy: 1, Progressing: 3,
			Feedback: []workv1alpha1.FeedbackSum{{Name: health.ReadyReplicas, Value: 3, Clusters: 2}},
		}},
		Unhealthy: []workv1alpha1.ClusterHealth{
			{Cluster: "c3", State: "Degraded", Reason: workv1alpha1.ReasonClusterUnavailable, Message: "ClusterUnavailable on c3"},
			{Cluster: "c0", State: "Progressing", Reason: workv1alpha1.ReasonWorkNotCreated, Message: "WorkNotCreated on c0"},
			{Cluster: "c2", State: "Progressing", Reason: workv1alpha1.ReasonManifestProgressing, Message: "ManifestProgressing on c2"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Aggregate (-want +got):\n%s", diff)
	}
}

// TestAggregateCarried: a manifest only some works carry (a dependency their overrides make their manifests
// reference) counts on those clusters only, whether they reported it or not, at the position their work has it.
func TestAggregateCarried(t *testing.T) {
	var raws []workv1.Manifest
	for _, doc := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings-eu","namespace":"shop"}}`,
	} {
		raws = append(raws, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(doc)}})
	}
	manifests, err := template.Parse(raws)
	if err != nil {
		t.Fatal(err)
	}
	healthy := health.ManifestResult{Verdict: health.Verdict{State: health.Healthy}}
	degraded := health.ManifestResult{Verdict: health.Verdict{State: health.Degraded}}
	us := outcome("us-1", health.Healthy, "", true, healthy, healthy)
	us.Carried = []int{0, 1, -1}
	eu := outcome("eu-1", health.Degraded, workv1alpha1.ReasonManifestDegraded, true, healthy, degraded)
	eu.Carried = []int{0, -1, 1}
	unreported := outcome("eu-2", health.Progressing, workv1alpha1.ReasonWorkNotApplied, false)
	unreported.Carried = []int{0, -1, 1}
	got := Aggregate([]ClusterOutcome{us, eu, unreported}, manifests, nil, nil).Manifests
	counts := map[string][3]int32{}
	for _, m := range got {
		counts[m.Name] = [3]int32{m.Healthy, m.Progressing, m.Degraded}
	}
	want := map[string][3]int32{"web": {2, 1, 0}, "settings": {1, 0, 0}, "settings-eu": {0, 1, 1}}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("healthy, progressing, degraded per manifest (-want +got):\n%s", diff)
	}
}

func TestAggregateBoundsUnhealthyClusters(t *testing.T) {
	var outcomes []ClusterOutcome
	for i := range 5000 {
		outcomes = append(outcomes, outcome(fmt.Sprintf("c%04d", i), health.Progressing, "R", false))
	}
	got := Aggregate(outcomes, nil, nil, nil)
	if len(got.Unhealthy) != MaxUnhealthyListed || got.UnhealthyNotListed != 5000-MaxUnhealthyListed {
		t.Errorf("listed %d and %d not listed, want %d and %d", len(got.Unhealthy), got.UnhealthyNotListed, MaxUnhealthyListed, 5000-MaxUnhealthyListed)
	}
	if got.Summary.Progressing != 5000 || got.Summary.Total != 5000 {
		t.Errorf("summary %+v", got.Summary)
	}
}
