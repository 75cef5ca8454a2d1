package controllers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
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
