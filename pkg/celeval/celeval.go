// Package celeval evaluates CEL programs within a bound on their loop steps: the ResourceInterpreters'
// expressions and the overrides' share it.
//
// CEL's own runtime cost tracking (cel.CostLimit) is not used: in cel-go v0.26 it takes time quadratic in the
// number of loop steps (16,000 steps of a plain all(): 1.4 s instead of 4 ms), so it could not bound the time
// it is meant to bound. Counting loop steps is as deterministic (no clock, no context) and linear.
package celeval

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	celinterpreter "github.com/google/cel-go/interpreter"
)

// ProgramOptions make a program whose loops ask its activation whether to go on (see Eval) and whose constant
// regular expressions are compiled once. Programs evaluated with Eval must be built with them.
var ProgramOptions = []cel.ProgramOption{cel.InterruptCheckFrequency(1), cel.EvalOptions(cel.OptOptimize)}

// Eval evaluates prog with vars, stopping it after maxSteps loop steps in all.
func Eval(prog cel.Program, vars map[string]any, maxSteps int) (ref.Val, error) {
	act, err := celinterpreter.NewActivation(vars)
	if err != nil {
		return nil, err
	}
	b := &budget{Activation: act, max: maxSteps}
	out, _, err := prog.Eval(b)
	switch {
	case b.steps > maxSteps:
		// Checked first: an interrupted inner loop is an error that an outer && or || may have absorbed.
		return nil, fmt.Errorf("takes more than %d loop steps: loop over fewer or shorter lists", maxSteps)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// budget counts the loop steps of one evaluation: CEL asks its activation for #interrupted after each step
// of a loop built with an interrupt check frequency, and stops the loop on true.
type budget struct {
	celinterpreter.Activation
	steps, max int
}

func (b *budget) ResolveName(name string) (any, bool) {
	if name == "#interrupted" {
		b.steps++
		return b.steps > b.max, true
	}
	return b.Activation.ResolveName(name)
}
