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
// returns the set the manager uses. An interpreter without versions describes them all.
//
// problems, by interpreter name, are the interpreters whose current generation the manager does not use:
//   - one that does not compile. With a cache, the last generation of it that compiled (in this process) is
//     used instead, with the target it described, so a typo changes nothing the PlacementManifestWorks
//     carry; its problem says so. Without one (a new interpreter, any after a restart, or no cache) it is
//     not used, and its problem says that too.
//   - one that describes a kind and version that an older interpreter (or, as old, one earlier by name)
//     already describes (TargetConflict).
func Resolve(list []workv1alpha1.ResourceInterpreter, cache *Cache) (*health.Interpreters, map[string]*Problem) {
	return ResolveWithWebhooks(list, cache, nil)
}

// ResolveWithWebhooks is Resolve with the interpreters of the set calling their webhooks through w (nil: as
// the cache's do): a reconcile's own caller, bound to its context (internal/interpreterwebhook.Session).
func ResolveWithWebhooks(list []workv1alpha1.ResourceInterpreter, cache *Cache, w Webhooks) (*health.Interpreters, map[string]*Problem) {
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
	var used []claim
	for _, ri := range ordered {
		gk := schema.GroupKind{Group: ri.Spec.Target.Group, Kind: ri.Spec.Target.Kind}
		var in *Interpreter
		var p *Problem
		var good *goodGeneration
		if cache != nil {
			in, p, good = cache.get(ri, health.Builtin(gk))
		} else {
			in, p = compileInterpreter(ri, health.Builtin(gk), nil)
		}
		target := ri.Spec.Target
		if p != nil {
			if good == nil {
				problems[ri.Name] = notUsed(ri, p)
				continue
			}
			in, target = good.interpreter, good.target
			gk = schema.GroupKind{Group: target.Group, Kind: target.Kind}
		}
		if i := slices.IndexFunc(used, func(w claim) bool { return overlap(w.target, target) }); i >= 0 {
			c := conflict(used[i], gk)
			if p != nil {
				c = &Problem{Reason: p.Reason, Message: Truncate(fmt.Sprintf(
					"generation %d is refused, and generation %d, the last that compiled, is not used either (%s): %s",
					ri.Generation, good.generation, c.Message, p.Message))}
			}
			problems[ri.Name] = c
			continue
		}
		if w != nil {
			in = in.withWebhooks(w)
		}
		used = append(used, claim{name: ri.Name, target: target})
		set.Add(gk, target.Versions, in)
		if p != nil {
			problems[ri.Name] = &Problem{Reason: p.Reason, Message: Truncate(fmt.Sprintf(
				"generation %d is refused; generation %d, the last that compiled, is still in use: %s",
				ri.Generation, good.generation, p.Message))}
		}
	}
	return set, problems
}

// claim is an interpreter in use and the target it describes (that of the generation used).
type claim struct {
	name   string
	target workv1alpha1.InterpreterTarget
}

// notUsed is the problem of an interpreter that does not compile and has no earlier generation to use: its
// own for a first generation; for a later one, it also says that the last good generation, if any, is not
// known (it is kept in memory only).
func notUsed(ri *workv1alpha1.ResourceInterpreter, p *Problem) *Problem {
	if ri.Generation <= 1 {
		return p
	}
	return &Problem{Reason: p.Reason, Message: Truncate(fmt.Sprintf(
		"generation %d is refused and the interpreter is not used: no generation of it compiled since the manager "+
			"started (the last that did is kept in memory only, not across restarts): %s", ri.Generation, p.Message))}
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

func conflict(winner claim, gk schema.GroupKind) *Problem {
	versions := "all versions"
	if v := winner.target.Versions; len(v) > 0 {
		versions = "versions " + strings.Join(v, ", ")
	}
	return &Problem{Reason: workv1alpha1.ReasonTargetConflict, Message: fmt.Sprintf(
		"spec.target: ResourceInterpreter %s, older or earlier by name, already describes %s (%s): delete one of them or make their versions disjoint",
		winner.name, gk, versions)}
}
