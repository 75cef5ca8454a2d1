package interpreter

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

var (
	widget     = workv1alpha1.InterpreterTarget{Group: "example.io", Kind: "Widget"}
	deployment = workv1alpha1.InterpreterTarget{Group: "apps", Kind: "Deployment"}
)

// resourceInterpreter is a ResourceInterpreter of generation 1 whose UID is its name; a Widget of example.io
// when spec has no target.
func resourceInterpreter(name string, spec workv1alpha1.ResourceInterpreterSpec) *workv1alpha1.ResourceInterpreter {
	if spec.Target.Kind == "" {
		spec.Target = widget
	}
	return &workv1alpha1.ResourceInterpreter{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Generation: 1},
		Spec:       spec,
	}
}

// compileSpec compiles spec with the built-in interpreter of its target as the fallback.
func compileSpec(t *testing.T, spec workv1alpha1.ResourceInterpreterSpec) *Interpreter {
	t.Helper()
	ri := resourceInterpreter("widgets", spec)
	in, err := Compile(ri, builtin(ri.Spec.Target))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func builtin(t workv1alpha1.InterpreterTarget) health.Interpreter {
	return health.Builtin(schema.GroupKind{Group: t.Group, Kind: t.Kind})
}

func healthExpr(expr string) *workv1alpha1.InterpreterHealth {
	return &workv1alpha1.InterpreterHealth{Expression: expr}
}

func feedback(nameAndPath ...string) []workv1alpha1.InterpreterFeedback {
	var out []workv1alpha1.InterpreterFeedback
	for i := 0; i+1 < len(nameAndPath); i += 2 {
		out = append(out, workv1alpha1.InterpreterFeedback{Name: nameAndPath[i], JSONPath: nameAndPath[i+1]})
	}
	return out
}

func parse(t *testing.T, raw string) template.Manifest {
	t.Helper()
	ms, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}})
	if err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

const (
	widgetJSON     = `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":3}}`
	deploymentJSON = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}`
)

func TestCompile(t *testing.T) {
	tripleLoop := `object.spec.a.all(x, object.spec.b.all(y, object.spec.c.all(z, x == y && y == z))) ? 'Healthy' : 'Degraded'`
	cases := map[string]struct {
		spec workv1alpha1.ResourceInterpreterSpec
		want *Problem
	}{
		"a valid health expression": {
			spec: workv1alpha1.ResourceInterpreterSpec{
				StatusFeedback: feedback("ready", ".status.readyReplicas"),
				Health:         healthExpr(`has(status.ready) && status.ready >= share ? 'Healthy' : 'Progressing'`),
			},
		},
		"a map result": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`{'state': 'Degraded', 'reason': 'Broken', 'message': 'it broke'}`)},
		},
		"a map result of unknown value types": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`{'state': object.spec.state}`)},
		},
		"two nested loops fit": {
			spec: workv1alpha1.ResourceInterpreterSpec{Dependencies: &workv1alpha1.InterpreterDependencies{Expression: podTemplateDependencies}},
		},
		"only parts that fall back": {
			spec: workv1alpha1.ResourceInterpreterSpec{Target: deployment, Retain: []string{".spec.replicas"}},
		},
		"an aggregation of a fallback's value": {
			spec: workv1alpha1.ResourceInterpreterSpec{
				Target:      deployment,
				Aggregation: []workv1alpha1.InterpreterAggregation{{Feedback: "readyReplicas", Operation: workv1alpha1.AggregationSum}},
			},
		},
		"a syntax error": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`status.ready >= ? 'Healthy' : 'Progressing'`)},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression: line 1, column 17: Syntax error: extraneous input '?' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} (and 1 more)"},
		},
		"a type error": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`share == 'three' ? 'Healthy' : 'Progressing'`)},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression: line 1, column 7: found no matching overload for '_==_' applied to '(int, string)'"},
		},
		"an undeclared variable": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`replicas > 0 ? 'Healthy' : 'Progressing'`)},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression: line 1, column 1: undeclared reference to 'replicas' (in container '')"},
		},
		"dependencies see object only": {
			spec: workv1alpha1.ResourceInterpreterSpec{Dependencies: &workv1alpha1.InterpreterDependencies{Expression: `status.x`}},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.dependencies.expression: line 1, column 1: undeclared reference to 'status' (in container '')"},
		},
		"health returns a number": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`share`)},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression returns int: return a state such as 'Healthy', or a map {'state': ..., 'reason': ..., 'message': ...}"},
		},
		"health returns a map of numbers": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`{'state': 1}`)},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression returns map(string, int): return a state such as 'Healthy', or a map {'state': ..., 'reason': ..., 'message': ...}"},
		},
		"dependencies return a map": {
			spec: workv1alpha1.ResourceInterpreterSpec{Dependencies: &workv1alpha1.InterpreterDependencies{Expression: `{'kind': 'Secret', 'name': 'x'}`}},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.dependencies.expression returns map(string, string): return a list of maps {'kind': ..., 'name': ...}"},
		},
		"three nested loops exceed the budget": {
			spec: workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(tripleLoop)},
			want: &Problem{Reason: workv1alpha1.ReasonCostLimitExceeded, Message: "spec.health.expression may cost up to 27060603, more than the 10000000 allowed: nest fewer loops over lists"},
		},
		"a replicas path without a dot": {
			spec: workv1alpha1.ResourceInterpreterSpec{Replicas: []string{".spec.replicas", "spec.workers"}},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: `spec.replicas[1]: field path "spec.workers" must start with a dot, as in .spec.replicas`},
		},
		"a feedback jsonPath that does not parse": {
			spec: workv1alpha1.ResourceInterpreterSpec{StatusFeedback: feedback("ready", ".status.conditions[?(@.type==")},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.statusFeedback[0].jsonPath: unterminated filter"},
		},
		"a feedback name declared twice": {
			spec: workv1alpha1.ResourceInterpreterSpec{StatusFeedback: feedback("ready", ".status.ready", "ready", ".status.readyReplicas")},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.statusFeedback[1]: the name ready is declared twice: give each value its own name"},
		},
		"a retained path that does not parse": {
			spec: workv1alpha1.ResourceInterpreterSpec{Retain: []string{".spec.replicas", ".spec.{"}},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: `spec.retain[1]: unrecognized character in action: U+007B '{'`},
		},
		"an aggregation of a value nobody reports": {
			spec: workv1alpha1.ResourceInterpreterSpec{
				StatusFeedback: feedback("ready", ".status.ready"),
				Aggregation:    []workv1alpha1.InterpreterAggregation{{Feedback: "phase", Operation: workv1alpha1.AggregationCount}},
			},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.aggregation[0].feedback: phase is not reported: declare it in spec.statusFeedback"},
		},
		"a webhook caBundle without a certificate": {
			spec: workv1alpha1.ResourceInterpreterSpec{Webhook: &workv1alpha1.InterpreterWebhook{URL: ptr.To("https://interpreter.example.com"),
				CABundle: []byte("not a certificate"), Operations: []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth}}},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.webhook.caBundle holds no PEM certificate: give the PEM (not base64 of base64) of the CA that signs the webhook's serving certificate, or leave it out for the system roots"},
		},
		"an unknown aggregation": {
			spec: workv1alpha1.ResourceInterpreterSpec{
				StatusFeedback: feedback("ready", ".status.ready"),
				Aggregation:    []workv1alpha1.InterpreterAggregation{{Feedback: "ready", Operation: "Average"}},
			},
			want: &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: `spec.aggregation[0].operation: "Average" is not Sum, Min, Max or Count`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ri := resourceInterpreter("widgets", tc.spec)
			_, err := Compile(ri, builtin(ri.Spec.Target))
			var got *Problem
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("error %v is not a *Problem", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
}

// podTemplateDependencies names what a Deployment's pod template needs.
const podTemplateDependencies = `(object.spec.template.spec.containers + object.spec.template.spec.?initContainers.orValue([])).map(c,
  c.?envFrom.orValue([]).filter(e, has(e.configMapRef)).map(e, {'kind': 'ConfigMap', 'name': e.configMapRef.name}) +
  c.?envFrom.orValue([]).filter(e, has(e.secretRef)).map(e, {'kind': 'Secret', 'name': e.secretRef.name}) +
  c.?env.orValue([]).filter(e, has(e.valueFrom) && has(e.valueFrom.configMapKeyRef)).map(e, {'kind': 'ConfigMap', 'name': e.valueFrom.configMapKeyRef.name}) +
  c.?env.orValue([]).filter(e, has(e.valueFrom) && has(e.valueFrom.secretKeyRef)).map(e, {'kind': 'Secret', 'name': e.valueFrom.secretKeyRef.name})
).flatten() +
object.spec.template.spec.?volumes.orValue([]).filter(v, has(v.configMap)).map(v, {'kind': 'ConfigMap', 'name': v.configMap.name}) +
object.spec.template.spec.?volumes.orValue([]).filter(v, has(v.secret)).map(v, {'kind': 'Secret', 'name': v.secret.secretName}) +
object.spec.template.spec.?imagePullSecrets.orValue([]).map(s, {'kind': 'Secret', 'name': s.name}) +
(has(object.spec.template.spec.serviceAccountName) ? [{'kind': 'ServiceAccount', 'name': object.spec.template.spec.serviceAccountName}] : [])`

func TestParts(t *testing.T) {
	sum := []workv1alpha1.InterpreterAggregation{{Feedback: "ready", Operation: workv1alpha1.AggregationSum}}
	type parts struct {
		Name        string
		Replicas    []string
		Feedback    []string // names
		Aggregation []workv1alpha1.InterpreterAggregation
		Retain      []string
	}
	deploymentFeedback := []string{"specReplicas", "replicas", "readyReplicas", "availableReplicas", "updatedReplicas",
		"progressingReason", "replicaFailure", "replicaFailureMessage", "generation", "observedGeneration"}
	cases := map[string]struct {
		spec     workv1alpha1.ResourceInterpreterSpec
		manifest string
		want     parts
	}{
		"a kind that is not built in": {
			spec: workv1alpha1.ResourceInterpreterSpec{
				Replicas:       []string{".spec.head.replicas", ".spec.workers.replicas"},
				StatusFeedback: feedback("ready", ".status.ready"),
				Health:         healthExpr(`'Healthy'`),
				Aggregation:    sum,
				Retain:         []string{".spec.workers.replicas"},
			},
			manifest: widgetJSON,
			want: parts{Name: "ResourceInterpreter widgets", Replicas: []string{".spec.head.replicas", ".spec.workers.replicas"},
				Feedback: []string{"ready"}, Aggregation: sum, Retain: []string{".spec.workers.replicas"}},
		},
		"a kind that is not built in, nothing declared": {
			spec:     workv1alpha1.ResourceInterpreterSpec{Webhook: &workv1alpha1.InterpreterWebhook{}},
			manifest: widgetJSON,
			want:     parts{Name: "ResourceInterpreter widgets"},
		},
		"a built-in kind: what is left out falls back": {
			spec:     workv1alpha1.ResourceInterpreterSpec{Target: deployment, Retain: []string{".spec.replicas"}},
			manifest: deploymentJSON,
			want: parts{Name: "ResourceInterpreter widgets", Replicas: []string{".spec.replicas"}, Feedback: deploymentFeedback,
				Retain: []string{".spec.replicas"}},
		},
		"a built-in kind with its own health and feedback: the user's only": {
			spec: workv1alpha1.ResourceInterpreterSpec{Target: deployment, StatusFeedback: feedback("ready", ".status.readyReplicas"),
				Health: healthExpr(`'Healthy'`)},
			manifest: deploymentJSON,
			want:     parts{Name: "ResourceInterpreter widgets", Replicas: []string{".spec.replicas"}, Feedback: []string{"ready"}},
		},
		"a built-in kind with feedback but the built-in health: both feedbacks, the user's name wins": {
			spec: workv1alpha1.ResourceInterpreterSpec{Target: deployment, StatusFeedback: feedback("ready", ".status.readyReplicas", "replicas", ".spec.replicas"),
				Aggregation: sum},
			manifest: deploymentJSON,
			want: parts{Name: "ResourceInterpreter widgets", Replicas: []string{".spec.replicas"},
				Feedback: append([]string{"ready", "replicas"}, cut(deploymentFeedback, "replicas")...), Aggregation: sum},
		},
		"a built-in kind with an aggregation of a built-in value": {
			spec: workv1alpha1.ResourceInterpreterSpec{Target: deployment, StatusFeedback: feedback("ready", ".status.readyReplicas"),
				Health: healthExpr(`'Healthy'`), Aggregation: []workv1alpha1.InterpreterAggregation{{Feedback: "updatedReplicas", Operation: workv1alpha1.AggregationMin}}},
			manifest: deploymentJSON,
			want: parts{Name: "ResourceInterpreter widgets", Replicas: []string{".spec.replicas"},
				Feedback: append([]string{"ready"}, deploymentFeedback...), Aggregation: []workv1alpha1.InterpreterAggregation{{Feedback: "updatedReplicas", Operation: workv1alpha1.AggregationMin}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := compileSpec(t, tc.spec)
			got := parts{Name: in.Name(), Replicas: in.ReplicaPaths(), Aggregation: in.Aggregation(), Retain: in.Retain()}
			for _, p := range in.FeedbackPaths(parse(t, tc.manifest)) {
				got.Feedback = append(got.Feedback, p.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

func cut(names []string, name string) []string {
	var out []string
	for _, n := range names {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}
