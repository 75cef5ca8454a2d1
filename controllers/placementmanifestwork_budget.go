package controllers

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/budget"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// maxHeldListed bounds status.disruptionBudget.held.
const maxHeldListed = 10

// budgetOutcome is what the disruption budget made of a reconcile's writes; status is nil without a budget.
type budgetOutcome struct {
	status *workv1alpha1.DisruptionBudgetStatus
	// held are the clusters whose writes wait for the budget.
	held map[string]bool
}

// gateByBudget drops from ops, without I/O, the writes that spec.disruptionBudget does not admit now (see
// budget.Admit), in the order planWrites made them: a rollout step (a new template for a cluster that has a
// work), a share decrease, and the removal of a leaving cluster's work. Creations, share increases and steps
// back to the completed revision pass. The replicas available are what each work's agent reports (the availableReplicas
// feedback of the split manifest), on every work of this PlacementManifestWork, leaving ones included, each
// counted at most up to the share the cluster was given (givenShare): an agent's report reaches at most its own
// cluster, so one that reports more than its cluster runs cannot make room for writes to the others.
func gateByBudget(pmw *workv1alpha1.PlacementManifestWork, obs *observation, ops []writeOp) ([]writeOp, budgetOutcome) {
	if pmw.Spec.DisruptionBudget == nil || obs.plan == nil || len(obs.plan.Splits) == 0 {
		return ops, budgetOutcome{}
	}
	splits := obs.plan.Splits
	index := make(map[string]int, len(splits))
	workloads := make([]budget.Workload, len(splits))
	limits := make([]int32, len(splits))
	for i, s := range splits {
		index[obs.plan.SplitKeys[i]] = i
		workloads[i] = budget.Workload{Name: splitName(s), Total: s.Total, Available: map[string]int32{}}
		limit, err := budget.Limit(s.Total, &pmw.Spec.DisruptionBudget.MaxUnavailableReplicas)
		if err != nil {
			// The CRD admits no such value; a stored one the manager cannot use holds nothing back.
			limit = budget.Unlimited
		}
		limits[i] = limit
		for cluster, w := range obs.owned {
			if obs.unavailable[cluster] != "" {
				// Its agent's last report says nothing of now (and the cluster's work is kept while it is away,
				// unreachableHold): none of its replicas counts as available.
				continue
			}
			if n, ok := availableReplicas(w, s); ok {
				workloads[i].Available[cluster] = min(n, givenShare(obs, cluster, obs.plan.SplitKeys[i]))
			}
		}
	}

	var actions []budget.Action
	var gated []int // ops index of each action
	for i, op := range ops {
		a := budget.Action{Cluster: op.cluster}
		switch {
		case op.delete:
			a.Kind = budget.Removal
		case op.existing == nil:
			continue
		case op.templateChange && obs.onCompleted:
			// Back to the last completed revision (a rollback, a revert): that repairs what the budget protects,
			// and holding it while a failed revision keeps replicas down could hold it for ever.
			continue
		case op.templateChange:
			a.Kind = budget.RolloutStep
		default:
			a.Kind, a.NewShares = budget.ShareDecrease, shareDecreases(manifestwork.Shares(op.existing), manifestwork.Shares(op.desired), index)
			if len(a.NewShares) == 0 {
				continue
			}
		}
		actions = append(actions, a)
		gated = append(gated, i)
	}
	decision := budget.Admit(workloads, limits, actions)

	out := budgetOutcome{held: map[string]bool{}, status: &workv1alpha1.DisruptionBudgetStatus{}}
	worst := int32(-1 << 31)
	for i, u := range decision.Unavailable {
		if limits[i] < 0 {
			continue
		}
		if over := u - limits[i]; over > worst {
			worst = over
			out.status.UnavailableReplicas, out.status.MaxUnavailableReplicas = u, limits[i]
		}
	}
	drop := make(map[int]bool)
	for j, v := range decision.Verdicts {
		if v.Admitted {
			continue
		}
		op := ops[gated[j]]
		drop[gated[j]] = true
		out.held[op.cluster] = true
		if out.status.Message == "" {
			out.status.Message = fmt.Sprintf("%s of cluster %s waits: it %s", budgetActionName(actions[j].Kind), op.cluster, v.Reason)
		}
	}
	kept := ops[:0]
	for i, op := range ops {
		if !drop[i] {
			kept = append(kept, op)
		}
	}
	held := make([]string, 0, len(out.held))
	for c := range out.held {
		held = append(held, c)
	}
	sort.Strings(held)
	if len(held) > maxHeldListed {
		out.status.HeldNotListed = int32(len(held) - maxHeldListed)
		held = held[:maxHeldListed]
	}
	if len(held) > 0 {
		out.status.Held = held
	}
	return kept, out
}

func budgetActionName(k budget.Kind) string {
	switch k {
	case budget.RolloutStep:
		return "The rollout step"
	case budget.ShareDecrease:
		return "The share decrease"
	}
	return "The removal"
}

// splitName names a split manifest as messages do: "Deployment.apps default/web".
func splitName(s workv1alpha1.SplitStatus) string {
	kind := s.Kind
	if s.Group != "" {
		kind += "." + s.Group
	}
	if s.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", kind, s.Namespace, s.Name)
	}
	return fmt.Sprintf("%s %s", kind, s.Name)
}

// availableReplicas is the availableReplicas the work's agent reports for the split manifest, if it does for the
// work's current generation and read it after applying the work's template (health.StaleReport): until then,
// what it reported describes pods that may be going away, so the cluster counts as having none available.
func availableReplicas(w *workv1.ManifestWork, s workv1alpha1.SplitStatus) (int32, bool) {
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c == nil || c.ObservedGeneration != w.Generation {
		return 0, false
	}
	for _, m := range w.Status.ResourceStatus.Manifests {
		r := m.ResourceMeta
		if r.Name != s.Name || r.Namespace != s.Namespace || r.Group != s.Group || (s.Kind != "" && r.Kind != s.Kind) {
			continue
		}
		if health.StaleReport(&m, w.Annotations[workv1alpha1.AnnotationTemplateHash]) {
			return 0, false // read before the agent applied the last write: as if not reported
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == health.FeedbackPrefix+health.AvailableReplicas && v.Value.Integer != nil {
				return int32(max(min(*v.Value.Integer, 1<<31-1), 0)), true
			}
		}
	}
	return 0, false
}

// givenShare is the share of the split manifest key that the manager gave the cluster, which bounds how many of
// its replicas can be available: the manager's own record of the shares it delivered (obs.previous), else the
// share the plan gives the cluster now (a cluster or split the record lacks, for example after a restart whose
// works' annotations did not match the status); 0 when neither has one, so a report the manager cannot vouch
// for counts as nothing available. Never the work's shares annotation: its agent can edit that too.
func givenShare(obs *observation, cluster, key string) int32 {
	if v, ok := obs.previous[cluster][key]; ok {
		return max(v, 0)
	}
	if v, ok := obs.plan.Shares[cluster][key]; ok {
		return max(v, 0)
	}
	return 0
}

// shareDecreases are the split manifests (by index) whose share the update lowers, with the new share.
func shareDecreases(before, after map[string]int32, index map[string]int) map[int]int32 {
	out := map[int]int32{}
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := index[k]
		if old, had := before[k]; ok && had && after[k] < old {
			out[i] = after[k]
		}
	}
	return out
}
