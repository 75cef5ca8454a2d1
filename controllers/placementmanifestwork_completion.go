package controllers

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// removalRecheck is how soon a reconcile that recorded the removal of the works in the status runs again to
// delete them: status writes do not wake the PlacementManifestWork.
const removalRecheck = time.Second

// finishingBuiltins are the built-in kinds that run to an end, whatever their interpreter.
var finishingBuiltins = map[schema.GroupKind]bool{{Group: "batch", Kind: "Job"}: true, {Kind: "Pod"}: true}

// runState is how far the run of the template got on one cluster.
type runState int

const (
	runRunning runState = iota
	runCompleted
	runFailed
)

// run is how far the run of the current template got on the decided clusters.
//
// A manifest finishes when its kind does: a Job or a Pod, or a kind that reported Finished (its
// ResourceInterpreter said Completed or Failed) on any decided cluster in this reconcile. On one cluster the
// run has completed when every finishing manifest asked of it (a split share of 0 asks nothing) is Finished and
// the cluster is healthy (so no other manifest is progressing or degraded); it has failed when every finishing
// manifest asked of it is Finished, one of them degraded, and no other manifest is progressing; otherwise it
// runs. A still-running workload is never called finished: a running Job or Pod is not Finished, and a manifest
// of another kind that has not finished anywhere holds completion back while it is progressing, as a
// ResourceInterpreter says of a workload that runs. A manifest that never finishes (a ConfigMap, a Service, a
// healthy Deployment) holds nothing back.
type run struct {
	// finishing is false when no manifest of the template finishes: no completion is reported at all.
	finishing bool
	// total is the number of decided clusters; completed and failed name those whose run finished so, sorted.
	total             int
	completed, failed []string
	// finished is true when at least one cluster is decided, every one finished, and no ManifestWork is kept
	// for a cluster that left the decisions (strays).
	finished, strays bool
}

// runInput is what judgeRun reads of one decided cluster: its health judged against the current template (ok is
// false when it has no work carrying that template) and its manifests as delivered (with its split shares).
type runInput func(cluster string) (r health.ClusterResult, manifests []health.ManifestInput, ok bool)

// judgeRun judges the run on the decided clusters. strays is true when a work of a cluster that is no longer
// decided remains (kept for a move, or being deleted): the run is then not finished.
func judgeRun(clusters []string, base []health.ManifestInput, strays bool, of runInput) run {
	finishing := map[schema.GroupKind]bool{}
	for _, m := range base {
		if gk := m.Manifest.GVK.GroupKind(); finishingBuiltins[gk] {
			finishing[gk] = true
		}
	}
	for _, c := range clusters {
		r, manifests, ok := of(c)
		if !ok || len(r.Manifests) != len(manifests) {
			continue
		}
		for i, mr := range r.Manifests {
			if mr.Finished {
				finishing[manifests[i].Manifest.GVK.GroupKind()] = true
			}
		}
	}
	out := run{finishing: len(finishing) > 0, total: len(clusters), strays: strays}
	if !out.finishing {
		return out
	}
	for _, c := range clusters {
		r, manifests, ok := of(c)
		if !ok {
			continue
		}
		switch clusterRun(r, manifests, finishing) {
		case runCompleted:
			out.completed = append(out.completed, c)
		case runFailed:
			out.failed = append(out.failed, c)
		}
	}
	sort.Strings(out.completed)
	sort.Strings(out.failed)
	out.finished = len(clusters) > 0 && !strays && len(out.completed)+len(out.failed) == len(clusters)
	return out
}

// clusterRun judges the run on one cluster (see run).
func clusterRun(r health.ClusterResult, manifests []health.ManifestInput, finishing map[schema.GroupKind]bool) runState {
	if len(r.Manifests) != len(manifests) {
		// The agent has not reported the work's current generation.
		return runRunning
	}
	if r.Reason == workv1alpha1.ReasonClusterUnavailable || r.Reason == workv1alpha1.ReasonWorkDeleting {
		// What it reported last may no longer hold.
		return runRunning
	}
	failed := false
	for i, m := range manifests {
		v := r.Manifests[i]
		switch {
		case m.Share != nil && *m.Share == 0:
			// Nothing is asked of this cluster: a Job with parallelism 0 never runs.
		case !finishing[m.Manifest.GVK.GroupKind()]:
			if v.State == health.Progressing {
				return runRunning
			}
		case !v.Finished:
			return runRunning
		case v.State == health.Degraded:
			failed = true
		}
	}
	switch {
	case failed:
		return runFailed
	case r.State == health.Healthy:
		return runCompleted
	}
	return runRunning
}

// strayWorks reports whether a work of a cluster that is not decided remains.
func strayWorks(obs *observation) bool {
	decided := make(map[string]bool, len(obs.clusters))
	for _, c := range obs.clusters {
		decided[c] = true
	}
	for c := range obs.owned {
		if !decided[c] {
			return true
		}
	}
	return false
}

// runBeforeWrites judges the run from the works as they are before this reconcile's writes: a cluster counts
// only when its work carries the current template.
func runBeforeWrites(pmw *workv1alpha1.PlacementManifestWork, obs *observation) run {
	base := obs.healthInputs(pmw)
	return judgeRun(obs.clusters, base.base, strayWorks(obs), func(c string) (health.ClusterResult, []health.ManifestInput, bool) {
		r, ok := obs.current[c]
		if !ok || !manifestwork.CarriesTemplate(obs.owned[c], obs.clusterTemplateHash(c)) {
			return health.ClusterResult{}, nil, false
		}
		return r, base.withDependencies(base.withShares(obs.shares[c]), obs.currentDeps[c]), true
	})
}

// completionPlan is what the desired state decided about the run of a template whose manifests finish.
type completionPlan struct {
	// evaluated is set when planWrites looked at the run (the Placement is decided and the spec usable);
	// otherwise the status keeps what it says of the run.
	evaluated bool
	// removed is set when the status records that the works of this generation were removed after
	// ttlSecondsAfterFinished: every work left is deleted, none is written, and the status is kept as it is.
	removed bool
	// removeDue is set when every decided cluster finished and ttlSecondsAfterFinished has passed: computeStatus
	// records the removal (worksRemovedTime) when the works after this reconcile's writes agree, and the
	// reconcile that reads it from the status deletes them. Deleting before the decision is stored would let a
	// failed status write, or a restart, see the works gone and write them again.
	removeDue bool
	// now is this reconcile's time, for finishedTime and worksRemovedTime.
	now time.Time
	// recheck, when positive, is when ttlSecondsAfterFinished runs out, or how soon the recorded removal is
	// carried out.
	recheck time.Duration
}

// worksRemoved reports whether the status records that the works of the current generation were removed.
func worksRemoved(pmw *workv1alpha1.PlacementManifestWork) bool {
	c := pmw.Status.Completion
	return c != nil && c.ObservedGeneration == pmw.Generation && c.WorksRemovedTime != nil
}

// finishedSince is when the status says every decided cluster finished the current generation's run, if it
// says so.
func finishedSince(pmw *workv1alpha1.PlacementManifestWork) (time.Time, bool) {
	c := pmw.Status.Completion
	if c == nil || c.ObservedGeneration != pmw.Generation || c.FinishedTime == nil {
		return time.Time{}, false
	}
	return c.FinishedTime.Time, true
}

// planCompletion decides, from the status (what survives a restart) and the run before this reconcile's
// writes, whether the works of this generation are removed, whether their removal is due, and when time alone
// changes that. Only a finished run with ttlSecondsAfterFinished set has its works removed.
func planCompletion(pmw *workv1alpha1.PlacementManifestWork, r run, now time.Time) completionPlan {
	p := completionPlan{evaluated: true, now: now}
	if worksRemoved(pmw) {
		p.removed = true
		return p
	}
	ttl := pmw.Spec.TTLSecondsAfterFinished
	if ttl == nil || !r.finishing || !r.finished {
		return p
	}
	since, ok := finishedSince(pmw)
	if !ok {
		since = now
	}
	if left := since.Add(time.Duration(*ttl) * time.Second).Sub(now); left > 0 {
		p.recheck = left
		return p
	}
	p.removeDue, p.recheck = true, removalRecheck
	return p
}

// removalWrites are the deletes of every work left once the works of this generation are removed.
func removalWrites(obs *observation) []writeOp {
	var ops []writeOp
	for _, c := range sortedKeys(obs.owned) {
		if w := obs.owned[c]; w.DeletionTimestamp.IsZero() {
			ops = append(ops, writeOp{cluster: c, existing: w, delete: true})
		}
	}
	return ops
}

// completionStatus is status.completion and the Completed condition for the run after this reconcile's
// writes; both nil when the template has no manifest that finishes.
func completionStatus(pmw *workv1alpha1.PlacementManifestWork, r run, p completionPlan) (*workv1alpha1.CompletionStatus, *metav1.Condition) {
	if !r.finishing {
		return nil, nil
	}
	st := &workv1alpha1.CompletionStatus{ObservedGeneration: pmw.Generation, Completed: int32(len(r.completed)), Failed: int32(len(r.failed))}
	// Stored times have whole seconds; so do these, so a status that did not change compares equal.
	now := metav1.NewTime(p.now.Truncate(time.Second))
	if r.finished {
		st.FinishedTime = &now
		if since, ok := finishedSince(pmw); ok {
			st.FinishedTime = &metav1.Time{Time: since}
		}
		if p.removeDue {
			st.WorksRemovedTime = &now
		}
	}
	c := completedCondition(pmw, r, st)
	return st, &c
}

// completedCondition is the Completed condition of a run.
func completedCondition(pmw *workv1alpha1.PlacementManifestWork, r run, st *workv1alpha1.CompletionStatus) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionCompleted, Status: metav1.ConditionFalse}
	ttl := ""
	switch {
	case st.WorksRemovedTime != nil:
		ttl = fmt.Sprintf("; its ManifestWorks are removed, %ds after it finished (ttlSecondsAfterFinished), and not written again until the spec changes",
			*pmw.Spec.TTLSecondsAfterFinished)
	case r.finished && pmw.Spec.TTLSecondsAfterFinished != nil:
		ttl = fmt.Sprintf("; its ManifestWorks are removed %ds after it finished (ttlSecondsAfterFinished)", *pmw.Spec.TTLSecondsAfterFinished)
	}
	switch {
	case r.finished && len(r.failed) == 0:
		c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAllClustersCompleted
		c.Message = fmt.Sprintf("The run completed on all %d clusters%s", r.total, ttl)
	case r.finished:
		c.Reason = workv1alpha1.ReasonClustersFailed
		c.Message = fmt.Sprintf("The run failed on %d of %d clusters (%s) and completed on %d%s; change the template to run it again",
			len(r.failed), r.total, names(r.failed), len(r.completed), ttl)
	case r.total == 0:
		c.Reason, c.Message = workv1alpha1.ReasonRunning, "No cluster is decided"
	case r.strays && len(r.completed)+len(r.failed) == r.total:
		c.Reason = workv1alpha1.ReasonRunning
		c.Message = fmt.Sprintf("%d of %d clusters completed and %d failed; the ManifestWorks of clusters that left the decisions are still there",
			len(r.completed), r.total, len(r.failed))
	default:
		c.Reason = workv1alpha1.ReasonRunning
		c.Message = fmt.Sprintf("%d of %d clusters completed, %d failed, %d not finished", len(r.completed), r.total, len(r.failed),
			r.total-len(r.completed)-len(r.failed))
	}
	return c
}
