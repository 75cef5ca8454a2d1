package override

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// applied applies one override to web for eu and returns the fields asked for, or the failure messages.
type applyCase struct {
	overrides []workv1alpha1.ClusterOverride
	cluster   *Cluster // eu when nil
	doc       string   // web when empty
	// dependency makes the manifest one that propagateDependencies delivers beside the template's.
	dependency bool
	split      []string
	fields     map[string][]string // name -> keys to read from the result
	want       map[string]string
	failures   []string // Failure.Message, in order
}

func runApply(t *testing.T, tc applyCase) {
	t.Helper()
	set := mustCompile(t, tc.overrides...)
	c := eu
	if tc.cluster != nil {
		c = *tc.cluster
	}
	doc := tc.doc
	if doc == "" {
		doc = web
	}
	m := manifest(t, doc)
	m.Dependency = tc.dependency
	before := m.Object.DeepCopy()
	obj, outcomes, err := set.Apply(m, c, tc.split)
	if diff := cmp.Diff(before.Object, m.Object.Object); diff != "" {
		t.Errorf("Apply modified its manifest (-before +after):\n%s", diff)
	}
	var failures []string
	if err != nil {
		var ce *ClusterError
		if !errors.As(err, &ce) {
			t.Fatalf("Apply: %v is not a *ClusterError", err)
		}
		for _, f := range ce.Failures {
			if f.Cluster != c.Name || f.Manifest != m.ID() && f.Manifest != "" {
				t.Errorf("failure %+v does not name cluster %s and manifest %s", f, c.Name, m.ID())
			}
			failures = append(failures, f.Message)
		}
		if obj != nil {
			t.Errorf("Apply failed and returned a result")
		}
		nFailed := 0
		for _, o := range outcomes {
			if o.Failure != nil {
				nFailed++
			}
		}
		if nFailed != len(ce.Failures) {
			t.Errorf("%d outcomes failed, %d failures", nFailed, len(ce.Failures))
		}
	}
	if diff := cmp.Diff(tc.failures, failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if obj == nil {
		return
	}
	got := map[string]string{}
	for name, keys := range tc.fields {
		got[name] = field(t, obj.Object, keys...)
	}
	if diff := cmp.Diff(tc.want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

var (
	containers = []string{"spec", "template", "spec", "containers"}
	webImage   = []string{"spec", "template", "spec", "containers", "0", "image"}
)

func TestApplyPatches(t *testing.T) {
	env := []string{"spec", "template", "spec", "containers"}
	cases := map[string]applyCase{
		"add a member and an item, replace and remove": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				add("/metadata/labels/tier", `"front"`),
				add("/spec/template/spec/containers/0/env/-", `{"name":"B","value":"b"}`),
				replace("/spec/template/spec/containers/0/env/0/value", `"z"`),
				remove("/spec/template/spec/containers/1"),
				add("/metadata/labels/a~1b", `"slash"`),
			)},
			fields: map[string][]string{"labels": {"metadata", "labels"}, "containers": env},
			want: map[string]string{
				"labels":     `{"a/b":"slash","app":"web","tier":"front"}`,
				"containers": `[{"env":[{"name":"A","value":"z"},{"name":"B","value":"b"}],"image":"registry.example.com/team/web:1.2","name":"web"}]`,
			},
		},
		"values of every JSON type": {
			doc: cfg,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				add("/data/s", `"x"`), add("/data/n", `1.5`), add("/data/i", `7`), add("/data/b", `true`),
				add("/data/z", `null`), add("/data/o", `{"k":[1,"2"]}`), add("/data/l", `[]`))},
			fields: map[string][]string{"data": {"data"}},
			want:   map[string]string{"data": `{"b":true,"i":7,"k":"v","l":[],"n":1.5,"o":{"k":[1,"2"]},"s":"x","z":null}`},
		},
		"add to a missing parent fails for this manifest": {
			doc:       cfg,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", add("/data/k2", `"ok"`), add("/metadata/annotations/x", `"y"`))},
			failures:  []string{`patches[1] (add /metadata/annotations/x): add operation does not apply: doc is missing path: "/metadata/annotations/x": missing value`},
		},
		"replace and remove of a missing value fail": {
			doc:       cfg,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", replace("/data/gone", `1`)), overrideWith("b", remove("/spec"))},
			failures: []string{
				`patches[0] (replace /data/gone): replace operation does not apply: doc is missing key: /data/gone: missing value`,
				`patches[0] (remove /spec): error in remove for path: '/spec': unable to remove nonexistent key: spec: missing value`,
			},
		},
		"no negative indexes": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", remove("/spec/template/spec/containers/-1"))},
			failures:  []string{`patches[0] (remove /spec/template/spec/containers/-1): error in remove for path: '/spec/template/spec/containers/-1': Unable to access invalid index: -1: invalid index referenced`},
		},
		"an override without manifests leaves a propagated dependency alone": {
			doc: cfg, dependency: true,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", add("/spec/template/spec/containers/0/env/-", `{"name":"B","value":"b"}`))},
			fields:    map[string][]string{"data": {"data"}},
			want:      map[string]string{"data": `{"k":"v"}`},
		},
		"an override that names a propagated dependency patches it": {
			doc: cfg, dependency: true,
			overrides: []workv1alpha1.ClusterOverride{{Name: "a", Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}},
				Patches: []workv1alpha1.OverridePatch{add("/data/region", `"eu"`)}}},
			fields: map[string][]string{"data": {"data"}},
			want:   map[string]string{"data": `{"k":"v","region":"eu"}`},
		},
		"an override that selects other manifests": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "a", Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}},
				Patches: []workv1alpha1.OverridePatch{remove("/spec")}}},
			fields: map[string][]string{"replicas": {"spec", "replicas"}},
			want:   map[string]string{"replicas": "2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runApply(t, tc) })
	}
}

func TestApplyExpressions(t *testing.T) {
	add := workv1alpha1.OverridePatchAdd
	cases := map[string]applyCase{
		"string, number, object and list results": {
			doc: cfg,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				computed(add, "/data/image", `"registry-" + cluster.labels["region"] + ".example.com/web:1.2"`),
				computed(add, "/data/name", `cluster.name`),
				computed(add, "/data/share", `cluster.shares["`+webKey+`"] * 2`),
				computed(add, "/data/half", `double(cluster.shares["`+webKey+`"]) / 2.0`),
				computed(add, "/data/u", `3u`),
				computed(add, "/data/obj", `{"region": cluster.labels.?region.orValue("none"), "cloud": cluster.claims["platform.open-cluster-management.io"], "n": null}`),
				computed(add, "/data/list", `cluster.labels.map(k, k).sort()`),
				computed(add, "/data/none", `cluster.labels.?zone.orValue("default")`),
				computed(add, "/data/null", `null`), // what value: null cannot say: the API server drops it
			)},
			fields: map[string][]string{"data": {"data"}},
			want: map[string]string{"data": `{"half":1.5,"image":"registry-eu.example.com/web:1.2","k":"v","list":["region","size"],"name":"eu-1",` +
				`"none":"default","null":null,"obj":{"cloud":"AWS","n":null,"region":"eu"},"share":6,"u":3}`},
		},
		"a missing key fails this cluster": {
			doc:       cfg,
			cluster:   &Cluster{Name: "bare"},
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", computed(add, "/data/r", `cluster.labels["region"]`))},
			failures:  []string{"patches[0].expression: no such key: region"},
		},
		"results that are not JSON": {
			doc: cfg,
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("a", computed(add, "/data/r", `dyn(duration("1s"))`)),
				overrideWith("b", computed(add, "/data/r", `dyn({1: "x"})`)),
				overrideWith("c", computed(add, "/data/r", `1.0 / 0.0`)),
				overrideWith("d", computed(add, "/data/r", `dyn(18446744073709551615u)`)),
				overrideWith("e", computed(add, "/data/r", `dyn(cluster)`)),
			},
			failures: []string{
				"patches[0].expression: the result holds a google.protobuf.Duration, which is not JSON",
				"patches[0].expression: the result has a map key 1 of type int: JSON keys are strings",
				"patches[0].expression: the result holds +Inf, which JSON cannot hold",
				"patches[0].expression: the result holds 18446744073709551615u, more than a manifest's integers hold",
				"patches[0].expression: the result holds a override.Cluster, which is not JSON",
			},
		},
		"an evaluation over its loop steps": {
			doc: cfg,
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				computed(add, "/data/r", `[0,1,2,3,4,5,6,7,8,9].map(a, [0,1,2,3,4,5,6,7,8,9].map(b, [0,1,2,3,4,5,6,7,8,9].map(c, [0,1,2,3,4,5,6,7,8,9].map(d, [0,1,2,3,4,5,6,7,8,9].map(e, a+b+c+d+e))))).size()`))},
			failures: []string{fmt.Sprintf("patches[0].expression: takes more than %d loop steps: loop over fewer or shorter lists", maxIterations)},
		},
		"an expression fails for one override; the others still report": {
			doc:     cfg,
			cluster: &Cluster{Name: "bare"},
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("ok", computed(add, "/data/n", `cluster.name`)),
				overrideWith("bad", computed(add, "/data/r", `cluster.claims["x"]`)),
			},
			failures: []string{"patches[0].expression: no such key: x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runApply(t, tc) })
	}
}

func TestApplyImage(t *testing.T) {
	image := func(registry, repository, tag *workv1alpha1.OverrideValue) []workv1alpha1.ClusterOverride {
		return []workv1alpha1.ClusterOverride{{Name: "img", Image: &workv1alpha1.ImageOverride{Registry: registry, Repository: repository, Tag: tag}}}
	}
	images := map[string][]string{
		"init":    {"spec", "template", "spec", "initContainers", "0", "image"},
		"web":     webImage,
		"sidecar": {"spec", "template", "spec", "containers", "1", "image"},
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]applyCase{
		"registry only: tags and digests kept, images without a registry get one": {
			overrides: image(literal("mirror.example.com"), nil, nil),
			fields:    images,
			want: map[string]string{"init": `"mirror.example.com/busybox:1.36"`, "web": `"mirror.example.com/team/web:1.2"`,
				"sidecar": `"mirror.example.com/envoyproxy/envoy@` + digest + `"`},
		},
		"registry with a path prefix and a port": {
			overrides: image(literal("localhost:5000/hub"), nil, nil),
			fields:    images,
			want: map[string]string{"init": `"localhost:5000/hub/busybox:1.36"`, "web": `"localhost:5000/hub/team/web:1.2"`,
				"sidecar": `"localhost:5000/hub/envoyproxy/envoy@` + digest + `"`},
		},
		"tag only: the digest goes": {
			overrides: image(nil, nil, literal("2.0")),
			fields:    images,
			want:      map[string]string{"init": `"busybox:2.0"`, "web": `"registry.example.com/team/web:2.0"`, "sidecar": `"envoyproxy/envoy:2.0"`},
		},
		"repository, and registry and tag by expression": {
			overrides: image(expression(`cluster.labels["region"] + ".mirror.example.com"`), literal("team/api"), expression(`"1.2-" + cluster.name`)),
			fields:    images,
			want: map[string]string{"init": `"eu.mirror.example.com/team/api:1.2-eu-1"`, "web": `"eu.mirror.example.com/team/api:1.2-eu-1"`,
				"sidecar": `"eu.mirror.example.com/team/api:1.2-eu-1"`},
		},
		"a repository that would read as a registry": {
			overrides: image(nil, literal("my.team/web"), nil),
			failures:  []string{`image: .spec.template.spec.initContainers[0].image: image "busybox:1.36" would become "my.team/web:1.36", which reads as registry "my.team" and repository "web": set the registry too`},
		},
		"an expression that returns no registry": {
			overrides: image(expression(`cluster.name`), nil, nil),
			failures:  []string{`image.registry.expression: "eu-1" is not a registry host with a dot or a port, or localhost (mirror.example.com, registry:5000)`},
		},
		"a CronJob": {
			doc: `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c","namespace":"default"},"spec":{"schedule":"* * * * *",
"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}],"restartPolicy":"Never"}}}}}}`,
			overrides: image(literal("mirror.example.com"), nil, literal("1.25")),
			fields:    map[string][]string{"image": {"spec", "jobTemplate", "spec", "template", "spec", "containers", "0", "image"}},
			want:      map[string]string{"image": `"mirror.example.com/nginx:1.25"`},
		},
		"a Pod": {
			doc:       `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"nginx:1.0"}]}}`,
			overrides: image(nil, nil, literal("1.25")),
			fields:    map[string][]string{"image": {"spec", "containers", "0", "image"}},
			want:      map[string]string{"image": `"nginx:1.25"`},
		},
		"an Argo Rollout: spec.template.spec, as a Deployment's": {
			doc:       rollout,
			overrides: image(literal("mirror.example.com"), nil, nil),
			fields:    map[string][]string{"image": webImage},
			want:      map[string]string{"image": `"mirror.example.com/web:1"`},
		},
		"a custom kind shaped like a CronJob: spec.jobTemplate.spec.template.spec": {
			doc:       nightly,
			overrides: image(literal("mirror.example.com"), nil, literal("2")),
			fields: map[string][]string{
				"init":  {"spec", "jobTemplate", "spec", "template", "spec", "initContainers", "0", "image"},
				"image": {"spec", "jobTemplate", "spec", "template", "spec", "containers", "0", "image"}},
			want: map[string]string{"init": `"mirror.example.com/busybox:2"`, "image": `"mirror.example.com/report:2"`},
		},
		"a manifest without a pod template is left as it is": {
			doc:       cfg,
			overrides: image(literal("mirror.example.com"), nil, nil),
			fields:    map[string][]string{"data": {"data"}},
			want:      map[string]string{"data": `{"k":"v"}`},
		},
		"an image that cannot be parsed": {
			doc:       `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"Nginx:latest"}]}}`,
			overrides: image(nil, nil, literal("1")),
			failures:  []string{`image: .spec.containers[0].image: image "Nginx:latest": "Nginx" is not a repository (lowercase letters, digits, '.', '_', '-' and '/')`},
		},
		"image first, then patches": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "img", Image: &workv1alpha1.ImageOverride{Tag: literal("2.0")},
				Patches: []workv1alpha1.OverridePatch{replace("/spec/template/spec/containers/0/image", `"pinned:1"`)}}},
			fields: map[string][]string{"web": webImage, "init": images["init"]},
			want:   map[string]string{"web": `"pinned:1"`, "init": `"busybox:2.0"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runApply(t, tc) })
	}
}

func TestApplyOrderAndProtection(t *testing.T) {
	cases := map[string]applyCase{
		"a later override wins": {
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("first", add("/metadata/labels/tier", `"one"`)),
				byLabels(overrideWith("eu", add("/metadata/labels/tier", `"eu"`)), map[string]string{"region": "eu"}),
				byLabels(overrideWith("us", add("/metadata/labels/tier", `"us"`)), map[string]string{"region": "us"}),
			},
			fields: map[string][]string{"tier": {"metadata", "labels", "tier"}},
			want:   map[string]string{"tier": `"eu"`},
		},
		"a later override sees the earlier one's result": {
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("annotations", add("/metadata/annotations", `{}`)),
				overrideWith("note", add("/metadata/annotations/note", `"x"`)),
			},
			fields: map[string][]string{"annotations": {"metadata", "annotations"}},
			want:   map[string]string{"annotations": `{"note":"x"}`},
		},
		"a patch above the identity that changes it": {
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("meta", replace("/metadata/labels", `{}`)), // fine: labels are not identity
				overrideWith("kind", workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchAdd, Path: "/metadata/labels/x", Expression: `"y"`}),
			},
			fields: map[string][]string{"labels": {"metadata", "labels"}, "name": {"metadata", "name"}},
			want:   map[string]string{"labels": `{"x":"y"}`, "name": `"web"`},
		},
		"the split field": {
			split:     []string{".spec.replicas"},
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", replace("/spec/replicas", `9`)), overrideWith("b", remove("/spec/replicas"))},
			failures: []string{
				"the result changes .spec.replicas, a split field: the split sets it per cluster",
				"the result changes .spec.replicas, a split field: the split sets it per cluster",
			},
		},
		"the split field rewritten to the same value": {
			split:     []string{".spec.replicas"},
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", replace("/spec/replicas", `2.0`), add("/spec/paused", `true`))},
			fields:    map[string][]string{"replicas": {"spec", "replicas"}, "paused": {"spec", "paused"}},
			want:      map[string]string{"replicas": "2", "paused": "true"},
		},
		"a replicated manifest's replicas may change": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", replace("/spec/replicas", `9`))},
			fields:    map[string][]string{"replicas": {"spec", "replicas"}},
			want:      map[string]string{"replicas": "9"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { runApply(t, tc) })
	}
}

// TestProtectIdentity checks the result check itself: paths the compiler refuses cannot reach it, so the
// results are made here.
func TestProtectIdentity(t *testing.T) {
	before := manifest(t, web).Object
	cases := map[string]struct {
		change func(map[string]any)
		split  []string
		want   string
	}{
		"unchanged": {change: func(map[string]any) {}},
		"apiVersion": {change: func(o map[string]any) { o["apiVersion"] = "apps/v2" },
			want: ".apiVersion"},
		"kind": {change: func(o map[string]any) { delete(o, "kind") }, want: ".kind"},
		"name": {change: func(o map[string]any) { o["metadata"].(map[string]any)["name"] = "other" }, want: ".metadata.name"},
		"namespace removed": {change: func(o map[string]any) { delete(o["metadata"].(map[string]any), "namespace") },
			want: ".metadata.namespace"},
		"name of another type": {change: func(o map[string]any) { o["metadata"].(map[string]any)["name"] = int64(1) }, want: ".metadata.name"},
		"a split field": {change: func(o map[string]any) { o["spec"].(map[string]any)["replicas"] = int64(3) }, split: []string{".spec.replicas"},
			want: ".spec.replicas"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			after := before.DeepCopy()
			tc.change(after.Object)
			got := protect(before, after, tc.split)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("protect = %q, want a message about %q", got, tc.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	set := mustCompile(t,
		byLabels(workv1alpha1.ClusterOverride{Name: "mirror", Image: &workv1alpha1.ImageOverride{
			Registry: expression(`cluster.labels["region"] + ".mirror.example.com"`)}}, map[string]string{"tier": "prod"}),
		overrideWith("static", add("/metadata/labels/x", `"y"`)),
		byLabels(overrideWith("named", computed(workv1alpha1.OverridePatchAdd, "/metadata/labels/cluster", `cluster.name`)), map[string]string{"debug": "true"}),
	)
	prod := func(name, region string) Cluster {
		return Cluster{Name: name, Labels: map[string]string{"tier": "prod", "region": region, "other": name}}
	}
	debug := func(name string) Cluster {
		return Cluster{Name: name, Labels: map[string]string{"debug": "true"}}
	}
	cases := map[string]struct {
		a, b Cluster
		same bool
	}{
		"same region, other labels differ": {a: prod("a", "eu"), b: prod("b", "eu"), same: true},
		"other regions":                    {a: prod("a", "eu"), b: prod("b", "us")},
		"only the static override":         {a: Cluster{Name: "a"}, b: Cluster{Name: "b", Labels: map[string]string{"x": "y"}}, same: true},
		"an expression over the name":      {a: debug("a"), b: debug("b")},
		"selected by different overrides":  {a: prod("a", "eu"), b: Cluster{Name: "b", Labels: map[string]string{"region": "eu"}}},
		"both fail the same way":           {a: Cluster{Name: "a", Labels: map[string]string{"tier": "prod"}}, b: Cluster{Name: "b", Labels: map[string]string{"tier": "prod"}}, same: true},
	}
	ms := manifests(t, cfg, web)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ka, kb := set.Key(tc.a), set.Key(tc.b)
			if (ka == kb) != tc.same {
				t.Fatalf("keys %q and %q: equal %v, want %v", ka, kb, ka == kb, tc.same)
			}
			if !tc.same {
				return
			}
			// Equal keys: equal results.
			ra, _, errA := Render(set, ms, tc.a, nil)
			rb, _, errB := Render(set, ms, tc.b, nil)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("equal keys, one failed: %v, %v", errA, errB)
			}
			for i := range ra {
				if diff := cmp.Diff(ra[i].Object.Object, rb[i].Object.Object); diff != "" {
					t.Errorf("equal keys, different manifest %d:\n%s", i, diff)
				}
			}
		})
	}
	if k := set.Key(Cluster{Name: "x"}); k == "" {
		t.Errorf("a cluster that the static override selects has the key \"\"")
	}
	if k := mustCompile(t, byLabels(overrideWith("a", add("/x", "1")), map[string]string{"a": "b"})).Key(Cluster{Name: "x"}); k != "" {
		t.Errorf("a cluster that no override selects has the key %q, want \"\"", k)
	}
	var none *Set
	if k := none.Key(eu); k != "" {
		t.Errorf("no overrides: key %q, want \"\"", k)
	}
}

func TestRenderAndStatus(t *testing.T) {
	set := mustCompile(t,
		workv1alpha1.ClusterOverride{Name: "mirror", Image: &workv1alpha1.ImageOverride{Registry: expression(`cluster.labels["region"] + ".mirror.example.com"`)}},
		workv1alpha1.ClusterOverride{Name: "cfg", Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}},
			Patches: []workv1alpha1.OverridePatch{computed(workv1alpha1.OverridePatchAdd, "/data/cluster", `cluster.name`)}},
		byLabels(overrideWith("unused", add("/metadata/labels/x", `"y"`)), map[string]string{"none": "none"}),
	)
	ms := manifests(t, cfg, web)
	clusters := map[string]Cluster{
		"eu-1": {Name: "eu-1", Labels: map[string]string{"region": "eu"}},
		"eu-2": {Name: "eu-2", Labels: map[string]string{"region": "eu"}},
		"bare": {Name: "bare"},
	}
	outcomes := map[string][]Outcome{}
	for name, c := range clusters {
		rendered, outs, err := Render(set, ms, c, map[int][]string{1: {".spec.replicas"}})
		outcomes[name] = outs
		switch name {
		case "bare":
			var ce *ClusterError
			if !errors.As(err, &ce) || rendered != nil {
				t.Fatalf("bare: Render = %v, %v; want a *ClusterError and no manifests", rendered, err)
			}
			want := []Failure{{Override: "mirror", Cluster: "bare", Message: `image.registry.expression: no such key: region`}}
			if diff := cmp.Diff(want, ce.Failures); diff != "" {
				t.Errorf("bare: failures (-want +got):\n%s", diff)
			}
		default:
			if err != nil {
				t.Fatalf("%s: Render: %v", name, err)
			}
			got := []string{field(t, rendered[0].Object.Object, "data", "cluster"), field(t, rendered[1].Object.Object, webImage...)}
			want := []string{`"` + name + `"`, `"eu.mirror.example.com/team/web:1.2"`}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: rendered (-want +got):\n%s", name, diff)
			}
			wantOutcomes := []Outcome{{Override: "mirror", Index: 0, Changed: 1}, {Override: "cfg", Index: 1, Changed: 1}}
			if diff := cmp.Diff(wantOutcomes, outs); diff != "" {
				t.Errorf("%s: outcomes (-want +got):\n%s", name, diff)
			}
		}
	}
	want := []workv1alpha1.OverrideStatus{
		{Name: "mirror", Clusters: 2, Failed: 1, FailedClusters: []string{"bare"},
			Message: "on bare: image.registry.expression: no such key: region"},
		{Name: "cfg", Clusters: 2},
		{Name: "unused"},
	}
	if diff := cmp.Diff(want, Status(set, outcomes)); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
}

func TestStatusListsTenClusters(t *testing.T) {
	set := mustCompile(t, overrideWith("a", replace("/data/gone", `1`)))
	ms := manifests(t, cfg)
	outcomes := map[string][]Outcome{}
	for i := range 12 {
		name := fmt.Sprintf("c%02d", 11-i)
		_, outs, _ := Render(set, ms, Cluster{Name: name}, nil)
		outcomes[name] = outs
	}
	got := Status(set, outcomes)[0]
	if got.Failed != 12 || len(got.FailedClusters) != 10 || got.FailedClusters[0] != "c00" || got.FailedClusters[9] != "c09" || got.Clusters != 0 {
		t.Errorf("Status = %+v, want 12 failed, c00 to c09 listed", got)
	}
}

// TestConcurrentUse checks that a Set and a Resolved may be shared by goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	set := mustCompile(t,
		overrideWith("static", add("/metadata/labels/x", `"y"`)),
		workv1alpha1.ClusterOverride{Name: "img", Image: &workv1alpha1.ImageOverride{Tag: expression(`cluster.name`)}},
	)
	ms := manifests(t, web)
	r := set.Resolve(eu)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, m := range ms {
				if _, _, err := r.Apply(m, nil); err != nil {
					t.Error(err)
				}
			}
			if _, _, err := Render(set, ms, eu, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
