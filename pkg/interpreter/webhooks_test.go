package interpreter

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// fakeWebhooks answers as a webhook would, or fails; it records the questions.
type fakeWebhooks struct {
	answer webhook.Response
	err    error
	asked  []webhook.Request
}

func (f *fakeWebhooks) Call(_ *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
	f.asked = append(f.asked, req)
	if f.err != nil {
		return nil, f.err
	}
	a := f.answer
	return &a, nil
}

func withWebhook(policy workv1alpha1.FailurePolicy, ops ...workv1alpha1.InterpreterOperation) *workv1alpha1.ResourceInterpreter {
	return &workv1alpha1.ResourceInterpreter{
		ObjectMeta: metav1.ObjectMeta{Name: "databases", UID: "uid", Generation: 1},
		Spec: workv1alpha1.ResourceInterpreterSpec{
			Target:   workv1alpha1.InterpreterTarget{Group: "example.io", Kind: "Database"},
			Replicas: []string{".spec.replicas"},
			StatusFeedback: []workv1alpha1.InterpreterFeedback{
				{Name: "phase", JSONPath: ".status.phase"},
			},
			Health:  &workv1alpha1.InterpreterHealth{Expression: `{'state': 'Healthy', 'reason': 'ByCEL'}`},
			Webhook: &workv1alpha1.InterpreterWebhook{URL: ptr.To("https://db.example"), Operations: ops, FailurePolicy: policy},
		},
	}
}

// TestWebhookHealth: a webhook that answers InterpretHealth judges the manifest as delivered, from the
// reported values; a failed call is Degraded under Fail and leaves the judging to the expression under Ignore.
func TestWebhookHealth(t *testing.T) {
	const db = `{"apiVersion":"example.io/v1","kind":"Database","metadata":{"name":"orders","namespace":"default"},"spec":{"replicas":5}}`
	health3 := int64(3)
	cases := map[string]struct {
		policy workv1alpha1.FailurePolicy
		ops    []workv1alpha1.InterpreterOperation
		hooks  *fakeWebhooks
		want   health.Verdict
		asked  int
	}{
		"the webhook's verdict": {
			ops:   []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth},
			hooks: &fakeWebhooks{answer: webhook.Response{Successful: true, State: webhook.StateDegraded, Reason: "DatabaseFailed", Message: "phase Failed"}},
			want:  health.Verdict{State: health.Degraded, Reason: "DatabaseFailed", Message: "Database.example.io default/orders: phase Failed"},
			asked: 1,
		},
		"failure under Fail": {
			ops:   []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth},
			hooks: &fakeWebhooks{err: errors.New("timed out after 10s")},
			want: health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonInterpreterFailed,
				Message: "Database.example.io default/orders: ResourceInterpreter databases: webhook InterpretHealth: timed out after 10s"},
			asked: 1,
		},
		"failure under Ignore: the expression judges": {
			policy: workv1alpha1.FailurePolicyIgnore,
			ops:    []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth},
			hooks:  &fakeWebhooks{err: errors.New("answered HTTP 500")},
			want:   health.Verdict{State: health.Healthy, Reason: "ByCEL"},
			asked:  1,
		},
		"a webhook for other operations is not asked": {
			ops:   []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretDependency},
			hooks: &fakeWebhooks{err: errors.New("must not be called")},
			want:  health.Verdict{State: health.Healthy, Reason: "ByCEL"},
		},
		"no webhook client: as unreachable, under Fail": {
			ops:  []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth},
			want: health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonInterpreterFailed, Message: "Database.example.io default/orders: ResourceInterpreter databases: webhook InterpretHealth: the manager has no webhook client"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var hooks Webhooks
			if tc.hooks != nil {
				hooks = tc.hooks
			}
			in, p := compileInterpreter(withWebhook(tc.policy, tc.ops...), nil, hooks)
			if p != nil {
				t.Fatal(p)
			}
			m := parse(t, db)
			phase := "Failed"
			got, ok := in.Health(health.ManifestInput{Manifest: m, Share: &health3, Fields: map[string]int32{".spec.replicas": 3}},
				health.Feedback{"phase": {String: &phase}})
			if !ok {
				t.Fatal("no verdict")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Health (-want +got):\n%s", diff)
			}
			if tc.hooks == nil {
				return
			}
			if len(tc.hooks.asked) != tc.asked {
				t.Fatalf("asked %d times, want %d", len(tc.hooks.asked), tc.asked)
			}
			if tc.asked > 0 {
				req := tc.hooks.asked[0]
				if string(req.Object) != `{"apiVersion":"example.io/v1","kind":"Database","metadata":{"name":"orders","namespace":"default"},"spec":{"replicas":3}}` {
					t.Errorf("object = %s, want the manifest as delivered, with the share", req.Object)
				}
				if v, _ := req.Status.String("phase"); v != "Failed" || req.Name != "orders" || req.Kind.Kind != "Database" {
					t.Errorf("request = %+v, want the Database's name, kind and reported phase", req)
				}
			}
		})
	}
}

// TestWebhookDependenciesAndAggregation: the webhook names dependencies and rolls status up; failures follow
// the failure policy.
func TestWebhookDependenciesAndAggregation(t *testing.T) {
	obj := map[string]any{"apiVersion": "example.io/v1", "kind": "Database", "metadata": map[string]any{"name": "orders"}}
	ops := []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretDependency, workv1alpha1.OperationAggregateStatus}
	ready := int64(4)
	answered := &fakeWebhooks{answer: webhook.Response{Successful: true,
		Dependencies: []webhook.Dependency{{Kind: "Secret", Name: "orders-credentials"}},
		Status:       []workv1alpha1.AggregatedField{{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: &ready, Clusters: 2}},
	}}
	in, p := compileInterpreter(withWebhook("", ops...), nil, answered)
	if p != nil {
		t.Fatal(p)
	}
	if !in.HasDependencies() {
		t.Error("HasDependencies = false for a webhook that answers InterpretDependency")
	}
	deps, err := in.Dependencies(obj)
	if err != nil || !cmp.Equal(deps, []Dependency{{Kind: "Secret", Name: "orders-credentials"}}) {
		t.Errorf("Dependencies = %v, %v", deps, err)
	}
	m := parse(t, `{"apiVersion":"example.io/v1","kind":"Database","metadata":{"name":"orders"}}`)
	fields, ok, err := in.AggregateStatus(m, []string{"c1", "c2"}, []health.Feedback{{}, {}})
	if err != nil || !ok || len(fields) != 1 || *fields[0].Value != 4 {
		t.Errorf("AggregateStatus = %v, %v, %v", fields, ok, err)
	}
	if got := answered.asked[len(answered.asked)-1].ClusterStatuses; len(got) != 2 || got[1].Cluster != "c2" {
		t.Errorf("clusterStatuses = %+v, want one per cluster", got)
	}

	failing := &fakeWebhooks{err: errors.New("answered garbage")}
	strict, _ := compileInterpreter(withWebhook(workv1alpha1.FailurePolicyFail, ops...), nil, failing)
	if _, err := strict.Dependencies(obj); err == nil {
		t.Error("Dependencies under Fail: no error for a failed webhook")
	}
	if _, ok, err := strict.AggregateStatus(m, nil, nil); ok || err == nil {
		t.Errorf("AggregateStatus under Fail = %v, %v; want an error", ok, err)
	}
	if !in.ReportsAggregateStatusFailures() || !strict.ReportsAggregateStatusFailures() {
		t.Error("ReportsAggregateStatusFailures = false for a webhook for AggregateStatus under Fail (the default)")
	}
	if healthOnly, _ := compileInterpreter(withWebhook("", workv1alpha1.OperationInterpretHealth), nil, failing); healthOnly.ReportsAggregateStatusFailures() {
		t.Error("ReportsAggregateStatusFailures = true for a webhook that does not answer AggregateStatus")
	}
	lenient, _ := compileInterpreter(withWebhook(workv1alpha1.FailurePolicyIgnore, ops...), nil, failing)
	if deps, err := lenient.Dependencies(obj); err != nil || deps != nil {
		t.Errorf("Dependencies under Ignore = %v, %v; want none, no error", deps, err)
	}
	if _, ok, err := lenient.AggregateStatus(m, nil, nil); ok || err != nil {
		t.Errorf("AggregateStatus under Ignore = %v, %v; want nothing, no error", ok, err)
	}
	if lenient.ReportsAggregateStatusFailures() {
		t.Error("ReportsAggregateStatusFailures = true under Ignore")
	}
}

// TestWebhookReviseReplicas: the webhook's patch gives the manifest with the cluster's replicas; a patch that
// renames the object or a failure under Fail is an error; under Ignore, nothing.
func TestWebhookReviseReplicas(t *testing.T) {
	m := parse(t, `{"apiVersion":"example.io/v1","kind":"Database","metadata":{"name":"orders"},"spec":{"groups":[{"replicas":9}]}}`)
	ops := []workv1alpha1.InterpreterOperation{workv1alpha1.OperationReviseReplica}
	cases := map[string]struct {
		policy  workv1alpha1.FailurePolicy
		hooks   *fakeWebhooks
		want    any
		wantOK  bool
		wantErr bool
	}{
		"patched": {hooks: &fakeWebhooks{answer: webhook.Response{Successful: true, PatchType: webhook.PatchTypeJSONPatch,
			Patch: webhook.Patch(`[{"op":"replace","path":"/spec/groups/0/replicas","value":3}]`)}}, want: float64(3), wantOK: true},
		"renames the object": {hooks: &fakeWebhooks{answer: webhook.Response{Successful: true, PatchType: webhook.PatchTypeJSONPatch,
			Patch: webhook.Patch(`[{"op":"replace","path":"/metadata/name","value":"other"}]`)}}, wantErr: true},
		"fails under Fail":   {hooks: &fakeWebhooks{err: errors.New("timed out")}, wantErr: true},
		"fails under Ignore": {policy: workv1alpha1.FailurePolicyIgnore, hooks: &fakeWebhooks{err: errors.New("timed out")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, p := compileInterpreter(withWebhook(tc.policy, ops...), nil, tc.hooks)
			if p != nil {
				t.Fatal(p)
			}
			got, ok, err := in.ReviseReplicas(m, 3)
			if (err != nil) != tc.wantErr || ok != tc.wantOK {
				t.Fatalf("ReviseReplicas = %v, %v, %v; want ok %v, error %v", got, ok, err, tc.wantOK, tc.wantErr)
			}
			if tc.wantOK {
				replicas := got["spec"].(map[string]any)["groups"].([]any)[0].(map[string]any)["replicas"]
				if replicas != tc.want {
					t.Errorf("replicas = %v, want %v", replicas, tc.want)
				}
				if d := tc.hooks.asked[0].DesiredReplicas; d == nil || *d != 3 {
					t.Errorf("desiredReplicas = %v, want 3", d)
				}
			}
		})
	}
}

// TestWebhookDependenciesSorted: a webhook's answer comes back sorted and without repeats, as the
// expression's does, and the remembered answer is not reordered.
func TestWebhookDependenciesSorted(t *testing.T) {
	answer := []webhook.Dependency{{Kind: "Secret", Name: "b"}, {Kind: "ConfigMap", Name: "a"}, {Kind: "Secret", Name: "b"}}
	hooks := &fakeWebhooks{answer: webhook.Response{Successful: true, Dependencies: answer}}
	in, p := compileInterpreter(withWebhook("", workv1alpha1.OperationInterpretDependency), nil, hooks)
	if p != nil {
		t.Fatal(p)
	}
	deps, err := in.Dependencies(map[string]any{"apiVersion": "example.io/v1", "kind": "Database", "metadata": map[string]any{"name": "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Dependency{{Kind: "ConfigMap", Name: "a"}, {Kind: "Secret", Name: "b"}}, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if answer[0].Kind != "Secret" {
		t.Error("the webhook's remembered answer was reordered")
	}
}

// TestResolveWithWebhooks: the interpreters a reconcile resolves call their webhooks through its caller; the
// cache's compiled interpreters keep calling through the cache's.
func TestResolveWithWebhooks(t *testing.T) {
	const db = `{"apiVersion":"example.io/v1","kind":"Database","metadata":{"name":"orders","namespace":"default"},"spec":{"replicas":5}}`
	healthy := webhook.Response{Successful: true, State: webhook.StateHealthy}
	cached, reconcile := &fakeWebhooks{answer: healthy}, &fakeWebhooks{answer: healthy}
	cache := NewCacheWithWebhooks(cached)
	list := []workv1alpha1.ResourceInterpreter{*withWebhook("", workv1alpha1.OperationInterpretHealth)}
	m := parse(t, db)
	judge := func(set *health.Interpreters) {
		t.Helper()
		in := set.For(m.GVK)
		if in == nil {
			t.Fatal("no interpreter for the Database")
		}
		if _, ok := in.Health(health.ManifestInput{Manifest: m}, nil); !ok {
			t.Fatal("no verdict")
		}
	}
	set, _ := ResolveWithWebhooks(list, cache, reconcile)
	judge(set)
	if len(reconcile.asked) != 1 || len(cached.asked) != 0 {
		t.Errorf("with the reconcile's caller: it asked %d times, the cache's %d, want 1 and 0", len(reconcile.asked), len(cached.asked))
	}
	set, _ = Resolve(list, cache)
	judge(set)
	if len(reconcile.asked) != 1 || len(cached.asked) != 1 {
		t.Errorf("without one: the reconcile's caller asked %d times, the cache's %d, want 1 and 1", len(reconcile.asked), len(cached.asked))
	}
}
