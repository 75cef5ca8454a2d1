package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

func TestDependencyManifest(t *testing.T) {
	hubMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: name, Namespace: "apps", UID: "uid-1", ResourceVersion: "42", Generation: 3,
			Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{
				lastAppliedAnnotation: `{"data":{"password":"hunter2"}}`,
				"team":                "payments",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"}},
			Finalizers:      []string{"example.io/keep"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}
	}
	wantMeta := func(name string) map[string]any {
		return map[string]any{
			"name": name, "namespace": "shop",
			"labels":      map[string]any{"app": "web"},
			"annotations": map[string]any{"team": "payments"},
		}
	}
	cases := map[string]struct {
		obj     client.Object
		want    map[string]any
		wantErr string
	}{
		"a ConfigMap keeps its data and binaryData, in the manifest's namespace": {
			obj: &corev1.ConfigMap{ObjectMeta: hubMeta("settings"), Data: map[string]string{"a": "1"},
				BinaryData: map[string][]byte{"b": []byte("hi")}, Immutable: ptr.To(true)},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": wantMeta("settings"),
				"data": map[string]any{"a": "1"}, "binaryData": map[string]any{"b": "aGk="}},
		},
		"a Secret keeps its type and data": {
			obj: &corev1.Secret{ObjectMeta: hubMeta("creds"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("hunter2")}},
			want: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": wantMeta("creds"),
				"type": "Opaque", "data": map[string]any{"password": "aHVudGVyMg=="}},
		},
		"a ServiceAccount keeps its image pull secrets and automount, not its token secrets": {
			obj: &corev1.ServiceAccount{ObjectMeta: hubMeta("runner"), AutomountServiceAccountToken: ptr.To(false),
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
				Secrets:          []corev1.ObjectReference{{Name: "runner-token-abcde"}}},
			want: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": wantMeta("runner"),
				"imagePullSecrets": []any{map[string]any{"name": "registry"}}, "automountServiceAccountToken": false},
		},
		"an empty ConfigMap is only its metadata": {
			obj:  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "apps"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "empty", "namespace": "shop"}},
		},
		"a ServiceAccount token of the hub is refused": {
			obj:     &corev1.Secret{ObjectMeta: hubMeta("runner-token"), Type: corev1.SecretTypeServiceAccountToken},
			wantErr: "a credential for the hub",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := dependencyManifest(tc.obj, "shop")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Object.Object); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependencyRefs(t *testing.T) {
	const group = "db.example.io"
	kinds := func(t *testing.T, expression string) *health.Interpreters {
		t.Helper()
		set, problems := interpreter.Resolve([]workv1alpha1.ResourceInterpreter{{
			ObjectMeta: metav1.ObjectMeta{Name: "databases", UID: types.UID("uid")},
			Spec: workv1alpha1.ResourceInterpreterSpec{
				Target:       workv1alpha1.InterpreterTarget{Group: group, Kind: "Database"},
				Dependencies: &workv1alpha1.InterpreterDependencies{Expression: expression},
			},
		}}, interpreter.NewCache())
		if len(problems) > 0 {
			t.Fatalf("compiling: %v", problems)
		}
		return set
	}
	// The interpreter names the ConfigMap in spec.configName and the Secret in spec.secretName, when set.
	const expression = `(has(object.spec.configName) ? [{'kind': 'ConfigMap', 'name': object.spec.configName}] : []) +
		(has(object.spec.secretName) ? [{'kind': 'Secret', 'name': object.spec.secretName}] : [])`
	database := func(name, namespace string, spec map[string]any) map[string]any {
		meta := map[string]any{"name": name}
		if namespace != "" {
			meta["namespace"] = namespace
		}
		return map[string]any{"apiVersion": group + "/v1", "kind": "Database", "metadata": meta, "spec": spec}
	}
	parse := func(t *testing.T, objs ...map[string]any) []template.Manifest {
		t.Helper()
		p := framework.MakePMW("p", "apps")
		for _, o := range objs {
			p.Manifest(o)
		}
		ms, err := template.Parse(p.Obj().Spec.ManifestWorkTemplate.Workload.Manifests)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	cases := map[string]struct {
		expression  string
		manifests   []map[string]any
		want        []dependencyRef
		wantReason  string
		wantMessage string
	}{
		"sorted by kind, namespace and name; once per target namespace": {
			expression: expression,
			manifests: []map[string]any{
				database("b", "shop", map[string]any{"configName": "shared", "secretName": "b-creds"}),
				database("a", "shop", map[string]any{"configName": "shared", "secretName": "a-creds"}),
				database("c", "audit", map[string]any{"configName": "shared"}),
			},
			want: []dependencyRef{
				{kind: "ConfigMap", name: "shared", namespace: "audit", neededBy: "Database." + group + " audit/c"},
				{kind: "ConfigMap", name: "shared", namespace: "shop", neededBy: "Database." + group + " shop/b"},
				{kind: "Secret", name: "a-creds", namespace: "shop", neededBy: "Database." + group + " shop/a"},
				{kind: "Secret", name: "b-creds", namespace: "shop", neededBy: "Database." + group + " shop/b"},
			},
		},
		"one the template carries itself is left to the template": {
			expression: expression,
			manifests: []map[string]any{
				database("a", "shop", map[string]any{"configName": "settings", "secretName": "creds"}),
				framework.ConfigMap("settings", "shop", map[string]string{"k": "v"}),
			},
			want: []dependencyRef{{kind: "Secret", name: "creds", namespace: "shop", neededBy: "Database." + group + " shop/a"}},
		},
		"manifests of other kinds, and those that need nothing, have none": {
			expression: expression,
			manifests:  []map[string]any{database("a", "shop", map[string]any{}), framework.Deployment("web", "shop", 1)},
		},
		"a manifest without a namespace has nowhere to put them": {
			expression:  expression,
			manifests:   []map[string]any{database("a", "", map[string]any{"configName": "settings"})},
			wantReason:  workv1alpha1.ReasonDependencyNotFound,
			wantMessage: "Database." + group + " a has no namespace to deliver its dependencies (ConfigMap settings, ...) into",
		},
		"an expression that fails names the manifest and the interpreter": {
			expression:  `[{'kind': 'ConfigMap', 'name': object.spec.configName}]`,
			manifests:   []map[string]any{database("a", "shop", map[string]any{})},
			wantReason:  workv1alpha1.ReasonInterpreterFailed,
			wantMessage: "The dependencies of Database." + group + " shop/a: ResourceInterpreter databases: spec.dependencies.expression: no such key: configName",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, invalid := dependencyRefs(kinds(t, tc.expression), parse(t, tc.manifests...))
			if tc.wantReason != "" {
				if invalid == nil || invalid.Reason != tc.wantReason || !strings.Contains(invalid.Message, tc.wantMessage) {
					t.Fatalf("invalid %+v, want %s containing %q", invalid, tc.wantReason, tc.wantMessage)
				}
				return
			}
			if invalid != nil {
				t.Fatalf("invalid: %+v", invalid)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(dependencyRef{})); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no interpreters", func(t *testing.T) {
		got, invalid := dependencyRefs(nil, parse(t, database("a", "shop", map[string]any{"configName": "x"})))
		if got != nil || invalid != nil {
			t.Errorf("dependencyRefs = %v, %v; want nothing", got, invalid)
		}
	})
}

// TestKeepIdentity: the metadata cache of ConfigMaps, Secrets and ServiceAccounts keeps what maps an event to
// its PlacementManifestWorks, not kubectl's copy of a Secret.
func TestKeepIdentity(t *testing.T) {
	in := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u", ResourceVersion: "7",
			Annotations:   map[string]string{lastAppliedAnnotation: `{"data":{"password":"aHVudGVyMg=="}}`},
			Labels:        map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
	}
	out, err := keepIdentity(func(o any) (any, error) { return o, nil })(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps", UID: "u", ResourceVersion: "7"},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	// Anything else goes to the other transform.
	other := &workv1.ManifestWork{}
	if got, _ := keepIdentity(func(any) (any, error) { return "other", nil })(other); got != "other" {
		t.Errorf("a typed object was not passed on: %v", got)
	}
}

// mountsKinds interpret Deployments as the dependencies example of docs/interpreters.md does: the ConfigMaps and
// Secrets their pod template mounts.
func mountsKinds(t *testing.T) *health.Interpreters {
	t.Helper()
	set, problems := interpreter.Resolve([]workv1alpha1.ResourceInterpreter{{
		ObjectMeta: metav1.ObjectMeta{Name: "mounts", UID: types.UID("uid")},
		Spec: workv1alpha1.ResourceInterpreterSpec{
			Target: workv1alpha1.InterpreterTarget{Group: "apps", Kind: "Deployment"},
			Dependencies: &workv1alpha1.InterpreterDependencies{Expression: `
				object.?spec.?template.?spec.?volumes.orValue([]).filter(v, has(v.configMap)).map(v, {'kind': 'ConfigMap', 'name': v.configMap.name}) +
				object.?spec.?template.?spec.?volumes.orValue([]).filter(v, has(v.secret)).map(v, {'kind': 'Secret', 'name': v.secret.secretName})`},
		},
	}}, interpreter.NewCache())
	if len(problems) > 0 {
		t.Fatalf("compiling: %v", problems)
	}
	return set
}

// mountingPMW is a PlacementManifestWork in namespace apps with propagateDependencies, whose Deployment web (in
// namespace shop, 6 replicas split evenly) mounts the ConfigMap settings.
func mountingPMW(overrides ...workv1alpha1.ClusterOverride) *workv1alpha1.PlacementManifestWork {
	web := framework.Deployment("web", "shop", 6)
	podSpec := web["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	podSpec["volumes"] = []any{map[string]any{"name": "settings", "configMap": map[string]any{"name": "settings"}}}
	p := framework.MakePMW("web", "apps").Placement("p").Manifest(web).
		Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "shop", Kind: "Deployment", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).
		Overrides(overrides...).Obj()
	p.UID, p.Generation = "uid", 1
	p.Spec.PropagateDependencies = true
	return p
}

// mountsHub are the hub objects of namespace apps that mountingPMW's overrides may name.
func mountsHub() []client.Object {
	return []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "apps"}, Data: map[string]string{"level": "1"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-eu", Namespace: "apps"}, Data: map[string]string{"level": "eu"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "apps"}, Data: map[string][]byte{"password": []byte("x")}},
	}
}

// mountsFleet are three clusters: eu-1 and eu-2 in region eu, us-1 in region us.
var mountsFleet = map[string]override.Cluster{
	"eu-1": {Labels: map[string]string{"region": "eu"}},
	"eu-2": {Labels: map[string]string{"region": "eu"}},
	"us-1": {Labels: map[string]string{"region": "us"}},
}

// countingReader counts the Gets that reach the hub.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestDependenciesFollowOverrides: each cluster's work carries the dependencies its manifests reference as its
// overrides leave them, not the template's; clusters whose overrides change no such reference share the
// template's; identical overridden manifests are resolved once, and each hub object read once; a dependency an
// override makes a manifest reference that is missing on the hub (or an interpreter that fails on the manifest
// as overridden) fails the clusters it selects alone, which keep their works (Plan.DependencyFailures), the
// others being planned; one the template's own manifests reference fails every cluster.
func TestDependenciesFollowOverrides(t *testing.T) {
	raw := func(s string) *workv1alpha1.JSON { return &workv1alpha1.JSON{Raw: []byte(s)} }
	eu := &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
	// mount makes the clusters' Deployment mount the ConfigMap name instead of settings.
	mount := func(name string, clusters *workv1alpha1.OverrideClusters) workv1alpha1.ClusterOverride {
		return workv1alpha1.ClusterOverride{Name: "mount-" + name, Clusters: clusters, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
			Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/template/spec/volumes/0/configMap/name", Value: raw(`"` + name + `"`)}}}
	}
	renamed := func(o workv1alpha1.ClusterOverride, name string) workv1alpha1.ClusterOverride {
		o.Name = name
		return o
	}
	const (
		settings   = `ConfigMap shop/settings {"level":"1"}`
		settingsEU = `ConfigMap shop/settings-eu {"level":"eu"}`
		creds      = `Secret shop/creds {"password":"eA=="}`
	)
	cases := map[string]struct {
		overrides []workv1alpha1.ClusterOverride
		// want are, per cluster, the dependencies its work carries after the Deployment; own the clusters that
		// carry their own (Plan.Dependencies).
		want map[string][]string
		own  []string
		// reads are the hub reads, finds the overridden contents resolved.
		reads, finds int
		// failed are the clusters whose dependencies cannot be found (Plan.DependencyFailures), for
		// wantReason and wantMessage; without failed these are the error of the whole desired state.
		failed      []string
		wantReason  string
		wantMessage string
		// without is a hub object (by name) missing from mountsHub.
		without string
	}{
		"without overrides every cluster carries the template's": {
			want:  map[string][]string{"eu-1": {settings}, "eu-2": {settings}, "us-1": {settings}},
			reads: 1,
		},
		"an override that renames the mounted ConfigMap: its clusters carry the one it names": {
			overrides: []workv1alpha1.ClusterOverride{mount("settings-eu", eu)},
			want:      map[string][]string{"eu-1": {settingsEU}, "eu-2": {settingsEU}, "us-1": {settings}},
			own:       []string{"eu-1", "eu-2"},
			reads:     2, finds: 1,
		},
		"an override that changes no reference: the template's, asked once": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "mirror", Clusters: eu, Image: &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Value: "eu.example"}}}},
			want:      map[string][]string{"eu-1": {settings}, "eu-2": {settings}, "us-1": {settings}},
			reads:     1, finds: 1,
		},
		"an override that removes the volume: its clusters carry none": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "no-volume", Clusters: eu, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchRemove, Path: "/spec/template/spec/volumes"}}}},
			want:  map[string][]string{"eu-1": {}, "eu-2": {}, "us-1": {settings}},
			own:   []string{"eu-1", "eu-2"},
			reads: 1, finds: 1,
		},
		"an override that mounts a Secret too: the template's ConfigMap and the Secret": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "creds", Clusters: eu, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchAdd, Path: "/spec/template/spec/volumes/-", Value: raw(`{"name":"creds","secret":{"secretName":"creds"}}`)}}}},
			want:  map[string][]string{"eu-1": {settings, creds}, "eu-2": {settings, creds}, "us-1": {settings}},
			own:   []string{"eu-1", "eu-2"},
			reads: 2, finds: 1,
		},
		"different overrides with the same result: resolved once": {
			overrides: []workv1alpha1.ClusterOverride{mount("settings-eu", &workv1alpha1.OverrideClusters{Names: []string{"eu-1"}}),
				renamed(mount("settings-eu", &workv1alpha1.OverrideClusters{Names: []string{"eu-2"}}), "also-eu")},
			want:  map[string][]string{"eu-1": {settingsEU}, "eu-2": {settingsEU}, "us-1": {settings}},
			own:   []string{"eu-1", "eu-2"},
			reads: 2, finds: 1,
		},
		"an override that names the cluster's own dependency patches it": {
			overrides: []workv1alpha1.ClusterOverride{mount("settings-eu", eu), {Name: "region", Clusters: eu, Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchAdd, Path: "/data/region", Value: raw(`"eu"`)}}}},
			want:  map[string][]string{"eu-1": {`ConfigMap shop/settings-eu {"level":"eu","region":"eu"}`}, "eu-2": {`ConfigMap shop/settings-eu {"level":"eu","region":"eu"}`}, "us-1": {settings}},
			own:   []string{"eu-1", "eu-2"},
			reads: 2, finds: 1,
		},
		"an override that names a ConfigMap missing on the hub: its clusters alone fail, asked once": {
			overrides: []workv1alpha1.ClusterOverride{mount("settings-apac", eu)},
			want:      map[string][]string{"us-1": {settings}},
			reads:     2, finds: 1,
			failed:      []string{"eu-1", "eu-2"},
			wantReason:  workv1alpha1.ReasonDependencyNotFound,
			wantMessage: "Not in namespace apps on the hub: ConfigMap settings-apac (needed by Deployment.apps shop/web as the overrides leave it); create them there, or fix the override, the interpreter or the manifest that names them",
		},
		"the ConfigMap an override renames to is deleted: its clusters alone fail": {
			overrides: []workv1alpha1.ClusterOverride{mount("settings-eu", eu)},
			without:   "settings-eu",
			want:      map[string][]string{"us-1": {settings}},
			reads:     2, finds: 1,
			failed:      []string{"eu-1", "eu-2"},
			wantReason:  workv1alpha1.ReasonDependencyNotFound,
			wantMessage: "Not in namespace apps on the hub: ConfigMap settings-eu (needed by Deployment.apps shop/web as the overrides leave it)",
		},
		"an override that leaves the interpreter nothing to read: its clusters alone fail": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "empty", Clusters: eu, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/template/spec/volumes/0/configMap", Value: raw(`{}`)}}}},
			want:  map[string][]string{"us-1": {settings}},
			reads: 1, finds: 1,
			failed:      []string{"eu-1", "eu-2"},
			wantReason:  workv1alpha1.ReasonInterpreterFailed,
			wantMessage: "The dependencies of Deployment.apps shop/web as the overrides leave it: ResourceInterpreter mounts: spec.dependencies.expression: no such key: name",
		},
		"the template's own ConfigMap missing fails every cluster, overrides or not": {
			overrides:   []workv1alpha1.ClusterOverride{mount("settings-eu", eu)},
			without:     "settings",
			wantReason:  workv1alpha1.ReasonDependencyNotFound,
			wantMessage: "Not in namespace apps on the hub: ConfigMap settings (needed by Deployment.apps shop/web); create them there, or fix the interpreter or the manifest that names them. Nothing is written and the ManifestWorks already delivered are kept",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kinds := mountsKinds(t)
			p := mountingPMW(tc.overrides...)
			objs := slices.DeleteFunc(mountsHub(), func(o client.Object) bool { return o.GetName() == tc.without })
			hub := &countingReader{Reader: fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).Build()}
			r := &PlacementManifestWorkReconciler{APIReader: hub}
			manifests, err := planner.ParseTemplate(p)
			if err != nil {
				t.Fatal(err)
			}
			f, invalid, err := r.dependencies(context.Background(), p, kinds, manifests)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantReason != "" && tc.failed == nil {
				if invalid == nil || invalid.Reason != tc.wantReason || !strings.Contains(invalid.Message, tc.wantMessage) {
					t.Fatalf("the template's dependencies: %v, want %s containing %q", invalid, tc.wantReason, tc.wantMessage)
				}
				return
			}
			if invalid != nil {
				t.Fatalf("the template's dependencies: %v", invalid)
			}
			set, err := override.Compile(p.Spec.Overrides)
			if err != nil {
				t.Fatal(err)
			}
			in := planner.Input{Clusters: sortedClusters(mountsFleet), Kinds: kinds, Overrides: set, ClusterFacts: mountsFleet, Dependencies: f}
			plan, err := planner.Compute(p, append(manifests, f.own...), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.OverrideFailures) > 0 {
				t.Fatalf("override failures: %v", plan.OverrideFailures)
			}
			if diff := cmp.Diff(tc.failed, slices.Sorted(maps.Keys(plan.DependencyFailures))); diff != "" {
				t.Errorf("clusters whose dependencies cannot be found (-want +got):\n%s", diff)
			}
			for c, e := range plan.DependencyFailures {
				if e.Reason != tc.wantReason || !strings.Contains(e.Message, tc.wantMessage) || strings.Contains(e.Message, "Nothing is written") || strings.Contains(e.Message, "nothing is written") {
					t.Errorf("%s: %s %q, want %s containing %q and not saying nothing is written", c, e.Reason, e.Message, tc.wantReason, tc.wantMessage)
				}
				if !plan.Kept(c) || len(plan.OverrideOutcomes[c]) > 0 {
					t.Errorf("%s: kept %v, override outcomes %v: want kept, none", c, plan.Kept(c), plan.OverrideOutcomes[c])
				}
			}
			got := map[string][]string{}
			for c, ms := range plan.Manifests {
				got[c] = []string{}
				for _, m := range ms[1:] {
					var obj struct {
						Kind     string            `json:"kind"`
						Metadata metav1.ObjectMeta `json:"metadata"`
						Data     json.RawMessage   `json:"data"`
					}
					if err := json.Unmarshal(m.Raw, &obj); err != nil {
						t.Fatal(err)
					}
					got[c] = append(got[c], obj.Kind+" "+obj.Metadata.Namespace+"/"+obj.Metadata.Name+" "+string(obj.Data))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies carried (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.own, slices.Sorted(maps.Keys(plan.Dependencies))); diff != "" {
				t.Errorf("clusters with dependencies of their own (-want +got):\n%s", diff)
			}
			for c, deps := range plan.Dependencies {
				if len(deps) != len(got[c]) {
					t.Errorf("%s: Plan.Dependencies has %d, its work carries %d", c, len(deps), len(got[c]))
				}
			}
			if hub.gets != tc.reads || len(f.found) != tc.finds {
				t.Errorf("%d hub reads and %d resolved contents, want %d and %d", hub.gets, len(f.found), tc.reads, tc.finds)
			}
		})
	}
}

func sortedClusters(fleet map[string]override.Cluster) []string {
	return slices.Sorted(maps.Keys(fleet))
}

// TestDependenciesFollowOverridesInStatus: a fleet whose overrides change which ConfigMap the Deployment mounts
// (eu-1 none, eu-2 settings-eu, us-1 the template's settings), converged and reported healthy by the simulated
// agent, is judged against what each work carries: every cluster available, nothing left to write, and
// status.manifests counts each ConfigMap on the clusters that carry it.
func TestDependenciesFollowOverridesInStatus(t *testing.T) {
	raw := func(s string) *workv1alpha1.JSON { return &workv1alpha1.JSON{Raw: []byte(s)} }
	p := mountingPMW(
		workv1alpha1.ClusterOverride{Name: "no-volume", Clusters: &workv1alpha1.OverrideClusters{Names: []string{"eu-1"}},
			Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
			Patches:   []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchRemove, Path: "/spec/template/spec/volumes"}}},
		workv1alpha1.ClusterOverride{Name: "settings-eu", Clusters: &workv1alpha1.OverrideClusters{Names: []string{"eu-2"}},
			Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
			Patches:   []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/template/spec/volumes/0/configMap/name", Value: raw(`"settings-eu"`)}}},
	)
	kinds := mountsKinds(t)
	r := &PlacementManifestWorkReconciler{APIReader: fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(mountsHub()...).Build()}
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	// gather's inputs, with the works: each reconcile finds the dependencies afresh.
	gather := func(owned map[string]*workv1.ManifestWork) *inputs {
		in := overridesInputs(t, p, mountsFleet, owned)
		f, invalid, err := r.dependencies(context.Background(), p, kinds, in.template)
		if err != nil || invalid != nil {
			t.Fatalf("the template's dependencies: %v %v", err, invalid)
		}
		in.template, in.deps, in.kinds = append(in.template, f.own...), f, kinds
		return in
	}
	in := gather(nil)
	d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desired state: %v %v", err, invalid)
	}
	owned := map[string]*workv1.ManifestWork{}
	carried := map[string]int{}
	for _, op := range planWrites(p, &observation{inputs: *in, desired: d}, nil, now).ops {
		work := op.written(now)
		work.Generation = 1
		work.Status = ocmsim.Simulate(work, ocmsim.Spoke{Behavior: ocmsim.Healthy}, now.Add(-time.Hour), now).Status
		carried[op.cluster] = len(work.Spec.Workload.Manifests)
		trimWork(work)
		owned[op.cluster] = work
	}
	if diff := cmp.Diff(map[string]int{"eu-1": 1, "eu-2": 2, "us-1": 2}, carried); diff != "" {
		t.Fatalf("manifests of each work (-want +got):\n%s", diff)
	}

	in = gather(owned)
	d, invalid, _, err = desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desired state: %v %v", err, invalid)
	}
	obs := &observation{inputs: *in, desired: d}
	wp := planWrites(p, obs, nil, now)
	if len(wp.ops) != 0 {
		t.Errorf("%d writes planned for a converged fleet", len(wp.ops))
	}
	obs.rollout, obs.upToDate, obs.leaving = wp.rollout, wp.upToDate, wp.leaving
	st := computeStatus(p, obs)
	if st.PlacedManifestWorkSummary.Available != 3 {
		t.Errorf("%d of 3 clusters available; unhealthy: %+v", st.PlacedManifestWorkSummary.Available, st.UnhealthyClusters)
	}
	type count struct {
		ID                             string
		Healthy, Progressing, Degraded int32
	}
	var got []count
	for _, m := range st.Manifests {
		got = append(got, count{m.Kind + " " + m.Namespace + "/" + m.Name, m.Healthy, m.Progressing, m.Degraded})
	}
	want := []count{{"Deployment shop/web", 3, 0, 0}, {"ConfigMap shop/settings", 1, 0, 0}, {"ConfigMap shop/settings-eu", 1, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status.manifests (-want +got):\n%s", diff)
	}
}

// TestDependencyMissingForOverriddenCluster: when a ConfigMap only a cluster's override makes its Deployment
// mount (settings-eu, on eu-2) is deleted from the hub and the template changes, the other clusters get the new
// template while eu-2 keeps its work as it is; the conditions say DependencyNotFound naming the ConfigMap, the
// manifest and the cluster, without stalling, and status.unhealthyClusters says eu-2 does not carry the
// current template and why.
func TestDependencyMissingForOverriddenCluster(t *testing.T) {
	raw := func(s string) *workv1alpha1.JSON { return &workv1alpha1.JSON{Raw: []byte(s)} }
	p := mountingPMW(workv1alpha1.ClusterOverride{Name: "settings-eu", Clusters: &workv1alpha1.OverrideClusters{Names: []string{"eu-2"}},
		Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
		Patches:   []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/template/spec/volumes/0/configMap/name", Value: raw(`"settings-eu"`)}}})
	kinds := mountsKinds(t)
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	gather := func(p *workv1alpha1.PlacementManifestWork, hub []client.Object, owned map[string]*workv1.ManifestWork) *inputs {
		r := &PlacementManifestWorkReconciler{APIReader: fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(hub...).Build()}
		in := overridesInputs(t, p, mountsFleet, owned)
		f, invalid, err := r.dependencies(context.Background(), p, kinds, in.template)
		if err != nil || invalid != nil {
			t.Fatalf("the template's dependencies: %v %v", err, invalid)
		}
		in.template, in.deps, in.kinds = append(in.template, f.own...), f, kinds
		return in
	}
	in := gather(p, mountsHub(), nil)
	d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desired state: %v %v", err, invalid)
	}
	owned := map[string]*workv1.ManifestWork{}
	for _, op := range planWrites(p, &observation{inputs: *in, desired: d}, nil, now).ops {
		work := op.written(now)
		work.Generation = 1
		work.Status = ocmsim.Simulate(work, ocmsim.Spoke{Behavior: ocmsim.Healthy}, now.Add(-time.Hour), now).Status
		trimWork(work)
		owned[op.cluster] = work
	}
	if len(owned) != 3 {
		t.Fatalf("%d works delivered, want 3", len(owned))
	}

	// settings-eu is deleted and the template moves to a new image.
	p = p.DeepCopy()
	p.Generation = 2
	m := &p.Spec.ManifestWorkTemplate.Workload.Manifests[0]
	m.Raw = []byte(strings.Replace(string(m.Raw), "registry.example/app:1", "registry.example/app:2", 1))
	hub := slices.DeleteFunc(mountsHub(), func(o client.Object) bool { return o.GetName() == "settings-eu" })
	in = gather(p, hub, owned)
	d, invalid, _, err = desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desired state: %v %v", err, invalid)
	}
	if got := slices.Sorted(maps.Keys(d.plan.DependencyFailures)); !slices.Equal(got, []string{"eu-2"}) {
		t.Fatalf("clusters whose dependencies cannot be found: %v, want eu-2", got)
	}
	obs := &observation{inputs: *in, desired: d}
	wp := planWrites(p, obs, nil, now)
	var written []string
	for _, op := range wp.ops {
		if !op.templateChange || op.delete || !strings.Contains(string(op.desired.Spec.Workload.Manifests[0].Raw), "registry.example/app:2") {
			t.Errorf("%s: want an update to the new template, got %+v", op.cluster, op)
		}
		written = append(written, op.cluster)
	}
	if diff := cmp.Diff([]string{"eu-1", "us-1"}, slices.Sorted(slices.Values(written))); diff != "" {
		t.Errorf("clusters written (-want +got):\n%s", diff)
	}
	obs.rollout, obs.upToDate, obs.leaving = wp.rollout, wp.upToDate, wp.leaving
	st := computeStatus(p, obs)
	for _, ct := range []string{workv1alpha1.ConditionDistributed, workv1alpha1.ConditionReady} {
		c := meta.FindStatusCondition(st.Conditions, ct)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1alpha1.ReasonDependencyNotFound ||
			!strings.Contains(c.Message, "ConfigMap settings-eu (needed by Deployment.apps shop/web as the overrides leave it)") ||
			!strings.Contains(c.Message, "on 1 cluster (eu-2)") || !strings.Contains(c.Message, "They keep their ManifestWorks") || !strings.Contains(c.Message, "the other clusters are served") {
			t.Errorf("%s: %+v", ct, c)
		}
	}
	if c := meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionStalled); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Stalled: %+v", c)
	}
	var eu2 *workv1alpha1.ClusterHealth
	for i, u := range st.UnhealthyClusters {
		if u.Cluster == "eu-2" {
			eu2 = &st.UnhealthyClusters[i]
		}
	}
	if eu2 == nil || eu2.Reason != workv1alpha1.ReasonOutdatedTemplate || !strings.Contains(eu2.Message, "cannot be found (DependencyNotFound)") {
		t.Errorf("eu-2 in status.unhealthyClusters: %+v (all: %+v)", eu2, st.UnhealthyClusters)
	}
}

// TestDependencyFailuresMessageBounded: overrides that differ per cluster (cluster.name in a value) give one
// dependency failure per cluster; the conditions' message quotes a few and stays within what a condition and
// an event note take.
func TestDependencyFailuresMessageBounded(t *testing.T) {
	plan := &planner.Plan{DependencyFailures: map[string]*planner.InvalidError{}}
	for i := range 200 {
		c := fmt.Sprintf("cluster-%03d", i)
		plan.DependencyFailures[c] = &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound,
			Message: fmt.Sprintf("Not in namespace apps on the hub: ConfigMap settings-%s (needed by Deployment.apps shop/web as the overrides leave it)", c)}
	}
	reason, msg := clusterFailures(plan)
	if reason != workv1alpha1.ReasonDependencyNotFound || len(msg) > interpreter.MaxMessage {
		t.Errorf("%s, %d bytes: %s", reason, len(msg), msg)
	}
	if !strings.Contains(msg, "on 1 cluster (cluster-000): Not in namespace apps on the hub: ConfigMap settings-cluster-000") {
		t.Errorf("the message does not quote the first failure: %s", msg)
	}
	if again := dependencyFailedMessage(plan); again != dependencyFailedMessage(plan) || !strings.Contains(again, "and 197 more failures") {
		t.Errorf("the message counts the failures it leaves out, the same each time: %s", again)
	}
}
