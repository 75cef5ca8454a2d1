package interpreter

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// MaxMessage bounds the message of a verdict or an override's status, which end up in conditions and status
// (and in events, whose note the API server refuses beyond 1024 bytes).
const MaxMessage = 1024

// reasonPattern is the pattern of a condition's reason (metav1.Condition).
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// Health judges a manifest on one cluster with spec.health.expression, else with the fallback's health (no
// opinion without one). An expression that fails, costs too much or returns something else than a state is a
// Degraded verdict with InterpreterFailed.
func (i *Interpreter) Health(in health.ManifestInput, f health.Feedback) (health.Verdict, bool) {
	if i.serves(workv1alpha1.OperationInterpretHealth) {
		v, err := i.webhookHealth(in, f)
		switch {
		case err == nil:
			if v.Message != "" {
				v.Message = Truncate(in.Manifest.ID() + ": " + v.Message)
			}
			return v, true
		case !i.ignoreFailures():
			return health.Verdict{
				State:   health.Degraded,
				Reason:  workv1alpha1.ReasonInterpreterFailed,
				Message: Truncate(fmt.Sprintf("%s: %s: webhook InterpretHealth: %v", in.Manifest.ID(), i.Name(), err)),
			}, true
		}
		// Ignore: the declarative parts and the built-in interpretation judge instead.
	}
	if i.health == nil {
		if i.fallback == nil {
			return health.Verdict{}, false
		}
		return i.fallback.Health(in, f)
	}
	id := in.Manifest.ID()
	v, err := i.evalHealth(in, f)
	if err != nil {
		return health.Verdict{
			State:   health.Degraded,
			Reason:  workv1alpha1.ReasonInterpreterFailed,
			Message: Truncate(fmt.Sprintf("%s: %s: spec.health.expression: %v", id, i.Name(), err)),
		}, true
	}
	if v.Message != "" {
		v.Message = Truncate(id + ": " + v.Message)
	}
	return v, true
}

func (i *Interpreter) evalHealth(in health.ManifestInput, f health.Feedback) (health.Verdict, error) {
	// The manifest as delivered to this cluster: a split manifest carries the cluster's shares.
	object := in.Delivered()
	if object == nil {
		object = map[string]any{}
	}
	status, err := statusOf(f)
	if err != nil {
		return health.Verdict{}, err
	}
	share := int64(-1)
	if in.Share != nil {
		share = *in.Share
	}
	out, err := eval(i.health, map[string]any{varObject: object, varStatus: status, varShare: share})
	if err != nil {
		return health.Verdict{}, err
	}
	return verdictOf(out)
}

// statusOf makes the status variable: the feedback values as CEL values, JsonRaw decoded.
func statusOf(f health.Feedback) (map[string]any, error) {
	out := make(map[string]any, len(f))
	for name, v := range f {
		switch {
		case v.Type == workv1.Integer && v.Integer != nil:
			out[name] = *v.Integer
		case v.Type == workv1.String && v.String != nil:
			out[name] = *v.String
		case v.Type == workv1.Boolean && v.Boolean != nil:
			out[name] = *v.Boolean
		case v.Type == workv1.JsonRaw && v.JsonRaw != nil:
			var x any
			// apimachinery's json makes integers int64, as in unstructured objects.
			if err := json.Unmarshal([]byte(*v.JsonRaw), &x); err != nil {
				return nil, fmt.Errorf("status.%s is not JSON: %w", name, err)
			}
			out[name] = x
		}
	}
	return out, nil
}

// verdictOf reads what a health expression returned.
func verdictOf(out ref.Val) (health.Verdict, error) {
	var state, reason, message string
	switch r := out.(type) {
	case celtypes.String:
		state = string(r)
	case traits.Mapper:
		fields, err := stringFields(r, "state", "reason", "message")
		if err != nil {
			return health.Verdict{}, err
		}
		state, reason, message = fields["state"], fields["reason"], fields["message"]
		if state == "" {
			return health.Verdict{}, fmt.Errorf("the map it returned has no state")
		}
	default:
		return health.Verdict{}, fmt.Errorf("returned %s, not a state or a map", out.Type().TypeName())
	}
	v, ok := health.VerdictOf(state)
	if !ok {
		return health.Verdict{}, fmt.Errorf("state %q is not Healthy, Progressing, Degraded, Completed or Failed", state)
	}
	v.Message = message
	if reason == "" {
		reason = state
	}
	if len(reason) > 1024 || !reasonPattern.MatchString(reason) {
		return health.Verdict{}, fmt.Errorf("reason %q is not CamelCase", reason)
	}
	v.Reason = reason
	return v, nil
}

// stringFields reads a map whose keys are among allowed and whose values are strings.
func stringFields(m traits.Mapper, allowed ...string) (map[string]string, error) {
	out := map[string]string{}
	for it := m.Iterator(); it.HasNext() == celtypes.True; {
		k := it.Next()
		key, ok := k.(celtypes.String)
		if !ok || !slices.Contains(allowed, string(key)) {
			return nil, fmt.Errorf("the key %v is not one of %s", k, strings.Join(allowed, ", "))
		}
		val, ok := m.Get(k).(celtypes.String)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", key, m.Get(k).Type().TypeName())
		}
		out[string(key)] = string(val)
	}
	return out, nil
}

// Truncate cuts a message to MaxMessage bytes at a rune boundary, ending it with "...": messages that end up
// in conditions and status stay bounded.
func Truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// TruncateTail is fixed followed by tail, the tail cut as Truncate cuts so that the whole stays within the same
// bound; fixed is never cut, even when it alone exceeds the bound (the tail is then "..."). For a message whose
// first part says what fails and is compared from one call to the next, and whose tail quotes an error.
func TruncateTail(fixed, tail string) string {
	if len(fixed)+len(tail) <= MaxMessage {
		return fixed + tail
	}
	cut := max(MaxMessage-len(fixed)-len("..."), 0)
	for cut > 0 && !utf8.RuneStart(tail[cut]) {
		cut--
	}
	return fixed + tail[:cut] + "..."
}

// Dependency is a hub object a manifest needs: the webhook protocol's, whichever part names it.
type Dependency = webhook.Dependency

// Dependencies evaluates spec.dependencies.expression over obj, the manifest as in the template or as a
// cluster's overrides leave it: the hub objects it needs, sorted and without duplicates; none without an
// expression. The error is a *Problem with InterpreterFailed that names the interpreter and the entry at fault.
func (i *Interpreter) Dependencies(obj map[string]any) ([]Dependency, error) {
	if i.serves(workv1alpha1.OperationInterpretDependency) {
		deps, err := i.webhookDependencies(obj)
		switch {
		case err == nil:
			return sortedUnique(deps), nil
		case !i.ignoreFailures():
			return nil, &Problem{Reason: workv1alpha1.ReasonInterpreterFailed,
				Message: Truncate(fmt.Sprintf("%s: webhook InterpretDependency: %v", i.Name(), err))}
		}
	}
	if i.dependencies == nil {
		return nil, nil
	}
	deps, err := i.evalDependencies(obj)
	if err != nil {
		return nil, &Problem{
			Reason:  workv1alpha1.ReasonInterpreterFailed,
			Message: Truncate(fmt.Sprintf("%s: spec.dependencies.expression: %v", i.Name(), err)),
		}
	}
	return sortedUnique(deps), nil
}

func (i *Interpreter) evalDependencies(obj map[string]any) ([]Dependency, error) {
	if obj == nil {
		obj = map[string]any{}
	}
	out, err := eval(i.dependencies, map[string]any{varObject: obj})
	if err != nil {
		return nil, err
	}
	list, ok := out.(traits.Lister)
	if !ok {
		return nil, fmt.Errorf("returned %s, not a list", out.Type().TypeName())
	}
	var deps []Dependency
	for n, it := 0, list.Iterator(); it.HasNext() == celtypes.True; n++ {
		item := it.Next()
		m, ok := item.(traits.Mapper)
		if !ok {
			return nil, fmt.Errorf("entry %d is %s, not a map {'kind': ..., 'name': ...}", n, item.Type().TypeName())
		}
		fields, err := stringFields(m, "kind", "name")
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", n, err)
		}
		d := Dependency{Kind: fields["kind"], Name: fields["name"]}
		if !slices.Contains(webhook.DependencyKinds, d.Kind) {
			return nil, fmt.Errorf("entry %d: kind %q is not ConfigMap, Secret or ServiceAccount", n, d.Kind)
		}
		if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			return nil, fmt.Errorf("entry %d: name %q: %s", n, d.Name, errs[0])
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// sortedUnique sorts dependencies by kind and name and drops repeats, in place.
func sortedUnique(deps []Dependency) []Dependency {
	slices.SortFunc(deps, func(a, b Dependency) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return slices.Compact(deps)
}
