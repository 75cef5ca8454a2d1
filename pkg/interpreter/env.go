package interpreter

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/celeval"
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
	// dependenciesEnv: object, the manifest as in the template (or as a cluster's overrides leave it).
	dependenciesEnv = mustEnv(cel.Variable(varObject, cel.MapType(cel.StringType, cel.DynType)))
	// healthEnv: object, the manifest as delivered; status, the feedback values by name; share.
	healthEnv = mustEnv(
		cel.Variable(varObject, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varStatus, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable(varShare, cel.IntType),
	)
)

func mustEnv(vars ...cel.EnvOption) *cel.Env {
	env, err := cel.NewEnv(append(celeval.Libraries(), vars...)...)
	if err != nil {
		panic("interpreter: the CEL environment does not build: " + err.Error())
	}
	return env
}

// eval evaluates a program within celeval.MaxIterations loop steps.
func eval(prog cel.Program, vars map[string]any) (ref.Val, error) {
	return celeval.Eval(prog, vars, celeval.MaxIterations)
}
