package template

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// The fuzzers below run as ordinary tests on their seeds and on the corpus committed under
// testdata/fuzz/<FuzzName>; `go test -fuzz=FuzzParse ./pkg/template` explores further.

// manifestSeparator splits one fuzz input into several manifests, so a template of many manifests, some
// valid and some not, is explored too.
const manifestSeparator = "\x00"

// FuzzParse feeds arbitrary bytes to Parse as the manifests of a template, and distribution strategies built
// from arbitrary strings to MatchStrategies. Nothing may panic; a template that parses yields one Manifest per
// input manifest, in order, each with an ID and a name; and MatchStrategies accounts for every entry exactly
// once, either as the one manifest it applies to or as a problem.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}`), "web", "default", "apps", "Deployment")
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`+manifestSeparator+
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}`), "web", "default", "", "")
	f.Add([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web"}}`), "web", "", "", "Namespace")
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}`), "a", "", "", "")
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"name":"x"},"items":[]}`), "x", "", "", "")
	f.Add([]byte(`{"apiVersion":"/","kind":"X","metadata":{"name":"x","namespace":7}}`), "x", "", "", "X")
	f.Add([]byte(`{"apiVersion":"a/b/c","kind":"X","metadata":{"name":["x"]}}`), "x", "", "a", "X")
	f.Add([]byte(`{"kind":`), "", "", "", "")
	f.Add([]byte(`[1,2]`), "", "", "", "")
	f.Add([]byte(`null`), "", "", "", "")
	f.Add([]byte(`{}`+manifestSeparator), "", "", "", "")
	f.Add([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"n"},"data":{"k":"dg=="}}`+manifestSeparator+
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"n"}}`), "s", "n", "", "Secret")

	f.Fuzz(func(t *testing.T, data []byte, name, namespace, group, kind string) {
		parts := bytes.Split(data, []byte(manifestSeparator))
		manifests := make([]workv1.Manifest, 0, len(parts))
		for _, p := range parts {
			manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: p}})
		}
		parsed, err := Parse(manifests)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "manifest ") {
				t.Fatalf("Parse error %q does not name the manifest's position", err)
			}
			return
		}
		if len(parsed) != len(manifests) {
			t.Fatalf("Parse returned %d manifests for %d", len(parsed), len(manifests))
		}
		for i, m := range parsed {
			if m.Index != i || m.Object == nil {
				t.Fatalf("manifest %d: Index %d, Object %v", i, m.Index, m.Object)
			}
			if m.Object.GetName() == "" || m.GVK.Kind == "" || m.GVK.Version == "" {
				t.Fatalf("manifest %d parsed without a name, kind or version: %s", i, parts[i])
			}
			if id := m.ID(); !strings.HasPrefix(id, m.GVK.Kind) || !strings.HasSuffix(id, m.Object.GetName()) {
				t.Fatalf("manifest %d: ID %q does not name kind %q and name %q", i, id, m.GVK.Kind, m.Object.GetName())
			}
			if _, err := json.Marshal(m.Object.Object); err != nil {
				// The planner marshals every parsed manifest to write it; an object that parses must marshal.
				t.Fatalf("manifest %d parses but does not marshal: %v", i, err)
			}
		}

		// Entries naming each parsed manifest exactly, loosely (name and namespace only), and the fuzzed one.
		strategies := []workv1alpha1.DistributionStrategy{{Name: name, Namespace: namespace, Group: group, Kind: kind}}
		for _, m := range parsed {
			strategies = append(strategies,
				workv1alpha1.DistributionStrategy{Name: m.Object.GetName(), Namespace: m.Object.GetNamespace(), Group: m.GVK.Group, Kind: m.GVK.Kind},
				workv1alpha1.DistributionStrategy{Name: m.Object.GetName(), Namespace: m.Object.GetNamespace()})
		}
		byManifest, problems := MatchStrategies(parsed, strategies)
		accounted := make([]int, len(strategies))
		for idx, s := range byManifest {
			if idx < 0 || idx >= len(parsed) {
				t.Fatalf("MatchStrategies applied an entry to manifest %d of %d", idx, len(parsed))
			}
			if !Matches(*s, parsed[idx]) {
				t.Fatalf("entry %+v applied to manifest %s, which it does not match", *s, parsed[idx].ID())
			}
			for i := range strategies {
				if s == &strategies[i] {
					accounted[i]++
				}
			}
		}
		for _, p := range problems {
			if p.Entry < 0 || p.Entry >= len(strategies) || p.Message == "" {
				t.Fatalf("problem %+v names no entry", p)
			}
			accounted[p.Entry]++
		}
		for i, n := range accounted {
			// An entry matching exactly one manifest applies to it, unless a later entry matching the same
			// manifest replaced it; every other entry is a problem. So each is accounted for at most once, and
			// a problem entry never also applies.
			if n > 1 {
				t.Fatalf("entry %d (%+v) accounted for %d times", i, strategies[i], n)
			}
		}
	})
}

// FuzzIntField puts an arbitrary JSON value at an arbitrary field path of a manifest and reads it with
// IntField. Nothing may panic; a value IntField accepts is a non-negative int32 equal to the JSON number; and
// SetIntField followed by IntField returns what was set, without modifying the input.
func FuzzIntField(f *testing.F) {
	f.Add(".spec.replicas", []byte(`3`), int32(5))
	f.Add(".spec.replicas", []byte(`0`), int32(0))
	f.Add(".spec.workers.count", []byte(`12`), int32(1))
	f.Add(".spec.replicas", []byte(`-1`), int32(2))
	f.Add(".spec.replicas", []byte(`1.5`), int32(2))
	f.Add(".spec.replicas", []byte(`3.0`), int32(2))
	f.Add(".spec.replicas", []byte(`3000000000`), int32(2))
	f.Add(".spec.replicas", []byte(`2147483647`), int32(math.MaxInt32))
	f.Add(".spec.replicas", []byte(`1e3`), int32(2))
	f.Add(".spec.replicas", []byte(`"3"`), int32(2))
	f.Add(".spec.replicas", []byte(`null`), int32(2))
	f.Add(".spec.replicas", []byte(`{"a":1}`), int32(2))
	f.Add(".spec.replicas", []byte(`[1]`), int32(2))
	f.Add(".spec", []byte(`true`), int32(2))
	f.Add("spec.replicas", []byte(`3`), int32(2))
	f.Add(".spec..replicas", []byte(`3`), int32(2))
	f.Add(".", []byte(`3`), int32(2))
	f.Add(".metadata.name", []byte(`3`), int32(2))
	f.Add(".kind", []byte(`3`), int32(2))

	f.Fuzz(func(t *testing.T, path string, value []byte, set int32) {
		if !json.Valid(value) {
			return
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "x"}}
		if keys, err := FieldPathKeys(path); err == nil {
			// Nest the value at the path, leaving apiVersion, kind and metadata.name as they are unless the
			// path replaces them (then Parse may reject the manifest, which is fine).
			var node any = json.RawMessage(value)
			for i := len(keys) - 1; i >= 1; i-- {
				node = map[string]any{keys[i]: node}
			}
			if existing, ok := obj[keys[0]].(map[string]any); ok {
				if nested, ok := node.(map[string]any); ok {
					for k, v := range nested {
						existing[k] = v
					}
					node = existing
				}
			}
			obj[keys[0]] = node
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			return
		}
		parsed, err := Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
		if err != nil {
			return
		}
		m := parsed[0].Object
		before, err := json.Marshal(m.Object)
		if err != nil {
			t.Fatal(err)
		}

		got, err := IntField(m, path)
		if err == nil {
			var want float64
			if jerr := json.Unmarshal(value, &want); jerr != nil {
				t.Fatalf("IntField(%q) accepted %s, which is not a number", path, value)
			}
			if got < 0 || float64(got) != want {
				t.Fatalf("IntField(%q) of %s = %d", path, value, got)
			}
		} else if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), strconv.Quote(path)) {
			t.Fatalf("IntField(%q) error %q does not name the path", path, err)
		}

		if err != nil || set < 0 {
			// SetIntField writes a field IntField accepted, with a share (never negative).
			return
		}
		out, err := SetIntField(m, path, set)
		if err != nil {
			t.Fatalf("SetIntField(%q, %d) after IntField accepted the field: %v", path, set, err)
		}
		again, err := IntField(out, path)
		if err != nil || again != set {
			t.Fatalf("SetIntField(%q, %d) then IntField = %d, %v", path, set, again, err)
		}
		after, err := json.Marshal(m.Object)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("SetIntField modified its input:\n%s\n%s", before, after)
		}
	})
}

// TestIntFieldHugeNumberMessage keeps what FuzzIntField found: a JSON number beyond int64 (1e19,
// 9223372036854775808) decodes as a float64, whose conversion to int64 is implementation-defined (math.MinInt64
// on amd64), so IntField must check the range before converting or it calls a huge value negative.
func TestIntFieldHugeNumberMessage(t *testing.T) {
	for _, v := range []string{"1e19", "9223372036854775808", "1e300"} {
		ms, err := Parse(raw(`{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},"spec":{"replicas":` + v + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = IntField(ms[0].Object, ".spec.replicas")
		if err == nil || strings.Contains(err.Error(), "negative") || !strings.Contains(err.Error(), "more than") {
			t.Errorf("IntField of %s: error %v, want one saying it is more than %d", v, err, math.MaxInt32)
		}
	}
}
