package interpreter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
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
