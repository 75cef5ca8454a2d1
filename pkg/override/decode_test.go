package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// exampleYAML is spec.overrides as a user writes it (docs/overrides.md shows the same).
const exampleYAML = `
- name: regional-mirror
  clusters:
    labelSelector:
      matchLabels:
        tier: prod
  manifests:
  - kind: Deployment
    group: apps
  image:
    registry:
      expression: cluster.labels["region"] + ".mirror.example.com"
    tag:
      value: "1.2.3"
- name: cluster-env
  clusters:
    claimSelector:
      matchExpressions:
      - key: platform.open-cluster-management.io
        operator: In
        values: [AWS]
  patches:
  - op: add
    path: /spec/template/spec/containers/0/env/-
    value: {name: CLUSTER, value: placeholder}
  - op: replace
    path: /spec/template/spec/containers/0/env/1/value
    expression: cluster.name
  - op: remove
    path: /metadata/labels/debug
`

// TestDecodeExample decodes the example, keeps patch values as written, encodes them back, and applies it.
func TestDecodeExample(t *testing.T) {
	var overrides []workv1alpha1.ClusterOverride
	if err := yaml.UnmarshalStrict([]byte(exampleYAML), &overrides); err != nil {
		t.Fatal(err)
	}
	if got := string(overrides[1].Patches[0].Value.Raw); got != `{"name":"CLUSTER","value":"placeholder"}` {
		t.Errorf("value = %s", got)
	}
	back, err := yaml.Marshal(overrides)
	if err != nil {
		t.Fatal(err)
	}
	var again []workv1alpha1.ClusterOverride
	if err := yaml.UnmarshalStrict(back, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(overrides, again); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(overrides, []workv1alpha1.ClusterOverride{*overrides[0].DeepCopy(), *overrides[1].DeepCopy()}); diff != "" {
		t.Errorf("DeepCopy (-want +got):\n%s", diff)
	}
	set := mustCompile(t, overrides...)
	c := Cluster{Name: "eu-1", Labels: map[string]string{"tier": "prod", "region": "eu"},
		Claims: map[string]string{"platform.open-cluster-management.io": "AWS"}}
	doc := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"debug":"true"}},
"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"ghcr.io/team/web:1.0","env":[{"name":"A","value":"a"}]}]}}}}`
	out, _, err := Render(set, manifests(t, doc), c, map[int][]string{0: {".spec.replicas"}})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{field(t, out[0].Object.Object, containers...), field(t, out[0].Object.Object, "metadata", "labels")}
	want := []string{`[{"env":[{"name":"A","value":"a"},{"name":"CLUSTER","value":"eu-1"}],"image":"eu.mirror.example.com/team/web:1.2.3","name":"web"}]`, `{}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered (-want +got):\n%s", diff)
	}
}
