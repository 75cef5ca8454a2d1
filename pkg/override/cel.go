package override

import (
	"fmt"
	"math"
	"reflect"

	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/celeval"
)

// maxIterations bounds one evaluation: the same limits as the ResourceInterpreters' (celeval).
const maxIterations = celeval.MaxIterations

// varCluster is the one variable an override's expression sees.
const varCluster = "cluster"

// clusterType is the CEL type of cluster: Cluster itself, its fields named by their cel tags, so that a typo
// (cluster.lables) is refused when compiled rather than failing on every cluster.
var clusterType = cel.ObjectType("override.Cluster")

// env is the CEL environment of overrides: the interpreters' libraries at the same pinned versions, and cluster.
var env = mustEnv()

func mustEnv() *cel.Env {
	e, err := cel.NewEnv(append(celeval.Libraries(),
		ext.NativeTypes(reflect.TypeFor[Cluster](), ext.ParseStructTags(true)),
		cel.Variable(varCluster, clusterType),
	)...)
	if err != nil {
		panic("override: the CEL environment does not build: " + err.Error())
	}
	return e
}

// result is what an expression must return.
type result int

const (
	resultJSON   result = iota // a patch's value
	resultString               // an image part
)

// compileExpr type-checks one expression, checks what it returns and its worst-case cost, and makes its program.
// The message says what is wrong, without the field (the caller names it).
func compileExpr(expr string, want result) (cel.Program, string) {
	ast, msg := celeval.Compile(env, expr)
	if msg != "" {
		return nil, msg
	}
	out := ast.OutputType()
	switch want {
	case resultString:
		if k := out.Kind(); k != celtypes.StringKind && k != celtypes.DynKind {
			return nil, fmt.Sprintf("returns %s: return a string", out)
		}
	default:
		if !jsonType(out) {
			return nil, fmt.Sprintf("returns %s: return a JSON value (a string, number, bool, null, list or map with string keys)", out)
		}
	}
	if msg := celeval.CheckCost(env, ast); msg != "" {
		return nil, msg
	}
	prog, err := env.Program(ast, celeval.ProgramOptions...)
	if err != nil {
		return nil, err.Error()
	}
	return prog, ""
}

// jsonType reports whether values of t may be JSON (dyn where the checker cannot tell).
func jsonType(t *cel.Type) bool {
	switch t.Kind() {
	case celtypes.DynKind, celtypes.BoolKind, celtypes.IntKind, celtypes.UintKind, celtypes.DoubleKind,
		celtypes.StringKind, celtypes.NullTypeKind:
		return true
	case celtypes.ListKind:
		return jsonType(t.Parameters()[0])
	case celtypes.MapKind:
		k := t.Parameters()[0].Kind()
		return (k == celtypes.StringKind || k == celtypes.DynKind) && jsonType(t.Parameters()[1])
	}
	return false
}

// eval evaluates a program for a cluster within maxIterations loop steps (celeval).
func eval(prog cel.Program, c Cluster) (ref.Val, error) {
	return celeval.Eval(prog, map[string]any{varCluster: c}, maxIterations)
}

// maxJSONDepth bounds the nesting of an expression's result.
const maxJSONDepth = 64

// toJSON turns an expression's result into the value encoding/json would decode from its JSON: nil, bool,
// int64, float64, string, []any or map[string]any. Anything else is an error that says what it is.
func toJSON(v ref.Val, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("the result nests deeper than %d levels", maxJSONDepth)
	}
	switch x := v.(type) {
	case celtypes.Null:
		return nil, nil
	case celtypes.Bool:
		return bool(x), nil
	case celtypes.Int:
		return int64(x), nil
	case celtypes.Uint:
		if uint64(x) > math.MaxInt64 {
			return nil, fmt.Errorf("the result holds %du, more than a manifest's integers hold", uint64(x))
		}
		return int64(x), nil
	case celtypes.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the result holds %v, which JSON cannot hold", f)
		}
		return f, nil
	case celtypes.String:
		return string(x), nil
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == celtypes.True; {
			item, err := toJSON(it.Next(), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, item)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case traits.Mapper:
		out := map[string]any{}
		for it := x.Iterator(); it.HasNext() == celtypes.True; {
			k := it.Next()
			key, ok := k.(celtypes.String)
			if !ok {
				return nil, fmt.Errorf("the result has a map key %v of type %s: JSON keys are strings", k, k.Type().TypeName())
			}
			item, err := toJSON(x.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(key)] = item
		}
		return out, nil
	}
	return nil, fmt.Errorf("the result holds a %s, which is not JSON", v.Type().TypeName())
}
