package controllers

import (
	"maps"
	"sort"
	"time"

	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// writeOp is one ManifestWork write: a create (no existing work), an update, or a delete.
type writeOp struct {
	cluster  string
	desired  *workv1.ManifestWork
	existing *workv1.ManifestWork
	// templateChange is true when the write brings the cluster a new template (not only new shares): the start
	// of that cluster's rollout step.
	templateChange bool
	delete         bool
}

// written is the ManifestWork a create or update sends: the desired work, or for an update the existing one
// carrying the desired spec, labels and annotations (manifestwork.Merge), with updatedAt set to now when the
// update brings a new template. A create carries no updatedAt: its creationTimestamp says when its template
// arrived (updatedAt falls back to it), and the annotation would repeat it in every work (issue #23).
func (o writeOp) written(now time.Time) *workv1.ManifestWork {
	if o.existing == nil {
		return o.desired
	}
	desired := o.desired
	if o.templateChange {
		// On a copy: the desired work is what a retry of this write (adopt) compares the work against.
		stamped := *o.desired
		stamped.Annotations = maps.Clone(o.desired.Annotations)
		stamped.Annotations[workv1alpha1.AnnotationUpdatedAt] = now.UTC().Format(time.RFC3339)
		desired = &stamped
	}
	return manifestwork.Merge(o.existing, desired)
}

// writePlan is what the desired state asks of the ManifestWorks.
type writePlan struct {
	ops []writeOp
	// desired are the works built for the decided clusters, written or not (Preview shows them all).
	desired map[string]*workv1.ManifestWork
	// upToDate are the decided clusters whose work carries the current template.
	upToDate map[string]bool
	rollout  rolloutPlan
	// leaving is how many works of clusters that left the decisions are kept for now (make before break).
	leaving int32
	// recheck, when positive, is when time alone changes the plan.
	recheck     time.Duration
	buildErrors []error
	// carried are, when the division started afresh (sharesDropped), the split shares of the decided clusters
	// whose works already carry their planned work, shares included, so need no write.
	carried map[string]map[string]int32
}

// leavingClusters are the clusters with a work, not being deleted, that are no longer decided, sorted.
func leavingClusters(obs *observation) []string {
	decided := make(map[string]bool, len(obs.clusters))
	for _, c := range obs.clusters {
		decided[c] = true
	}
	var out []string
	for cluster, w := range obs.owned {
		if !decided[cluster] && w.DeletionTimestamp.IsZero() {
			out = append(out, cluster)
		}
	}
	sort.Strings(out)
	return out
}

// planWrites decides, without I/O, which ManifestWorks to create, update and delete so each decided cluster
// has its planned work (built by the desired state's builder), writing only where something differs:
//   - the rollout strategy governs the template: a cluster whose work carries an earlier template, or none,
//     gets the current one only when the strategy allows it now;
//   - split shares that change (a cluster joined, left or failed over) reach every cluster that runs the
//     current template at once, so failover is never held back by the rollout's failure accounting;
//   - the works of clusters that left (leavingSince says since when) are kept while a decided cluster is still
//     on its way (joining, progressing, or given a larger share of a split manifest by this reconcile: make
//     before break), or while nothing is decided (a drop to nothing is as often a moment as
//     the user's intent), until the move timeout; and, whatever the move strategy, while the cluster is
//     unavailable and for the recovery period after it is back (unreachableHold);
//   - once the status records that a finished run's works were removed (ttlSecondsAfterFinished), every work
//     left is deleted and none is written for this generation (planCompletion).
func planWrites(pmw *workv1alpha1.PlacementManifestWork, obs *observation, leavingSince map[string]time.Time, now time.Time) writePlan {
	var wp writePlan
	completion := planCompletion(pmw, runBeforeWrites(pmw, obs), now)
	if completion.removed {
		wp.rollout.completion, wp.upToDate = completion, map[string]bool{}
		wp.ops = removalWrites(obs)
		return wp
	}
	desired := make(map[string]*workv1.ManifestWork, len(obs.clusters))
	for _, cluster := range obs.clusters {
		if obs.plan.Kept(cluster) {
			// An override fails on this cluster, or the dependencies of its overridden manifests cannot be found:
			// its work stays as it is, and a cluster without one gets none.
			continue
		}
		w, err := obs.builder.Build(cluster, obs.plan.Manifests[cluster], obs.plan.Shares[cluster])
		if err != nil {
			wp.buildErrors = append(wp.buildErrors, err)
			continue
		}
		w.Annotations[workv1alpha1.AnnotationTemplateHash] = obs.clusterTemplateHash(cluster)
		desired[cluster] = w
	}
	wp.desired = desired
	wp.rollout = planRollout(pmw, obs, obs.current)
	wp.rollout.completion = completion
	wp.recheck = minPositive(wp.rollout.recheck, completion.recheck)

	wp.rollout.paused = pmw.Spec.Paused
	// While paused, a cluster without a work still gets the current template when that is the completed
	// revision: nothing new is held back then, and a paused PlacementManifestWork still serves a cluster that joins.
	pausedCreates := pmw.Spec.Paused && obs.onCompleted

	wp.upToDate = make(map[string]bool, len(obs.clusters))
	if obs.sharesDropped {
		wp.carried = make(map[string]map[string]int32, len(obs.clusters))
	}
	for _, cluster := range obs.clusters {
		d, existing := desired[cluster], obs.owned[cluster]
		if d == nil {
			continue
		}
		templateChange := !manifestwork.CarriesTemplate(existing, obs.clusterTemplateHash(cluster))
		specChange := existing == nil || existing.Annotations[workv1alpha1.AnnotationSpecHash] != d.Annotations[workv1alpha1.AnnotationSpecHash]
		if !templateChange {
			wp.upToDate[cluster] = true
		}
		switch {
		case templateChange && wp.rollout.allowed != nil && !wp.rollout.allowed[cluster]:
			// Not this cluster's turn: it keeps what it has, and a joining cluster waits.
		case templateChange && pmw.Spec.Paused && (existing != nil || !pausedCreates):
			// Paused: the cluster keeps what it carries (its shares too, as a held cluster's), a joining one waits.
		case specChange || !manifestwork.UpToDate(existing, d):
			wp.ops = append(wp.ops, writeOp{cluster: cluster, desired: d, existing: existing, templateChange: templateChange})
		case wp.carried != nil && len(obs.plan.Shares[cluster]) > 0:
			// The work carries its planned shares already (the shares annotation is compared too).
			wp.carried[cluster] = obs.plan.Shares[cluster]
		}
	}

	leaving := leavingClusters(obs)
	// A cluster whose share of a split manifest this reconcile raises is on its way too, like a joining one: it
	// looked healthy before the write, and a shrink would otherwise remove the leaving work before the others
	// scale up. From the next reconcile its health is judged with the new share.
	var raised map[string]bool
	if len(leaving) > 0 {
		raised = raisedShares(wp.ops)
	}
	progressing := false
	for _, cluster := range obs.clusters {
		joining := obs.owned[cluster] == nil || obs.current[cluster].State == health.Progressing || raised[cluster]
		if joining && obs.current[cluster].State != health.Degraded {
			progressing = true
		}
	}
	timeout := moveTimeout(pmw)
	waitForJoining := progressing || len(obs.clusters) == 0
	recovery := recoveryPeriod(pmw)
	for _, cluster := range leaving {
		if held, recheck := unreachableHold(obs, cluster, leavingSince[cluster], recovery, now); held {
			wp.leaving++
			wp.recheck = minPositive(wp.recheck, recheck)
			continue
		}
		left := timeout - now.Sub(leavingSince[cluster])
		if timeout == 0 || !waitForJoining || left <= 0 {
			wp.ops = append(wp.ops, writeOp{cluster: cluster, existing: obs.owned[cluster], delete: true})
			continue
		}
		wp.leaving++
		wp.recheck = minPositive(wp.recheck, left)
	}
	wp.ops, wp.rollout.budget = gateByBudget(pmw, obs, wp.ops)
	for _, cluster := range leaving {
		if wp.rollout.budget.held[cluster] {
			wp.leaving++ // kept for the disruption budget
		}
	}
	return wp
}

// raisedShares are the clusters whose update raises their share of a split manifest: the shares annotation the
// work carries against the one written (a work without one counts as sharing nothing). An agent that edits its
// annotation can at most make a leaving work wait the move timeout, or not wait, as before this rule.
func raisedShares(ops []writeOp) map[string]bool {
	out := map[string]bool{}
	for _, op := range ops {
		if op.delete || op.existing == nil {
			continue
		}
		before := manifestwork.Shares(op.existing)
		for k, v := range manifestwork.Shares(op.desired) {
			if v > before[k] {
				out[op.cluster] = true
				break
			}
		}
	}
	return out
}

// unreachableHold says whether the work of a cluster that left the decisions (at leftAt) is kept because its
// ManagedCluster is not available, or left while it was not and has been available again for less than the
// recovery period (recheck is what is left of it). OCM's placement controller drops a cluster whose lease
// expired (the unreachable and unavailable taints, effect NoSelect) and decides it again once it is back, so a
// Placement without tolerations says nothing of the user's intent while the cluster is away. Deleting its work
// would reach the cluster only once it is back, and then remove its workloads before the Placement decides it
// again. A cluster that left while available (a predicate changed, a cluster that had just joined) is not held,
// nor one whose ManagedCluster is gone or being deleted (detached).
func unreachableHold(obs *observation, cluster string, leftAt time.Time, recovery time.Duration, now time.Time) (held bool, recheck time.Duration) {
	if obs.detached[cluster] {
		return false, 0
	}
	if obs.unavailable[cluster] != "" {
		return true, 0 // its ManagedCluster's next availability change wakes this PlacementManifestWork
	}
	since, ok := obs.availableSince[cluster]
	if !ok || !leftAt.Before(since) {
		return false, 0
	}
	if left := recovery - now.Sub(since); left > 0 {
		return true, left
	}
	return false, 0
}

// recoveryPeriod is how long a cluster must be available again before it counts as back: failover's
// recoveryPeriod, which also applies to PlacementManifestWorks that split nothing.
func recoveryPeriod(pmw *workv1alpha1.PlacementManifestWork) time.Duration {
	if f := pmw.Spec.Failover; f != nil && f.RecoveryPeriod != nil {
		return f.RecoveryPeriod.Duration
	}
	return failover.DefaultRecoveryPeriod
}

// joinOnCompleted gives the decided clusters that have no work and that the rollout holds back from the current
// revision (not their turn yet, a gate, a pause) the last completed revision's work at once: a joining cluster
// is useful immediately (seed 001), and the rollout strategy later brings it to the current revision like any
// other cluster. Nothing is written for it when the completed revision's desired state cannot be made.
func joinOnCompleted(obs *observation, wp *writePlan, mem remembered, now time.Time) []writeOp {
	writing := make(map[string]bool, len(wp.ops))
	for _, op := range wp.ops {
		writing[op.cluster] = true
	}
	var held []string
	for _, c := range obs.clusters {
		if obs.owned[c] == nil && wp.desired[c] != nil && !writing[c] {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		return nil
	}
	t := obs.completed
	in := obs.inputs
	in.template, in.overrides, in.deps, in.planInput, in.scoresExpire = t.template, t.overrides, t.deps, t.planInput, t.scoresExpire
	d, invalid, _, err := desiredState(t.pmw, &in, mem, now)
	if err != nil || invalid != nil || d.plan == nil {
		return nil
	}
	var ops []writeOp
	for _, c := range held {
		if d.plan.Kept(c) {
			continue
		}
		w, err := d.builder.Build(c, d.plan.Manifests[c], d.plan.Shares[c])
		if err != nil {
			continue
		}
		w.Annotations[workv1alpha1.AnnotationTemplateHash] = d.clusterTemplateHash(c)
		ops = append(ops, writeOp{cluster: c, desired: w, templateChange: true})
	}
	return ops
}
