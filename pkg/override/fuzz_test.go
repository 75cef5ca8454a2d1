package override

import (
	"encoding/json"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The fuzzer runs as an ordinary test on its seeds and on the corpus committed under testdata/fuzz/FuzzApply;
// `go test -fuzz=FuzzApply ./pkg/override` explores further.

// Flags of FuzzApply.
const (
	fuzzExpression1 = 1 << iota // the first patch's value is a CEL expression
	fuzzExpression2             // the second patch's value is a CEL expression
	fuzzImage                   // the override rewrites images too (registry and tag)
	fuzzSplit                   // .spec.replicas is a split field
	fuzzSecond                  // a second override, on every cluster, with the second patch
)

var fuzzOps = []workv1alpha1.OverridePatchOp{workv1alpha1.OverridePatchAdd, workv1alpha1.OverridePatchReplace,
	workv1alpha1.OverridePatchRemove, "move", "copy", "test", ""}

// FuzzApply applies arbitrary patches (any op, path and value, literal or CEL) and image rewrites to arbitrary
// manifests. Compile may refuse them; CheckTemplate, Resolve, Key, Apply and Render must not panic; Apply must
// not modify its manifest; a result must keep the manifest's apiVersion, kind, name, namespace and split
// field, and encode as JSON; a failure names the override and the cluster; and equal inputs give equal keys.
func FuzzApply(f *testing.F) {
	f.Add(web, uint8(0), "/metadata/labels/x", `"y"`, uint8(1), "/spec/replicas", `5`, uint8(fuzzSplit|fuzzSecond))
	f.Add(web, uint8(0), "/spec/template/spec/containers/0/env/-", `{"name":"N","value":"v"}`, uint8(2), "/spec/template/spec/containers/1", ``, uint8(fuzzImage))
	f.Add(cfg, uint8(0), "/data/cluster", `cluster.name + "-" + cluster.labels["region"]`, uint8(1), "/data/k", `cluster.shares`, uint8(fuzzExpression1|fuzzExpression2))
	f.Add(cfg, uint8(1), "/metadata/name", `"other"`, uint8(0), "/metadata/namespace", `"x"`, uint8(0))
	f.Add(cfg, uint8(0), "/data/~1~0", `[1,2.5,null,{"a":true}]`, uint8(3), "/data/k", `"v"`, uint8(fuzzSecond))
	f.Add(web, uint8(2), "/spec", ``, uint8(0), "/spec", `{"replicas":2}`, uint8(fuzzSplit|fuzzSecond))
	f.Add(`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"image":"nginx@sha256:0123456789abcdef0123456789abcdef"}]}}}}}}`,
		uint8(0), "/spec/suspend", `true`, uint8(0), "/x", `1`, uint8(fuzzImage))
	f.Add(ray, uint8(0), "/spec/headGroupSpec/template/spec/containers/0/image", `"ray:2"`, uint8(0), "/x", `1`, uint8(fuzzImage))
	f.Add(nightly, uint8(1), "/spec/schedule", `"@daily"`, uint8(0), "/x", `1`, uint8(fuzzImage))
	f.Fuzz(func(t *testing.T, doc string, op1 uint8, path1, value1 string, op2 uint8, path2, value2 string, flags uint8) {
		ms, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(doc)}}})
		if err != nil {
			return
		}
		m := ms[0]
		patch := func(op uint8, path, value string, expr bool) workv1alpha1.OverridePatch {
			p := workv1alpha1.OverridePatch{Op: fuzzOps[int(op)%len(fuzzOps)], Path: path}
			switch {
			case value == "":
			case expr:
				p.Expression = value
			default:
				p.Value = &workv1alpha1.JSON{Raw: []byte(value)}
			}
			return p
		}
		overrides := []workv1alpha1.ClusterOverride{{Name: "first", Patches: []workv1alpha1.OverridePatch{
			patch(op1, path1, value1, flags&fuzzExpression1 != 0)}}}
		second := patch(op2, path2, value2, flags&fuzzExpression2 != 0)
		if flags&fuzzSecond != 0 {
			overrides = append(overrides, workv1alpha1.ClusterOverride{Name: "second", Patches: []workv1alpha1.OverridePatch{second}})
		} else {
			overrides[0].Patches = append(overrides[0].Patches, second)
		}
		if flags&fuzzImage != 0 {
			overrides[0].Image = &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Value: "mirror.example.com/hub"},
				Tag: &workv1alpha1.OverrideValue{Expression: `cluster.name`}}
		}
		var split []string
		if flags&fuzzSplit != 0 {
			split = []string{".spec.replicas"}
		}
		set, err := Compile(overrides)
		if err != nil {
			var problems Problems
			if !errors.As(err, &problems) {
				t.Fatalf("Compile: %v is not Problems", err)
			}
			return
		}
		_ = set.CheckTemplate(ms, map[int][]string{m.Index: split}) // problems are values; it must only not panic
		c := Cluster{Name: "c1", Labels: map[string]string{"region": "eu"}, Shares: map[string]int32{webKey: 2}}
		if first, again := set.Key(c), set.Key(c); first != again {
			t.Fatal("Key is not deterministic")
		}
		before := m.Object.DeepCopy()
		obj, outcomes, err := set.Apply(m, c, split)
		if !equalJSON(t, before.Object, m.Object.Object) {
			t.Fatal("Apply modified its manifest")
		}
		if err != nil {
			var ce *ClusterError
			if !errors.As(err, &ce) || obj != nil || len(ce.Failures) == 0 || ce.Cluster != "c1" {
				t.Fatalf("Apply failed with %v (%T) and result %v", err, err, obj)
			}
			for _, f := range ce.Failures {
				if f.Cluster != "c1" || (f.Override != "first" && f.Override != "second") || f.Message == "" {
					t.Fatalf("failure %+v does not name the override, the cluster and what failed", f)
				}
			}
			return
		}
		if len(outcomes) != len(overrides) {
			t.Fatalf("%d outcomes for %d overrides", len(outcomes), len(overrides))
		}
		for _, keys := range append([][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"}}, fuzzSplitKeys(split)...) {
			a, foundA, _ := unstructured.NestedFieldNoCopy(before.Object, keys...)
			b, foundB, _ := unstructured.NestedFieldNoCopy(obj.Object, keys...)
			if foundA != foundB || !equalJSON(t, a, b) {
				t.Fatalf("the result changed %v: %v to %v", keys, a, b)
			}
		}
		if _, err := json.Marshal(obj.Object); err != nil {
			t.Fatalf("the result does not encode: %v", err)
		}
		_ = obj.DeepCopy() // panics on values that are not JSON's
		if _, _, err := Render(set, ms, c, map[int][]string{m.Index: split}); err != nil {
			t.Fatalf("Apply succeeded, Render failed: %v", err)
		}
	})
}

func fuzzSplitKeys(split []string) [][]string {
	var out [][]string
	for _, s := range split {
		keys, _ := template.FieldPathKeys(s)
		out = append(out, keys)
	}
	return out
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		t.Fatalf("not JSON: %v, %v", errA, errB)
	}
	return string(ja) == string(jb)
}
