package interpreter

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/celeval"
)

// Limits on what one expression may cost.
const (
	// CostBudget is the most an expression may cost by the CEL checker's worst-case estimate, in CEL's cost
	// units (about one per comparison, field selection or loop step; about 30 per map created): Kubernetes'
	// limit for one CRD validation rule.
	CostBudget = 10_000_000
	// EstimatedMaxItems is how many entries the cost estimate assumes a list or map of object or status has.
	// A pod template has far fewer containers, env entries or volumes.
	EstimatedMaxItems = 100
	// EstimatedMaxStringSize is how many characters the cost estimate assumes a string has.
	EstimatedMaxStringSize = 64 << 10
	// MaxIterations stops one evaluation after that many loop steps in all (the steps of all, exists, map,
	// filter, ... nested or not), whatever the estimate said: real objects may be larger than it assumes.
	// Outside loops, the work of an expression grows with its own length and the sizes of its variables.
	MaxIterations = 100_000
)

// Variable names.
const (
	varObject = "object"
	varStatus = "status"
	varShare  = "share"
)

// The CEL environments: the one place that says what an expression sees. Libraries are pinned to versions,
// so that an update of cel-go does not change what compiles.
var (
	// dependenciesEnv: object, the manifest as in the template.
	dependenciesEnv = mustEnv(cel.Variable(varObject, cel.MapType(cel.StringType, cel.DynType)))
	// healthEnv: object, the manifest as delivered; status, the feedback values by name; share.
	healthEnv = mustEnv(
		cel.Variable(varObject, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varStatus, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varShare, cel.IntType),
	)
)

func mustEnv(vars ...cel.EnvOption) *cel.Env {
	opts := append([]cel.EnvOption{
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(4)),
		ext.Lists(ext.ListsVersion(3)),
	}, vars...)
	env, err := cel.NewEnv(opts...)
	if err != nil {
		panic("interpreter: the CEL environment does not build: " + err.Error())
	}
	return env
}

// sizeEstimator bounds, for the cost estimate, the sizes CEL cannot tell from the expression: those of
// object, status and what is computed from them (see EstimatedMaxItems).
type sizeEstimator struct{}

func (sizeEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	switch n.Type().Kind() {
	case celtypes.StringKind, celtypes.BytesKind:
		return &checker.SizeEstimate{Min: 0, Max: EstimatedMaxStringSize}
	}
	return &checker.SizeEstimate{Min: 0, Max: EstimatedMaxItems}
}

func (sizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// eval evaluates a program within MaxIterations loop steps (celeval).
func eval(prog cel.Program, vars map[string]any) (ref.Val, error) {
	return celeval.Eval(prog, vars, MaxIterations)
}
