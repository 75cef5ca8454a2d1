package celeval

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

// TestCompileAndCheckCost: what every user expression goes through, the messages the interpreters and the
// overrides report.
func TestCompileAndCheckCost(t *testing.T) {
	env, err := cel.NewEnv(append(Libraries(), cel.Variable("items", cel.ListType(cel.DynType)))...)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		expr               string
		wantCompile        string
		wantCompilePrefix  bool
		wantCostSubstrings []string
	}{
		"compiles within the budget":      {expr: `items.all(a, items.exists(b, a == b))`},
		"the pinned libraries are there":  {expr: `"a,b".split(",").size() == 2 && optional.of(1).hasValue()`},
		"a syntax error, line and column": {expr: "items.all(a,\n  a ==)", wantCompile: "line 2, column 7: Syntax error", wantCompilePrefix: true},
		"several problems are counted":    {expr: `nope1 + nope2`, wantCompile: "line 1, column 1: undeclared reference to 'nope1' (in container '') (and 1 more)"},
		"three nested loops are too much": {expr: `items.all(a, items.all(b, items.all(c, items.all(d, a == d))))`,
			wantCostSubstrings: []string{"may cost up to", "more than the 10000000 allowed: nest fewer loops over lists"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ast, msg := Compile(env, tc.expr)
			switch {
			case tc.wantCompilePrefix && !strings.HasPrefix(msg, tc.wantCompile), !tc.wantCompilePrefix && msg != tc.wantCompile:
				t.Fatalf("Compile message %q, want %q", msg, tc.wantCompile)
			case msg != "":
				return
			}
			cost := CheckCost(env, ast)
			for _, want := range tc.wantCostSubstrings {
				if !strings.Contains(cost, want) {
					t.Errorf("CheckCost %q, want it to contain %q", cost, want)
				}
			}
			if len(tc.wantCostSubstrings) == 0 && cost != "" {
				t.Errorf("CheckCost %q, want none", cost)
			}
		})
	}
}
