package celeval

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// Limits on what one expression a user gives the manager may cost: the same for ResourceInterpreters and
// overrides.
const (
	// CostBudget is the most an expression may cost by the CEL checker's worst-case estimate, in CEL's cost
	// units (about one per comparison, field selection or loop step; about 30 per map created): Kubernetes'
	// limit for one CRD validation rule.
	CostBudget = 10_000_000
	// EstimatedMaxItems is how many entries the cost estimate assumes a list or map it cannot size has.
	// A pod template has far fewer containers, env entries or volumes.
	EstimatedMaxItems = 100
	// EstimatedMaxStringSize is how many characters the cost estimate assumes a string has.
	EstimatedMaxStringSize = 64 << 10
	// MaxIterations stops one evaluation after that many loop steps in all (the steps of all, exists, map,
	// filter, ... nested or not), whatever the estimate said: real objects may be larger than it assumes.
	// Outside loops, the work of an expression grows with its own length and the sizes of its variables.
	MaxIterations = 100_000
)

// Libraries are the CEL libraries every expression sees, pinned to versions so that an update of cel-go does
// not change what compiles. An environment adds its variables to them.
func Libraries() []cel.EnvOption {
	return []cel.EnvOption{
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(4)),
		ext.Lists(ext.ListsVersion(3)),
	}
}

// Compile parses and type-checks expr in env. On failure the message names the first problem's line and column
// (and how many more there are), without the field: the caller names it.
func Compile(env *cel.Env, expr string) (*cel.Ast, string) {
	ast, iss := env.Compile(expr)
	if iss.Err() == nil {
		return ast, ""
	}
	errs := iss.Errors()
	e := errs[0]
	msg := fmt.Sprintf("line %d, column %d: %s", e.Location.Line(), e.Location.Column()+1, e.Message)
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return nil, msg
}

// CheckCost says, when ast's worst-case cost (lists and maps of EstimatedMaxItems entries, strings of
// EstimatedMaxStringSize characters) is above CostBudget or cannot be estimated, what is wrong; "" otherwise.
func CheckCost(env *cel.Env, ast *cel.Ast) string {
	est, err := env.EstimateCost(ast, sizeEstimator{})
	if err != nil {
		return fmt.Sprintf("its cost cannot be estimated: %v", err)
	}
	if est.Max > CostBudget {
		return fmt.Sprintf("may cost up to %d, more than the %d allowed: nest fewer loops over lists", est.Max, CostBudget)
	}
	return ""
}

// sizeEstimator bounds, for the cost estimate, the sizes CEL cannot tell from the expression: those of the
// variables and of what is computed from them.
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
