package interpreter

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// Resolve compiles the interpreters (through cache, when not nil, which then forgets those not in list) and
// returns the set the manager uses. problems, by interpreter name, are the interpreters it does not use: those
// that do not compile, and those that describe a kind and version that an older interpreter (or, as old, one
// earlier by name) already describes (TargetConflict). An interpreter without versions describes them all.
func Resolve(list []workv1alpha1.ResourceInterpreter, cache *Cache) (*health.Interpreters, map[string]*Problem) {
	ordered := make([]*workv1alpha1.ResourceInterpreter, len(list))
	uids := make([]types.UID, len(list))
	for i := range list {
		ordered[i] = &list[i]
		uids[i] = list[i].UID
	}
	slices.SortFunc(ordered, func(a, b *workv1alpha1.ResourceInterpreter) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	if cache != nil {
		cache.Retain(uids)
	}

	set := health.NewInterpreters()
	problems := map[string]*Problem{}
	var used []*workv1alpha1.ResourceInterpreter
	for _, ri := range ordered {
		gk := schema.GroupKind{Group: ri.Spec.Target.Group, Kind: ri.Spec.Target.Kind}
		var in *Interpreter
		var p *Problem
		if cache != nil {
			in, p = cache.get(ri, health.Builtin(gk))
		} else {
			in, p = compileInterpreter(ri, health.Builtin(gk), nil)
		}
		if p != nil {
			problems[ri.Name] = p
			continue
		}
		if i := slices.IndexFunc(used, func(w *workv1alpha1.ResourceInterpreter) bool { return overlap(w.Spec.Target, ri.Spec.Target) }); i >= 0 {
			problems[ri.Name] = conflict(used[i], gk)
			continue
		}
		used = append(used, ri)
		set.Add(gk, ri.Spec.Target.Versions, in)
	}
	return set, problems
}

// overlap reports whether two targets describe one kind in a common version.
func overlap(a, b workv1alpha1.InterpreterTarget) bool {
	if a.Group != b.Group || a.Kind != b.Kind {
		return false
	}
	if len(a.Versions) == 0 || len(b.Versions) == 0 {
		return true
	}
	return slices.ContainsFunc(a.Versions, func(v string) bool { return slices.Contains(b.Versions, v) })
}

func conflict(winner *workv1alpha1.ResourceInterpreter, gk schema.GroupKind) *Problem {
	versions := "all versions"
	if v := winner.Spec.Target.Versions; len(v) > 0 {
		versions = "versions " + strings.Join(v, ", ")
	}
	return &Problem{Reason: workv1alpha1.ReasonTargetConflict, Message: fmt.Sprintf(
		"spec.target: ResourceInterpreter %s, older or earlier by name, already describes %s (%s): delete one of them or make their versions disjoint",
		winner.Name, gk, versions)}
}
