package interpreter

import (
	"crypto/x509"
	"fmt"
	"slices"

	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/celeval"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Problem is why the manager does not use an interpreter, or why one failed: a condition reason of
// api/v1alpha1 and a message that names the part at fault and says what to fix.
type Problem struct {
	Reason  string
	Message string
}

func (p *Problem) Error() string { return p.Message }

func invalid(format string, args ...any) *Problem {
	return &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: fmt.Sprintf(format, args...)}
}

// Interpreter is a compiled ResourceInterpreter. It is not changed once compiled, so reconciles may share it.
type Interpreter struct {
	name     string
	fallback health.Interpreter // nil when the kind is not built in

	replicas    []string
	feedback    []workv1.JsonPath // the user's, named without health.FeedbackPrefix
	aggregation []workv1alpha1.InterpreterAggregation
	retain      []string
	// withFallbackFeedback: the fallback's feedback is asked for beside the user's, because its health
	// judges the manifest or an aggregation names one of its values.
	withFallbackFeedback bool

	health       cel.Program // nil: the fallback's health
	dependencies cel.Program // nil: none

	// hook is the webhook, nil without one; webhooks calls it.
	hook     *workv1alpha1.InterpreterWebhook
	webhooks Webhooks
}

var _ health.Interpreter = (*Interpreter)(nil)

// Compile validates ri and compiles its expressions. fallback is the built-in interpreter of its kind
// (health.Builtin), nil when there is none: it serves every part ri leaves out. The error is a *Problem.
func Compile(ri *workv1alpha1.ResourceInterpreter, fallback health.Interpreter) (*Interpreter, error) {
	in, p := compileInterpreter(ri, fallback, nil)
	if p != nil {
		return nil, p
	}
	return in, nil
}

func compileInterpreter(ri *workv1alpha1.ResourceInterpreter, fallback health.Interpreter, webhooks Webhooks) (*Interpreter, *Problem) {
	s := &ri.Spec
	in := &Interpreter{
		name:        ri.Name,
		fallback:    fallback,
		replicas:    slices.Clone(s.Replicas),
		aggregation: slices.Clone(s.Aggregation),
		retain:      slices.Clone(s.Retain),
		hook:        s.Webhook.DeepCopy(),
		webhooks:    webhooks,
	}
	if h := s.Webhook; h != nil && len(h.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(h.CABundle) {
		// Every call would fail on it: refused here, where the interpreter says so, rather than on each cluster.
		return nil, invalid("spec.webhook.caBundle holds no PEM certificate: give the PEM (not base64 of base64) of the CA that signs the webhook's serving certificate, or leave it out for the system roots")
	}
	for i, p := range s.Replicas {
		if _, err := template.FieldPathKeys(p); err != nil {
			return nil, invalid("spec.replicas[%d]: %v", i, err)
		}
	}
	declared := map[string]bool{}
	for i, f := range s.StatusFeedback {
		if declared[f.Name] {
			return nil, invalid("spec.statusFeedback[%d]: the name %s is declared twice: give each value its own name", i, f.Name)
		}
		declared[f.Name] = true
		if err := parseJSONPath(f.JSONPath); err != nil {
			return nil, invalid("spec.statusFeedback[%d].jsonPath: %v", i, err)
		}
		in.feedback = append(in.feedback, workv1.JsonPath{Name: f.Name, Path: f.JSONPath})
	}
	for i, p := range s.Retain {
		if err := parseJSONPath(p); err != nil {
			return nil, invalid("spec.retain[%d]: %v", i, err)
		}
	}
	fallbackNames := fallbackFeedbackNames(s.Target, fallback)
	for i, a := range s.Aggregation {
		switch {
		case declared[a.Feedback]:
		case fallbackNames[a.Feedback]:
			in.withFallbackFeedback = true
		default:
			return nil, invalid("spec.aggregation[%d].feedback: %s is not reported: declare it in spec.statusFeedback", i, a.Feedback)
		}
		switch a.Operation {
		case workv1alpha1.AggregationSum, workv1alpha1.AggregationMin, workv1alpha1.AggregationMax, workv1alpha1.AggregationCount:
		default:
			return nil, invalid("spec.aggregation[%d].operation: %q is not Sum, Min, Max or Count", i, a.Operation)
		}
	}
	if s.Health != nil {
		prog, p := compile(healthEnv, "spec.health.expression", s.Health.Expression, healthResult,
			"a state such as 'Healthy', or a map {'state': ..., 'reason': ..., 'message': ...}")
		if p != nil {
			return nil, p
		}
		in.health = prog
	} else if len(s.StatusFeedback) > 0 {
		in.withFallbackFeedback = true // the fallback's health reads its own values
	}
	if s.Dependencies != nil {
		prog, p := compile(dependenciesEnv, "spec.dependencies.expression", s.Dependencies.Expression, dependenciesResult,
			"a list of maps {'kind': ..., 'name': ...}")
		if p != nil {
			return nil, p
		}
		in.dependencies = prog
	}
	return in, nil
}

// compile type-checks one expression, checks that it returns what its part needs and that its worst-case cost
// is within celeval.CostBudget, and makes the program that eval evaluates within celeval.MaxIterations.
func compile(env *cel.Env, part, expr string, returns func(*cel.Type) bool, want string) (cel.Program, *Problem) {
	ast, msg := celeval.Compile(env, expr)
	if msg != "" {
		return nil, invalid("%s: %s", part, msg)
	}
	if !returns(ast.OutputType()) {
		return nil, invalid("%s returns %s: return %s", part, ast.OutputType(), want)
	}
	if msg := celeval.CheckCost(env, ast); msg != "" {
		return nil, &Problem{Reason: workv1alpha1.ReasonCostLimitExceeded, Message: part + " " + msg}
	}
	prog, err := env.Program(ast, celeval.ProgramOptions...)
	if err != nil {
		return nil, invalid("%s: %v", part, err)
	}
	return prog, nil
}

// healthResult: a string, or a map of strings (dyn where the checker cannot tell).
func healthResult(t *cel.Type) bool {
	return t.Kind() == celtypes.DynKind || t.Kind() == celtypes.StringKind || stringMap(t)
}

// dependenciesResult: a list of maps of strings (dyn where the checker cannot tell).
func dependenciesResult(t *cel.Type) bool {
	if t.Kind() == celtypes.DynKind {
		return true
	}
	if t.Kind() != celtypes.ListKind {
		return false
	}
	item := t.Parameters()[0]
	return item.Kind() == celtypes.DynKind || stringMap(item)
}

func stringMap(t *cel.Type) bool {
	if t.Kind() != celtypes.MapKind {
		return false
	}
	for _, p := range t.Parameters() {
		if p.Kind() != celtypes.DynKind && p.Kind() != celtypes.StringKind {
			return false
		}
	}
	return true
}

// parseJSONPath parses a Kubernetes JSONPath as OCM's agent does, in braces.
func parseJSONPath(p string) error {
	return jsonpath.New("path").AllowMissingKeys(true).Parse("{" + p + "}")
}

// fallbackFeedbackNames are the names of the values the fallback asks for on manifests of the target kind.
// The manifest asked about is a LoadBalancer, so that a Service's names are included: the built-in
// interpreter asks nothing of other Services.
func fallbackFeedbackNames(t workv1alpha1.InterpreterTarget, fallback health.Interpreter) map[string]bool {
	if fallback == nil {
		return nil
	}
	gvk := schema.GroupVersionKind{Group: t.Group, Version: "v1", Kind: t.Kind}
	if len(t.Versions) > 0 {
		gvk.Version = t.Versions[0]
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"type": "LoadBalancer"}}}
	obj.SetGroupVersionKind(gvk)
	obj.SetName("example")
	names := map[string]bool{}
	for _, p := range fallback.FeedbackPaths(template.Manifest{Object: obj, GVK: gvk}) {
		names[p.Name] = true
	}
	return names
}

// Name says where the interpretation comes from: "ResourceInterpreter <name>".
func (i *Interpreter) Name() string { return "ResourceInterpreter " + i.name }

// ReplicaPaths are spec.replicas, else the fallback's.
func (i *Interpreter) ReplicaPaths() []string {
	if len(i.replicas) > 0 || i.fallback == nil {
		return i.replicas
	}
	return i.fallback.ReplicaPaths()
}

// FeedbackPaths are spec.statusFeedback (else the fallback's), named without health.FeedbackPrefix. The
// fallback's values are asked for beside the user's when the fallback judges health or an aggregation names
// one of them; a user's name wins over the fallback's.
func (i *Interpreter) FeedbackPaths(m template.Manifest) []workv1.JsonPath {
	if len(i.feedback) > 0 && !i.withFallbackFeedback {
		return i.feedback
	}
	out := slices.Clone(i.feedback)
	if i.fallback == nil {
		return out
	}
	for _, p := range i.fallback.FeedbackPaths(m) {
		if !slices.ContainsFunc(i.feedback, func(u workv1.JsonPath) bool { return u.Name == p.Name }) {
			out = append(out, p)
		}
	}
	return out
}

// Aggregation is spec.aggregation, else the fallback's.
func (i *Interpreter) Aggregation() []workv1alpha1.InterpreterAggregation {
	if len(i.aggregation) > 0 || i.fallback == nil {
		return i.aggregation
	}
	return i.fallback.Aggregation()
}

// Retain is spec.retain, else the fallback's.
func (i *Interpreter) Retain() []string {
	if len(i.retain) > 0 || i.fallback == nil {
		return i.retain
	}
	return i.fallback.Retain()
}

// HasDependencies reports whether the interpreter names the hub objects a manifest needs.
func (i *Interpreter) HasDependencies() bool {
	return i.dependencies != nil || i.serves(workv1alpha1.OperationInterpretDependency)
}
