package interpreter

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

func TestResolve(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// at makes a Widget interpreter (with versions, all when none) created at t0 plus minutes.
	at := func(name string, minutes int, versions ...string) workv1alpha1.ResourceInterpreter {
		ri := resourceInterpreter(name, workv1alpha1.ResourceInterpreterSpec{
			Target: workv1alpha1.InterpreterTarget{Group: "example.io", Kind: "Widget", Versions: versions},
			Health: healthExpr(`'Healthy'`),
		})
		ri.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute))
		return *ri
	}
	broken := at("broken", 0)
	broken.Spec.Health = healthExpr(`share == 'three' ? 'Healthy' : 'Progressing'`)
	gadget := at("gadgets", 5)
	gadget.Spec.Target.Kind = "Gadget"
	conflict := func(winner, versions string) *Problem {
		return &Problem{Reason: workv1alpha1.ReasonTargetConflict, Message: "spec.target: ResourceInterpreter " + winner +
			", older or earlier by name, already describes Widget.example.io (" + versions + "): delete one of them or make their versions disjoint"}
	}
	cases := map[string]struct {
		list     []workv1alpha1.ResourceInterpreter
		want     map[string]*Problem
		wantUsed map[string]string // version → the interpreter used for Widget in it
	}{
		"none": {
			want:     map[string]*Problem{},
			wantUsed: map[string]string{"v1": ""},
		},
		"kinds apart": {
			list:     []workv1alpha1.ResourceInterpreter{at("widgets", 1), gadget},
			want:     map[string]*Problem{},
			wantUsed: map[string]string{"v1": "ResourceInterpreter widgets"},
		},
		"the older wins": {
			list:     []workv1alpha1.ResourceInterpreter{at("a-new", 2), at("z-old", 1)},
			want:     map[string]*Problem{"a-new": conflict("z-old", "all versions")},
			wantUsed: map[string]string{"v1": "ResourceInterpreter z-old"},
		},
		"as old: the first by name wins": {
			list:     []workv1alpha1.ResourceInterpreter{at("b", 1), at("a", 1)},
			want:     map[string]*Problem{"b": conflict("a", "all versions")},
			wantUsed: map[string]string{"v1": "ResourceInterpreter a"},
		},
		"all versions overlap any": {
			list:     []workv1alpha1.ResourceInterpreter{at("v1-only", 1, "v1"), at("every", 2)},
			want:     map[string]*Problem{"every": conflict("v1-only", "versions v1")},
			wantUsed: map[string]string{"v1": "ResourceInterpreter v1-only", "v2": ""},
		},
		"disjoint versions": {
			list:     []workv1alpha1.ResourceInterpreter{at("one", 1, "v1"), at("two", 2, "v2"), at("both", 3, "v2", "v3")},
			want:     map[string]*Problem{"both": conflict("two", "versions v2")},
			wantUsed: map[string]string{"v1": "ResourceInterpreter one", "v2": "ResourceInterpreter two", "v3": ""},
		},
		"an invalid interpreter neither is used nor wins": {
			list: []workv1alpha1.ResourceInterpreter{broken, at("widgets", 1)},
			want: map[string]*Problem{"broken": {Reason: workv1alpha1.ReasonInvalidExpression,
				Message: "spec.health.expression: line 1, column 7: found no matching overload for '_==_' applied to '(int, string)'"}},
			wantUsed: map[string]string{"v1": "ResourceInterpreter widgets"},
		},
	}
	for name, tc := range cases {
		for _, cache := range []*Cache{nil, NewCache()} {
			t.Run(name, func(t *testing.T) {
				set, problems := Resolve(tc.list, cache)
				if diff := cmp.Diff(tc.want, problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				used := map[string]string{}
				for v := range tc.wantUsed {
					used[v] = ""
					if in := set.For(schema.GroupVersionKind{Group: "example.io", Version: v, Kind: "Widget"}); in != nil {
						used[v] = in.Name()
					}
				}
				if diff := cmp.Diff(tc.wantUsed, used); diff != "" {
					t.Errorf("interpreters used (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestResolveForgetsDeleted(t *testing.T) {
	cache := NewCache()
	a := *resourceInterpreter("a", workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`'Healthy'`)})
	b := *resourceInterpreter("b", workv1alpha1.ResourceInterpreterSpec{Target: deployment, Retain: []string{".spec.replicas"}})
	Resolve([]workv1alpha1.ResourceInterpreter{a, b}, cache)
	Resolve([]workv1alpha1.ResourceInterpreter{b}, cache)
	if cache.Len() != 1 {
		t.Errorf("Len() = %d, want 1", cache.Len())
	}
}

// TestResolveKeepsLastGoodGeneration: a generation that does not compile does not replace the last one of the
// same interpreter that did, which keeps its kind (and the target it described) until a generation compiles;
// an interpreter none of whose generations compiled since the manager started (a new one, or any after a
// restart) is not used.
func TestResolveKeepsLastGoodGeneration(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// gen is generation g of the Widget interpreter name, created at t0 plus minutes, splitting replicas.
	gen := func(name string, minutes int, g int64, replicas string) workv1alpha1.ResourceInterpreter {
		ri := resourceInterpreter(name, workv1alpha1.ResourceInterpreterSpec{
			Target: workv1alpha1.InterpreterTarget{Group: "example.io", Kind: "Widget"}, Replicas: []string{replicas},
			Health: healthExpr(`'Healthy'`),
		})
		ri.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute))
		ri.Generation = g
		return *ri
	}
	// typo is generation g of name with a health expression that does not compile.
	typo := func(name string, minutes int, g int64) workv1alpha1.ResourceInterpreter {
		ri := gen(name, minutes, g, ".spec.typo")
		ri.Spec.Health = healthExpr(`'Healthy' +`)
		return ri
	}
	broken := typo("w", 0, 1)
	_, err := Compile(&broken, nil)
	var compileErr *Problem
	if !errors.As(err, &compileErr) {
		t.Fatalf("the typo compiles: %v", err)
	}
	refused := func(message string) *Problem {
		return &Problem{Reason: workv1alpha1.ReasonInvalidExpression, Message: message + compileErr.Message}
	}
	cases := map[string]struct {
		steps [][]workv1alpha1.ResourceInterpreter // each resolved in turn with one cache: the last is checked
		want  map[string]*Problem
		// wantUsed is, by kind, the interpreter used for it in v1 and its replicas paths.
		wantUsed map[string]string
	}{
		"a typo keeps the last generation that compiled": {
			steps: [][]workv1alpha1.ResourceInterpreter{{gen("w", 0, 1, ".spec.instances")}, {typo("w", 0, 2)}},
			want: map[string]*Problem{"w": refused(
				"generation 2 is refused; generation 1, the last that compiled, is still in use: ")},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter w [.spec.instances]", "Gadget": ""},
		},
		"two typos in a row keep the generation before them": {
			steps: [][]workv1alpha1.ResourceInterpreter{{gen("w", 0, 1, ".spec.instances")}, {typo("w", 0, 2)}, {typo("w", 0, 3)}},
			want: map[string]*Problem{"w": refused(
				"generation 3 is refused; generation 1, the last that compiled, is still in use: ")},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter w [.spec.instances]", "Gadget": ""},
		},
		"a generation that compiles replaces the kept one": {
			steps:    [][]workv1alpha1.ResourceInterpreter{{gen("w", 0, 1, ".spec.instances")}, {typo("w", 0, 2)}, {gen("w", 0, 3, ".spec.members")}},
			want:     map[string]*Problem{},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter w [.spec.members]", "Gadget": ""},
		},
		"the kept generation keeps the target it described": {
			steps: [][]workv1alpha1.ResourceInterpreter{{gen("w", 0, 1, ".spec.instances")}, {func() workv1alpha1.ResourceInterpreter {
				ri := typo("w", 0, 2)
				ri.Spec.Target.Kind = "Gadget"
				return ri
			}()}},
			want: map[string]*Problem{"w": refused(
				"generation 2 is refused; generation 1, the last that compiled, is still in use: ")},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter w [.spec.instances]", "Gadget": ""},
		},
		"the kept generation still wins its kind": {
			steps: [][]workv1alpha1.ResourceInterpreter{
				{gen("old", 0, 1, ".spec.instances"), gen("new", 1, 1, ".spec.members")},
				{typo("old", 0, 2), gen("new", 1, 1, ".spec.members")},
			},
			want: map[string]*Problem{
				"old": refused("generation 2 is refused; generation 1, the last that compiled, is still in use: "),
				"new": {Reason: workv1alpha1.ReasonTargetConflict, Message: "spec.target: ResourceInterpreter old, older or earlier by name, " +
					"already describes Widget.example.io (all versions): delete one of them or make their versions disjoint"},
			},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter old [.spec.instances]", "Gadget": ""},
		},
		"the kept generation loses its kind to an older interpreter that came to compile": {
			steps: [][]workv1alpha1.ResourceInterpreter{
				{typo("old", 0, 1), gen("new", 1, 1, ".spec.members")},
				{gen("old", 0, 2, ".spec.instances"), typo("new", 1, 2)},
			},
			want: map[string]*Problem{"new": refused("generation 2 is refused, and generation 1, the last that compiled, is not used either " +
				"(spec.target: ResourceInterpreter old, older or earlier by name, already describes Widget.example.io (all versions): " +
				"delete one of them or make their versions disjoint): ")},
			wantUsed: map[string]string{"Widget": "ResourceInterpreter old [.spec.instances]", "Gadget": ""},
		},
		"a new interpreter that never compiled is not used": {
			steps:    [][]workv1alpha1.ResourceInterpreter{{typo("w", 0, 1)}},
			want:     map[string]*Problem{"w": refused("")},
			wantUsed: map[string]string{"Widget": "", "Gadget": ""},
		},
		"after a restart the last good generation is not known: not used": {
			steps: [][]workv1alpha1.ResourceInterpreter{{typo("w", 0, 2)}},
			want: map[string]*Problem{"w": refused("generation 2 is refused and the interpreter is not used: no generation of it " +
				"compiled since the manager started (the last that did is kept in memory only, not across restarts): ")},
			wantUsed: map[string]string{"Widget": "", "Gadget": ""},
		},
		"a deleted interpreter is forgotten, its last good generation with it": {
			steps:    [][]workv1alpha1.ResourceInterpreter{{gen("w", 0, 1, ".spec.instances")}, {}, {typo("w", 0, 1)}},
			want:     map[string]*Problem{"w": refused("")},
			wantUsed: map[string]string{"Widget": "", "Gadget": ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache := NewCache()
			var set *health.Interpreters
			var problems map[string]*Problem
			for _, list := range tc.steps {
				set, problems = Resolve(list, cache)
			}
			if diff := cmp.Diff(tc.want, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			used := map[string]string{}
			for kind := range tc.wantUsed {
				used[kind] = ""
				if in := set.For(schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: kind}); in != nil {
					used[kind] = fmt.Sprintf("%s %v", in.Name(), in.ReplicaPaths())
				}
			}
			if diff := cmp.Diff(tc.wantUsed, used); diff != "" {
				t.Errorf("interpreters used (-want +got):\n%s", diff)
			}
		})
	}
}
