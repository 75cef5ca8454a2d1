package celeval

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

func TestEval(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("n", cel.IntType))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		expr    string
		max     int
		want    any
		wantErr string
	}{
		"no loop":                       {expr: "n + 1", max: 1, want: int64(3)},
		"a loop within its steps":       {expr: "[1, 2, 3].all(x, x > 0)", max: 3, want: true},
		"a loop beyond its steps":       {expr: "[1, 2, 3, 4].all(x, x > 0)", max: 3, wantErr: "takes more than 3 loop steps"},
		"an absorbed stop still counts": {expr: "[1, 2, 3, 4].all(x, x > 0) || true", max: 3, wantErr: "takes more than 3 loop steps"},
		"an evaluation error":           {expr: "1 / (n - 2)", max: 1, wantErr: "division by zero"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			prog, err := env.Program(ast, ProgramOptions...)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Eval(prog, map[string]any{"n": 2}, tc.max)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || out.Value() != tc.want {
				t.Fatalf("Eval = %v, %v; want %v", out, err, tc.want)
			}
		})
	}
}
