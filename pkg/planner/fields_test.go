package planner

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// rayKind stands in for a user's interpreter of a kind with two replica fields.
type rayKind struct{}

func (rayKind) Name() string                                      { return "ResourceInterpreter ray" }
func (rayKind) ReplicaPaths() []string                            { return []string{".spec.head", ".spec.workers"} }
func (rayKind) FeedbackPaths(template.Manifest) []workv1.JsonPath { return nil }
func (rayKind) Health(health.ManifestInput, health.Feedback) (health.Verdict, bool) {
	return health.Verdict{}, false
}
func (rayKind) Aggregation() []workv1alpha1.InterpreterAggregation { return nil }
func (rayKind) Retain() []string                                   { return nil }

// TestSplitFieldsFromTheInterpreter: a Split without fieldPath divides the fields the kind's interpreter
// names, each with the same weights, and records every field's shares and division; a fieldPath still wins;
// a built-in kind keeps its own field.
func TestSplitFieldsFromTheInterpreter(t *testing.T) {
	kinds := health.NewInterpreters()
	kinds.Add(schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}, nil, rayKind{})
	ray := `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r","namespace":"default"},"spec":{"head":2,"workers":9}}`
	job := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},"spec":{"parallelism":4}}`
	weighted := workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{
		{ClusterName: "c1", Weight: 2}, {ClusterName: "c2", Weight: 1},
	}}
	cases := map[string]struct {
		manifest  string
		name      string
		kind      string
		split     workv1alpha1.SplitStrategy
		wantShare map[string]map[string]int32
	}{
		"both fields, same weights": {manifest: ray, name: "r", kind: "RayCluster", split: weighted, wantShare: map[string]map[string]int32{
			"c1": {"RayCluster.ray.io default/r .spec.head": 1, "RayCluster.ray.io default/r .spec.workers": 6},
			"c2": {"RayCluster.ray.io default/r .spec.head": 1, "RayCluster.ray.io default/r .spec.workers": 3},
		}},
		"fieldPath wins": {manifest: ray, name: "r", kind: "RayCluster", split: workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: ".spec.head"}, wantShare: map[string]map[string]int32{
			"c1": {"RayCluster.ray.io default/r .spec.head": 1}, "c2": {"RayCluster.ray.io default/r .spec.head": 1},
		}},
		"a Job divides its parallelism": {manifest: job, name: "j", kind: "Job", split: workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}, wantShare: map[string]map[string]int32{
			"c1": {"Job.batch default/j .spec.parallelism": 2}, "c2": {"Job.batch default/j .spec.parallelism": 2},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			split := tc.split
			p := &workv1alpha1.PlacementManifestWork{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid"},
				Spec: workv1alpha1.PlacementManifestWorkSpec{
					ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
						{RawExtension: runtime.RawExtension{Raw: []byte(tc.manifest)}},
					}}},
					DistributionStrategy: []workv1alpha1.DistributionStrategy{{Name: tc.name, Namespace: "default", Kind: tc.kind, Type: workv1alpha1.DistributionSplit, Split: &split}},
				},
			}
			manifests, err := ParseTemplate(p)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Compute(p, manifests, Input{Clusters: []string{"c1", "c2"}, Kinds: kinds})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantShare, plan.Shares); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			// Each cluster's manifest carries all of its shares.
			for cluster, ms := range plan.Manifests {
				obj := map[string]any{}
				if err := json.Unmarshal(ms[0].Raw, &obj); err != nil {
					t.Fatal(err)
				}
				for key, want := range tc.wantShare[cluster] {
					field := key[strings.LastIndex(key, " ")+1:]
					got := obj["spec"].(map[string]any)[strings.TrimPrefix(field, ".spec.")]
					if n, ok := got.(float64); !ok || int32(n) != want {
						t.Errorf("cluster %s: %s = %v, want %d", cluster, field, got, want)
					}
				}
			}
			if len(plan.Splits) != len(plan.SplitKeys) || len(plan.Splits) != len(tc.wantShare["c1"]) {
				t.Errorf("splits = %d, split keys = %d, want one per field", len(plan.Splits), len(plan.SplitKeys))
			}
		})
	}
}

// reviser stands in for an interpreter whose webhook sets the replicas (ReviseReplica) in a list.
type reviser struct {
	rayKind
	err    error
	ignore bool
}

func (r reviser) ReviseReplicas(m template.Manifest, replicas int32) (map[string]any, bool, error) {
	if r.err != nil {
		return nil, false, r.err
	}
	if r.ignore {
		return nil, false, nil
	}
	obj := m.Object.DeepCopy().Object
	obj["spec"].(map[string]any)["groups"] = []any{map[string]any{"replicas": int64(replicas)}}
	return obj, true, nil
}

// TestReviseReplicas: a kind whose interpreter revises the replicas gets each cluster's manifest from it, with
// the split fields set on top; its failure keeps what was delivered (an InvalidError); no revision, the fields.
func TestReviseReplicas(t *testing.T) {
	ray := `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r","namespace":"default"},"spec":{"head":2,"workers":9}}`
	balance := workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: ".spec.head"}
	cases := map[string]struct {
		kind       health.Interpreter
		wantGroups bool
		wantErr    string
	}{
		"revised":             {kind: reviser{}, wantGroups: true},
		"not revised: fields": {kind: reviser{ignore: true}},
		"failed":              {kind: reviser{err: errors.New("webhook ReviseReplica: timed out")}, wantErr: workv1alpha1.ReasonInterpreterFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kinds := health.NewInterpreters()
			kinds.Add(schema.GroupKind{Group: "ray.io", Kind: "RayCluster"}, nil, tc.kind)
			p := &workv1alpha1.PlacementManifestWork{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid"},
				Spec: workv1alpha1.PlacementManifestWorkSpec{
					ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
						{RawExtension: runtime.RawExtension{Raw: []byte(ray)}},
					}}},
					DistributionStrategy: []workv1alpha1.DistributionStrategy{{Name: "r", Namespace: "default", Kind: "RayCluster", Type: workv1alpha1.DistributionSplit, Split: &balance}},
				},
			}
			manifests, err := ParseTemplate(p)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Compute(p, manifests, Input{Clusters: []string{"c1", "c2"}, Kinds: kinds})
			var invalid *InvalidError
			if tc.wantErr != "" {
				if !errors.As(err, &invalid) || invalid.Reason != tc.wantErr {
					t.Fatalf("error %v, want an InvalidError %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for cluster, ms := range plan.Manifests {
				obj := map[string]any{}
				if err := json.Unmarshal(ms[0].Raw, &obj); err != nil {
					t.Fatal(err)
				}
				spec := obj["spec"].(map[string]any)
				if spec["head"] != float64(1) {
					t.Errorf("cluster %s: head = %v, want its share 1", cluster, spec["head"])
				}
				if _, has := spec["groups"]; has != tc.wantGroups {
					t.Errorf("cluster %s: revised groups present = %v, want %v", cluster, has, tc.wantGroups)
				}
			}
		})
	}
}
