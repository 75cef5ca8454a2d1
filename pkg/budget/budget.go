// Package budget gates the disruptive actions on split workloads with a fleet-wide disruption budget counted
// in replicas (maxUnavailableReplicas): a rollout step that gives a cluster a new template, a share decrease
// that moves replicas off a cluster, and the removal of a cluster's work. A PodDisruptionBudget inside one
// cluster sees only that cluster's share; the budget here sees the split total, so that updating three
// clusters at once cannot take down most of a workload that each cluster's own rolling update keeps "safe".
//
// It is pure arithmetic over what the work agents report (availableReplicas per cluster): no I/O, and the
// caller decides what the actions are and in which order they would run.
package budget

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Unlimited is the limit of a workload without a budget: every action is admitted as far as it is concerned.
// Any negative limit means the same.
const Unlimited int32 = -1

// Limit is the number of a workload's total replicas that may be unavailable: maxUnavailable as a number, or
// as a percentage of total rounded down, as a Deployment's maxUnavailable is ("25%" of 10 is 2; a
// PodDisruptionBudget would round up, but down errs towards availability). 0 means no voluntary disruption but
// the progress rule's (see Admit). nil means no budget (Unlimited). A negative value, or a string that is not a
// percentage, is an error.
func Limit(total int32, maxUnavailable *intstr.IntOrString) (int32, error) {
	if maxUnavailable == nil {
		return Unlimited, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(max(total, 0)), false)
	if err != nil {
		return 0, fmt.Errorf("maxUnavailableReplicas: %w", err)
	}
	if v < 0 {
		return 0, fmt.Errorf("maxUnavailableReplicas %s is negative", maxUnavailable.String())
	}
	// Beyond the total the limit admits everything anyway; clamp so that "1000%" of a huge total fits int32.
	return int32(min(v, math.MaxInt32)), nil
}

// Workload is one split manifest's fleet state.
type Workload struct {
	// Name names the workload in reasons (for example "Deployment.apps default/web"); "workload <index>"
	// when empty.
	Name string
	// Total is the split total: the user's replicas. Negative counts as 0.
	Total int32
	// Available is the availableReplicas each cluster carrying a work of the workload reports, capped by the
	// caller at the share that cluster was given: Admit trusts every count, so a count beyond what the cluster
	// runs would make room for actions on the other clusters. A cluster absent has none; negative counts as 0.
	Available map[string]int32
}

// Kind is the kind of a disruptive action.
type Kind int

const (
	// RolloutStep gives the cluster a new template: its pods restart, so all its available replicas are at
	// risk (its own rolling-update parameters usually keep some, but the budget cannot count on them).
	RolloutStep Kind = iota
	// ShareDecrease lowers the cluster's shares to Action.NewShares: the available replicas above the new
	// share go away.
	ShareDecrease
	// Removal deletes the cluster's work: all its available replicas go away.
	Removal
)

// Action is one disruptive action on one cluster.
type Action struct {
	Cluster string
	Kind    Kind
	// NewShares is, for ShareDecrease, the cluster's new share per workload index; a workload absent keeps
	// its share and puts nothing at risk.
	NewShares map[int]int32
}

// Verdict is the decision on one action.
type Verdict struct {
	Admitted bool
	// Progress marks the admission by the progress rule: it alone may exceed the budget.
	Progress bool
	// Reason says, for an action not admitted, which workload's budget it would exceed, for a status message:
	// "would make 7 of 10 replicas of workload 0 unavailable, maxUnavailableReplicas is 2".
	Reason string
}

// Decision is Admit's result.
type Decision struct {
	// Verdicts has one entry per action, in the actions' order.
	Verdicts []Verdict
	// Unavailable is, per workload index, how many of its total replicas are unavailable now:
	// max(0, Total - sum of Available).
	Unavailable []int32
}

// Admit decides which actions may run now, in the order given (the order the rollout strategy or failover
// would run them): each is admitted when, for every workload with a budget, the replicas unavailable after the
// already admitted actions and it stay within the workload's limit, or it puts no further replica at risk (a
// rollout to a cluster with nothing available may be what repairs it, even with the fleet over budget).
//
// The replicas unavailable after a set of actions are max(0, Total - (sum of Available - at risk)): a
// cluster's at-risk replicas are what the action puts at risk (RolloutStep and Removal: all its available
// replicas, ShareDecrease: those above the new share), counted once per cluster with the largest of its
// admitted actions, since a restart and a share decrease on one cluster take down the same pods. Available
// replicas beyond the total absorb risk first: a leaving cluster whose replicas already run elsewhere can be
// removed without touching the budget.
//
// Progress rule: when no workload with a budget has an unavailable replica now, the first action, when it is
// a RolloutStep, is admitted even when it alone exceeds the budget, and marked so; without it a cluster holding
// more replicas than the budget could never be updated (its own rolling update then bounds the disruption). A
// share decrease or a removal has no such need: it waits until the replicas it takes away are available
// elsewhere. The actions after it are
// admitted only if they put nothing at risk where it went over. With replicas unavailable already there is no
// progress rule: the fleet first has to recover.
//
// limits holds Limit's result per workload index; a workload without an entry has no budget. An action of an
// unknown kind counts as a Removal.
func Admit(workloads []Workload, limits []int32, actions []Action) Decision {
	n := len(workloads)
	d := Decision{Verdicts: make([]Verdict, len(actions)), Unavailable: make([]int32, n)}
	available := make([]int64, n) // sum of Available per workload
	atRisk := make([]int64, n)    // sum over clusters of what admitted actions put at risk
	risked := make([]map[string]int64, n)
	steady := true // no workload with a budget has an unavailable replica
	for i, w := range workloads {
		for _, a := range w.Available {
			available[i] += int64(max(a, 0))
		}
		d.Unavailable[i] = int32(unavailable(w, available[i], 0))
		risked[i] = map[string]int64{}
		if budgeted(limits, i) && d.Unavailable[i] > 0 {
			steady = false
		}
	}

	admitted := false
	added := make([]int64, n)
	for j, a := range actions {
		reason := ""
		for i, w := range workloads {
			added[i] = max(risk(w, i, a)-risked[i][a.Cluster], 0)
			if reason != "" || !budgeted(limits, i) {
				continue
			}
			before := unavailable(w, available[i], atRisk[i])
			after := unavailable(w, available[i], atRisk[i]+added[i])
			if after > before && after > int64(limits[i]) {
				reason = fmt.Sprintf("would make %d of %d replicas of %s unavailable, maxUnavailableReplicas is %d",
					after, max(w.Total, 0), name(w, i), limits[i])
			}
		}
		progress := reason != "" && steady && !admitted && a.Kind == RolloutStep
		if reason != "" && !progress {
			d.Verdicts[j] = Verdict{Reason: reason}
			continue
		}
		d.Verdicts[j] = Verdict{Admitted: true, Progress: progress}
		admitted = true
		for i := range workloads {
			if added[i] > 0 {
				risked[i][a.Cluster] += added[i]
				atRisk[i] += added[i]
			}
		}
	}
	return d
}

// unavailable is how many of w's total replicas are unavailable once atRisk of its available ones go.
func unavailable(w Workload, available, atRisk int64) int64 {
	return max(int64(max(w.Total, 0))-(available-atRisk), 0)
}

// risk is how many of workload i's replicas action a puts at risk.
func risk(w Workload, i int, a Action) int64 {
	avail := int64(max(w.Available[a.Cluster], 0))
	if a.Kind != ShareDecrease {
		return avail
	}
	share, ok := a.NewShares[i]
	if !ok {
		return 0
	}
	return max(avail-int64(max(share, 0)), 0)
}

func budgeted(limits []int32, i int) bool { return i < len(limits) && limits[i] >= 0 }

func name(w Workload, i int) string {
	if w.Name != "" {
		return w.Name
	}
	return fmt.Sprintf("workload %d", i)
}
