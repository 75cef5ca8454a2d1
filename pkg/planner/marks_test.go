package planner

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// TestComputeMarks: the marked manifests of each cluster's work carry its template hash, the others are
// delivered as they were, and clusters alike share one encoding.
func TestComputeMarks(t *testing.T) {
	p := pmw(9, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}))
	manifests := mustParse(t, p)
	hashes := map[string]string{"a": "h1", "b": "h1", "c": "h2"}
	marks := &Marks{Indexes: map[int]bool{1: true}, TemplateHash: func(c string) string { return hashes[c] }}
	plan, err := Compute(p, manifests, Input{Clusters: []string{"a", "b", "c"}, Marks: marks})
	if err != nil {
		t.Fatal(err)
	}
	unmarked, err := Compute(p, manifests, Input{Clusters: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "b", "c"} {
		if diff := cmp.Diff(string(unmarked.Manifests[c][0].Raw), string(plan.Manifests[c][0].Raw)); diff != "" {
			t.Errorf("%s: the unmarked ConfigMap changed (-want +got):\n%s", c, diff)
		}
		obj := map[string]any{}
		if err := json.Unmarshal(plan.Manifests[c][1].Raw, &obj); err != nil {
			t.Fatal(err)
		}
		meta := obj["metadata"].(map[string]any)
		if got := meta["annotations"].(map[string]any)[workv1alpha1.AnnotationTemplateHash]; got != hashes[c] {
			t.Errorf("%s: the Deployment's marker is %v, want %s", c, got, hashes[c])
		}
		if got := obj["spec"].(map[string]any)["replicas"]; got != float64(3) {
			t.Errorf("%s: replicas %v, want its share 3", c, got)
		}
		delete(meta, "annotations")
		want := map[string]any{}
		if err := json.Unmarshal(unmarked.Manifests[c][1].Raw, &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, obj); diff != "" {
			t.Errorf("%s: the marked Deployment differs by more than its marker (-want +got):\n%s", c, diff)
		}
	}
	if &plan.Manifests["a"][1].Raw[0] != &plan.Manifests["b"][1].Raw[0] {
		t.Errorf("clusters a and b, alike, got two encodings of the marked Deployment")
	}
}
