package interpreter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

func integer(n int64) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Integer, Integer: &n} }
func str(s string) workv1.FieldValue    { return workv1.FieldValue{Type: workv1.String, String: &s} }
func boolean(b bool) workv1.FieldValue  { return workv1.FieldValue{Type: workv1.Boolean, Boolean: &b} }
func raw(s string) workv1.FieldValue    { return workv1.FieldValue{Type: workv1.JsonRaw, JsonRaw: &s} }

// widgetWithItems is a Widget whose spec.items has n integers.
func widgetWithItems(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	return `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"items":[` +
		strings.Join(items, ",") + `]}}`
}

func TestHealth(t *testing.T) {
	const id = "Widget.example.io default/w"
	failed := func(msg string) health.Verdict {
		return health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonInterpreterFailed,
			Message: id + ": ResourceInterpreter widgets: spec.health.expression: " + msg}
	}
	three := int64(3)
	cases := map[string]struct {
		expr     string
		manifest string
		feedback health.Feedback
		share    *int64
		want     health.Verdict
	}{
		"a state": {
			expr: `'Healthy'`,
			want: health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
		"a state without reason: the state's name": {
			expr: `'Progressing'`,
			want: health.Verdict{State: health.Progressing, Reason: "Progressing"},
		},
		"a map with reason and message": {
			expr: `{'state': 'Degraded', 'reason': 'ReplicaFailure', 'message': 'quota exceeded'}`,
			want: health.Verdict{State: health.Degraded, Reason: "ReplicaFailure", Message: id + ": quota exceeded"},
		},
		"Completed": {
			expr: `'Completed'`,
			want: health.Verdict{State: health.Healthy, Reason: "Completed", Finished: true},
		},
		"Failed": {
			expr: `{'state': 'Failed', 'message': 'exit 1'}`,
			want: health.Verdict{State: health.Degraded, Reason: "Failed", Message: id + ": exit 1", Finished: true},
		},
		"the object as delivered": {
			expr: `object.spec.replicas == 3 ? 'Healthy' : 'Degraded'`,
			want: health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
		"feedback values by type": {
			expr:     `status.ready == 3 && status.phase == 'Running' && status.paused == false ? 'Healthy' : 'Degraded'`,
			feedback: health.Feedback{"ready": integer(3), "phase": str("Running"), "paused": boolean(false)},
			want:     health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
		"has() on feedback not reported": {
			expr:     `has(status.ready) ? {'state': 'Healthy'} : {'state': 'Progressing', 'reason': 'WaitingForFeedback', 'message': 'no readiness yet'}`,
			feedback: health.Feedback{"phase": str("Running")},
			want:     health.Verdict{State: health.Progressing, Reason: "WaitingForFeedback", Message: id + ": no readiness yet"},
		},
		"the share of a split manifest": {
			expr:     `status.ready >= share ? {'state': 'Healthy'} : {'state': 'Progressing', 'message': string(status.ready) + ' of ' + string(share) + ' ready'}`,
			feedback: health.Feedback{"ready": integer(2)},
			share:    &three,
			want:     health.Verdict{State: health.Progressing, Reason: "Progressing", Message: id + ": 2 of 3 ready"},
		},
		"no share when not split": {
			expr: `share == -1 ? 'Healthy' : 'Degraded'`,
			want: health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
		"JsonRaw feedback, decoded": {
			expr:     `status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && status.conditions[0].observedGeneration == 2 ? 'Healthy' : 'Progressing'`,
			feedback: health.Feedback{"conditions": raw(`[{"type":"Ready","status":"True","observedGeneration":2}]`)},
			want:     health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
		"JsonRaw feedback that is not JSON": {
			expr:     `'Healthy'`,
			feedback: health.Feedback{"conditions": raw(`[{"type":`)},
			want:     failed("status.conditions is not JSON: unexpected end of JSON input"),
		},
		"a state that is not a string": {
			expr:     `{'state': status.ready}`,
			feedback: health.Feedback{"ready": integer(1)},
			want:     failed("state is int, not a string"),
		},
		"a result that is neither a state nor a map": {
			expr:     `status.ready`,
			feedback: health.Feedback{"ready": integer(1)},
			want:     failed("returned int, not a state or a map"),
		},
		"an unknown state": {
			expr: `'Paused'`,
			want: failed(`state "Paused" is not Healthy, Progressing, Degraded, Completed or Failed`),
		},
		"a map without state": {
			expr: `{'reason': 'Waiting'}`,
			want: failed("the map it returned has no state"),
		},
		"a map with a misspelt key": {
			expr: `{'state': 'Healthy', 'mesage': 'fine'}`,
			want: failed("the key mesage is not one of state, reason, message"),
		},
		"a reason that is not CamelCase": {
			expr: `{'state': 'Degraded', 'reason': 'not ready'}`,
			want: failed(`reason "not ready" is not CamelCase`),
		},
		"an evaluation error": {
			expr: `object.spec.paused ? 'Progressing' : 'Healthy'`,
			want: failed("no such key: paused"),
		},
		"an evaluation that loops too much": {
			expr:     `object.spec.items.all(x, object.spec.items.all(y, x + y >= 0)) ? 'Healthy' : 'Degraded'`,
			manifest: widgetWithItems(316), // 316 + 316² = 100,172 steps
			want:     failed("takes more than 100000 loop steps: loop over fewer or shorter lists"),
		},
		"an evaluation that loops too much, its error absorbed by ||": {
			expr:     `object.spec.items.all(x, object.spec.items.all(y, x + y >= 0)) || true ? 'Healthy' : 'Degraded'`,
			manifest: widgetWithItems(400),
			want:     failed("takes more than 100000 loop steps: loop over fewer or shorter lists"),
		},
		"an evaluation just within the loop steps": {
			expr:     `object.spec.items.all(x, object.spec.items.all(y, x + y >= 0)) ? 'Healthy' : 'Degraded'`,
			manifest: widgetWithItems(315), // 315 + 315² = 99,540 steps
			want:     health.Verdict{State: health.Healthy, Reason: "Healthy"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := compileSpec(t, workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(tc.expr)})
			manifest := widgetJSON
			if tc.manifest != "" {
				manifest = tc.manifest
			}
			got, ok := in.Health(health.ManifestInput{Manifest: parse(t, manifest), Share: tc.share}, tc.feedback)
			if !ok {
				t.Fatal("no opinion")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthFallback(t *testing.T) {
	ready := health.Feedback{health.Generation: integer(1), health.ObservedGeneration: integer(1), health.Replicas: integer(3),
		health.ReadyReplicas: integer(3), health.AvailableReplicas: integer(3), health.UpdatedReplicas: integer(3)}
	cases := map[string]struct {
		spec     workv1alpha1.ResourceInterpreterSpec
		manifest string
		want     health.Verdict
		wantOK   bool
	}{
		"a built-in kind without health: the built-in health": {
			spec:     workv1alpha1.ResourceInterpreterSpec{Target: deployment, Retain: []string{".spec.replicas"}},
			manifest: deploymentJSON,
			want:     health.Verdict{State: health.Healthy},
			wantOK:   true,
		},
		"a built-in kind with health: the user's": {
			spec:     workv1alpha1.ResourceInterpreterSpec{Target: deployment, Health: healthExpr(`status.readyReplicas == 3 ? 'Progressing' : 'Healthy'`)},
			manifest: deploymentJSON,
			want:     health.Verdict{State: health.Progressing, Reason: "Progressing"},
			wantOK:   true,
		},
		"another kind without health: no opinion": {
			spec:     workv1alpha1.ResourceInterpreterSpec{Replicas: []string{".spec.replicas"}},
			manifest: widgetJSON,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := compileSpec(t, tc.spec)
			got, ok := in.Health(health.ManifestInput{Manifest: parse(t, tc.manifest)}, ready)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDependencies(t *testing.T) {
	pod := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"serviceAccountName": "web",
		"containers": []any{
			map[string]any{"name": "app", "envFrom": []any{
				map[string]any{"configMapRef": map[string]any{"name": "settings"}},
				map[string]any{"secretRef": map[string]any{"name": "credentials"}},
			}, "env": []any{
				map[string]any{"name": "A", "value": "1"},
				map[string]any{"name": "B", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "credentials", "key": "b"}}},
			}},
		},
		"initContainers": []any{
			map[string]any{"name": "init", "env": []any{
				map[string]any{"name": "C", "valueFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "settings", "key": "c"}}},
			}},
		},
		"volumes": []any{
			map[string]any{"name": "v", "configMap": map[string]any{"name": "files"}},
			map[string]any{"name": "s", "secret": map[string]any{"secretName": "tls"}},
		},
	}}}}
	failed := func(msg string) *Problem {
		return &Problem{Reason: workv1alpha1.ReasonInterpreterFailed, Message: "ResourceInterpreter widgets: spec.dependencies.expression: " + msg}
	}
	cases := map[string]struct {
		expr    string
		object  map[string]any
		want    []Dependency
		problem *Problem
	}{
		"a pod template's, sorted, without duplicates": {
			expr:   podTemplateDependencies,
			object: pod,
			want: []Dependency{
				{Kind: "ConfigMap", Name: "files"}, {Kind: "ConfigMap", Name: "settings"},
				{Kind: "Secret", Name: "credentials"}, {Kind: "Secret", Name: "tls"},
				{Kind: "ServiceAccount", Name: "web"},
			},
		},
		"none": {
			expr:   `[]`,
			object: pod,
		},
		"duplicates": {
			expr: `[{'kind': 'Secret', 'name': 'b'}, {'kind': 'Secret', 'name': 'a'}, {'kind': 'Secret', 'name': 'b'}]`,
			want: []Dependency{{Kind: "Secret", Name: "a"}, {Kind: "Secret", Name: "b"}},
		},
		"a kind that is not carried": {
			expr:    `[{'kind': 'Secret', 'name': 'a'}, {'kind': 'Pod', 'name': 'b'}]`,
			problem: failed(`entry 1: kind "Pod" is not ConfigMap, Secret or ServiceAccount`),
		},
		"a name that is not a name": {
			expr:    `[{'kind': 'Secret', 'name': 'A B'}]`,
			problem: failed(`entry 0: name "A B": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`),
		},
		"an entry that is not a map": {
			expr:    `object.spec.names`,
			object:  map[string]any{"spec": map[string]any{"names": []any{"a"}}},
			problem: failed("entry 0 is string, not a map {'kind': ..., 'name': ...}"),
		},
		"an entry with another key": {
			expr:    `[{'kind': 'Secret', 'name': 'a', 'namespace': 'other'}]`,
			problem: failed("entry 0: the key namespace is not one of kind, name"),
		},
		"not a list": {
			expr:    `object.spec`,
			object:  map[string]any{"spec": map[string]any{}},
			problem: failed("returned map, not a list"),
		},
		"an evaluation error": {
			expr:    `object.spec.template.spec.containers.map(c, {'kind': 'Secret', 'name': c.name})`,
			object:  map[string]any{},
			problem: failed("no such key: spec"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := compileSpec(t, workv1alpha1.ResourceInterpreterSpec{Dependencies: &workv1alpha1.InterpreterDependencies{Expression: tc.expr}})
			if !in.HasDependencies() {
				t.Fatal("HasDependencies is false")
			}
			got, err := in.Dependencies(tc.object)
			var problem *Problem
			if err != nil && !errors.As(err, &problem) {
				t.Fatalf("error %v is not a *Problem", err)
			}
			if diff := cmp.Diff(tc.problem, problem); diff != "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("without an expression", func(t *testing.T) {
		in := compileSpec(t, workv1alpha1.ResourceInterpreterSpec{Replicas: []string{".spec.replicas"}})
		got, err := in.Dependencies(pod)
		if in.HasDependencies() || got != nil || err != nil {
			t.Errorf("HasDependencies() = %v, Dependencies() = %v, %v; want false, nil, nil", in.HasDependencies(), got, err)
		}
	})
}

// TestTruncateTail: the fixed part is never cut, the tail is cut at a rune boundary so the whole keeps the bound.
func TestTruncateTail(t *testing.T) {
	fixed := strings.Repeat("f", 1000)
	cases := map[string]struct {
		fixed, tail, want string
	}{
		"both fit":                                    {fixed: "what fails. Error: ", tail: "boom", want: "what fails. Error: boom"},
		"the tail is cut":                             {fixed: fixed, tail: strings.Repeat("t", 100), want: fixed + strings.Repeat("t", 21) + "..."},
		"the tail is cut at a rune's start":           {fixed: fixed, tail: strings.Repeat("t", 20) + "é" + strings.Repeat("t", 100), want: fixed + strings.Repeat("t", 20) + "..."},
		"a fixed part beyond the bound is kept whole": {fixed: fixed + fixed, tail: "boom", want: fixed + fixed + "..."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := TruncateTail(tc.fixed, tc.tail); got != tc.want {
				t.Errorf("TruncateTail = %q (%d bytes), want %q (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}
