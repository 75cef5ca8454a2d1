package controllers

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/status"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// maxNamesInMessage bounds how many clusters a condition message names.
const maxNamesInMessage = 5

// aggregationErrorRoom is how much of StatusAggregated's message bound its error keeps at least when long
// manifest names would fill it (aggregatedCondition names fewer of them then).
const aggregationErrorRoom = 200

// computeStatus turns what a reconcile observed into the PlacementManifestWork's status. It does no I/O; of obs
// it sets only aggregationFailed.
func computeStatus(pmw *workv1alpha1.PlacementManifestWork, obs *observation) workv1alpha1.PlacementManifestWorkStatus {
	st := *pmw.Status.DeepCopy()
	st.ObservedGeneration = pmw.Generation
	st.Placement = obs.placementName
	obs.aggregationFailed = false
	if worksRemoved(pmw) {
		// A finished run whose works were removed after ttlSecondsAfterFinished keeps its result: the summary,
		// the completion and the conditions as they were when the removal was decided. StatusAggregated too, as
		// the record of how status.manifests[].aggregated was left; no webhook is asked again (aggregationFailed
		// stays unset), there being no works to report anything.
		return st
	}

	clusters := obs.clusters
	if !obs.decided() {
		// The works are kept while the Placement is missing or undecided, so they are what the status describes.
		clusters = sortedKeys(obs.owned)
	}
	// While a failed revision is rolled back, the works follow the completed revision's template.
	tpl := pmw
	if obs.rollout.failure.rollingBack && obs.completed != nil {
		tpl = obs.completed.pmw
	}
	base := obs.healthInputs(tpl)
	outcomes := make([]status.ClusterOutcome, 0, len(clusters))
	var carriesCurrent func(*workv1.ManifestWork) (bool, string)
	if obs.plan == nil {
		carriesCurrent = carriesCurrentTemplate(tpl, obs)
	}
	conflicted := make(map[string]bool, len(obs.conflicts))
	for _, c := range obs.conflicts {
		conflicted[c] = true
	}
	// The dependencies of the clusters whose works carry their own (clusterDependencies).
	deps := map[string]clusterDependencies{}
	for _, c := range clusters {
		var r health.ClusterResult
		if cur, ok := obs.current[c]; ok && !written(obs, c) {
			// A cluster whose work this reconcile did not write was already judged before the writes.
			r = cur
			if cd, ok := obs.currentDeps[c]; ok {
				deps[c] = cd
			}
		} else {
			manifests, cd, ok := clusterInputs(base, &obs.inputs, c, obs.workShares(c))
			switch {
			case cd.own:
				deps[c] = cd
			case !ok && obs.work(c) != nil:
				manifests = obs.kinds.WorkManifests(obs.work(c))
			}
			r = health.Cluster(health.ClusterInput{Work: obs.work(c), Unavailable: obs.unavailable[c], Manifests: manifests})
		}
		switch {
		case conflicted[c]:
			r = health.ClusterResult{Verdict: health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonManifestWorkConflict,
				Message: fmt.Sprintf("a ManifestWork named %q that this PlacementManifestWork does not own is in the way", obs.workName)}}
		case obs.plan != nil && obs.plan.Kept(c):
			r = kept(r, obs.plan, c)
		case obs.plan != nil && !obs.upToDate[c]:
			r = outdated(r)
		case obs.plan == nil:
			// Without a desired state nothing says the work is current: a work on an earlier template, judged
			// against the current manifests by position, must not count as applied or available.
			if ok, why := carriesCurrent(obs.work(c)); !ok {
				r = notKnownCurrent(r, why)
			}
		}
		outcomes = append(outcomes, status.ClusterOutcome{Cluster: c, ClusterResult: r})
	}
	rollup := status.Aggregate(outcomes, listManifests(obs.template, base.own, outcomes, deps), obs.kinds, pmw.Status.Manifests)
	obs.aggregationFailed = len(rollup.AggregationFailures) > 0
	st.PlacedManifestWorkSummary = rollup.Summary
	st.Manifests = rollup.Manifests
	st.UnhealthyClusters = rollup.Unhealthy
	st.UnhealthyClustersNotListed = rollup.UnhealthyNotListed
	// Splits, rollout and overrides describe the current generation or nothing: without a plan there is none.
	st.Splits, st.Rollout, st.Overrides = nil, nil, nil
	if obs.plan != nil {
		st.Overrides = override.Status(obs.overrides, obs.plan.OverrideOutcomes)
		delivered := make(map[string]map[string]int32, len(obs.clusters))
		for _, c := range obs.clusters {
			delivered[c] = obs.deliveredShares(c)
		}
		st.Splits = planner.DeliveredSplits(obs.plan, delivered, obs.clusters, obs.failedOver)
	}
	if len(st.Manifests) == 0 {
		st.Manifests = nil
	}

	if obs.failoverEvaluated || !hasSplit(tpl) || (pmw.Spec.Failover != nil && pmw.Spec.Failover.Disabled) {
		// Without an evaluation (no usable decisions or template) the record stays as it was.
		st.FailedOverClusters = int32(len(obs.failedOver))
		st.FailedOver = failedOverStatus(obs.failoverStates, obs.failedOver)
	}
	st.LeavingClusters = obs.leaving
	results := outcomeResults(outcomes) // the clusters' results after the writes, for the run and the rollout
	if obs.rollout.completion.evaluated {
		// Without an evaluation (no usable decisions or template) the record of the run stays as it was.
		var completed *metav1.Condition
		st.Completion, completed = completionStatus(pmw, runAfterWrites(obs, base, results, deps), obs.rollout.completion)
		if completed != nil {
			setCondition(&st, pmw, *completed)
		} else {
			meta.RemoveStatusCondition(&st.Conditions, workv1alpha1.ConditionCompleted)
		}
	}

	if c, ok := aggregatedCondition(rollup, meta.FindStatusCondition(st.Conditions, workv1alpha1.ConditionStatusAggregated)); ok {
		setCondition(&st, pmw, c)
	} else {
		meta.RemoveStatusCondition(&st.Conditions, workv1alpha1.ConditionStatusAggregated)
	}
	setCondition(&st, pmw, placementCondition(&obs.inputs))
	setCondition(&st, pmw, appliedCondition(&obs.inputs, &obs.outcome, obs.rollout.failure, outcomes, st.PlacedManifestWorkSummary))
	setCondition(&st, pmw, distributedCondition(pmw, obs.invalid, obs.plan))
	var rollout *metav1.Condition
	if obs.plan != nil {
		var c metav1.Condition
		st.Rollout, c = rolloutStatus(pmw.Name, obs.clusters, &obs.desired, results, currentRevisionName(obs))
		setCondition(&st, pmw, c)
		rollout = &c
		st.Approvals = obs.approvals
		st.DisruptionBudget = obs.rollout.budget.status
	} else {
		setCondition(&st, pmw, rolloutUnknown(&obs.inputs))
	}
	revisionStatus(&st, obs, rollout)
	rolloutStart(&st, &pmw.Status, obs.now)
	if f := obs.rollout.failure; f.evaluated {
		// Without an evaluation (no usable decisions or template) the record stays as it was.
		st.FailedRevision, st.RetriedRevision = f.failed, f.retried
	}
	ready, reconciling, stalled := readiness(obs, st.PlacedManifestWorkSummary, rollout)
	if ready.Reason == workv1alpha1.ReasonClustersDegraded && len(st.UnhealthyClusters) > 0 && st.UnhealthyClusters[0].State == workv1alpha1.ClusterDegraded {
		// The first degraded cluster's reason in the condition itself, for tools that show conditions only
		// (an interpreter's webhook that does not answer, a failed Job).
		u := st.UnhealthyClusters[0]
		example := fmt.Sprintf("; for example %s: %s", u.Cluster, u.Reason)
		if u.Message != "" {
			example += ": " + u.Message
		}
		ready.Message += example
		reconciling.Message += example
	}
	setCondition(&st, pmw, ready)
	setCondition(&st, pmw, reconciling)
	setCondition(&st, pmw, stalled)
	return st
}

// listManifests is what status.manifests lists: the template's manifests and dependencies, then the
// dependencies only the clusters whose overrides change them carry (deps), sorted by kind, namespace and name.
// It sets on each outcome where its work carries each (status.ClusterOutcome.Carried) when that is not simply
// the list's order: the clusters alike share one slice.
func listManifests(manifests []template.Manifest, own int, outcomes []status.ClusterOutcome, deps map[string]clusterDependencies) []template.Manifest {
	if len(deps) == 0 {
		return manifests
	}
	id := func(m template.Manifest) dependencyRef {
		return dependencyRef{kind: m.GVK.Kind, name: m.Object.GetName(), namespace: m.Object.GetNamespace()}
	}
	listed := map[dependencyRef]int{}
	for i := own; i < len(manifests); i++ {
		listed[id(manifests[i])] = i
	}
	var extra []template.Manifest
	for _, cd := range deps {
		for _, d := range cd.deps {
			if _, ok := listed[id(d)]; !ok {
				listed[id(d)] = -1
				extra = append(extra, d)
			}
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		a, b := id(extra[i]), id(extra[j])
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	out := manifests
	if len(extra) > 0 {
		out = append(slices.Clip(manifests), extra...)
		for i := len(manifests); i < len(out); i++ {
			listed[id(out[i])] = i
		}
	}
	// A cluster that carries the template's dependencies carries none of the others.
	var templates []int
	if len(extra) > 0 {
		templates = make([]int, len(out))
		for i := range templates {
			if templates[i] = i; i >= len(manifests) {
				templates[i] = -1
			}
		}
	}
	type list struct {
		first *template.Manifest
		n     int
	}
	byList := map[list][]int{}
	for i := range outcomes {
		cd, ok := deps[outcomes[i].Cluster]
		if !ok {
			outcomes[i].Carried = templates
			continue
		}
		key := list{n: len(cd.deps)}
		if len(cd.deps) > 0 {
			key.first = &cd.deps[0]
		}
		carried, ok := byList[key]
		if !ok {
			carried = make([]int, len(out))
			for j := range carried {
				if carried[j] = j; j >= own {
					carried[j] = -1
				}
			}
			for k, d := range cd.deps {
				carried[listed[id(d)]] = own + k
			}
			byList[key] = carried
		}
		outcomes[i].Carried = carried
	}
	return out
}

// outcomeResults are the clusters' results after this reconcile's writes, by cluster.
func outcomeResults(outcomes []status.ClusterOutcome) map[string]health.ClusterResult {
	out := make(map[string]health.ClusterResult, len(outcomes))
	for _, o := range outcomes {
		out[o.Cluster] = o.ClusterResult
	}
	return out
}

// runAfterWrites judges the run from the clusters' results after this reconcile's writes (a cluster whose work
// carries an earlier template, or that a foreign work blocks, has no per-manifest results and runs).
func runAfterWrites(obs *observation, base *manifestInputs, results map[string]health.ClusterResult, deps map[string]clusterDependencies) run {
	return judgeRun(obs.clusters, base.base, strayWorks(obs), func(c string) (health.ClusterResult, []health.ManifestInput, bool) {
		r, ok := results[c]
		return r, base.withDependencies(base.withShares(obs.workShares(c)), deps[c]), ok
	})
}

// currentRevisionName names the current revision in messages: "revision 3", or "the current template" when the
// revisions are not known (a preview, or their write failed).
func currentRevisionName(obs *observation) string {
	if p := obs.revisionPlan; p != nil && obs.revisionError == nil {
		return fmt.Sprintf("revision %d", p.Current.Revision)
	}
	return "the current template"
}

func written(obs *observation, cluster string) bool {
	_, ok := obs.written[cluster]
	return ok
}

// rolloutUnknown is RolloutComplete when no plan exists, so that it still describes the current generation.
func rolloutUnknown(in *inputs) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionRolloutComplete, Status: metav1.ConditionUnknown}
	switch {
	case in.invalid != nil:
		c.Reason, c.Message = in.invalid.Reason, in.invalid.Message
	case !in.decided():
		placement := placementCondition(in)
		c.Reason, c.Message = placement.Reason, placement.Message
	default:
		c.Reason, c.Message = workv1alpha1.ReasonNoClusters, "No cluster is decided"
	}
	return c
}

// awayLeaving is how many clusters that left the decisions keep their works because their ManagedCluster is not
// available (unreachableHold).
func awayLeaving(obs *observation) int {
	n := 0
	for _, c := range leavingClusters(obs) {
		if obs.unavailable[c] != "" {
			n++
		}
	}
	return n
}

// readiness computes the kstatus conditions: Ready when every decided cluster is available, Stalled when only
// the user can unblock it, Reconciling otherwise.
func readiness(obs *observation, s workv1alpha1.PlacedManifestWorkSummary, rollout *metav1.Condition) (ready, reconciling, stalled metav1.Condition) {
	ready = metav1.Condition{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionFalse}
	reconciling = metav1.Condition{Type: workv1alpha1.ConditionReconciling, Status: metav1.ConditionFalse}
	stalled = metav1.Condition{Type: workv1alpha1.ConditionStalled, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.ReasonNotStalled, Message: "Nothing needs the user's action"}

	switch {
	case obs.invalid != nil && obs.invalid.Reason != workv1alpha1.ReasonInterpreterFailed:
		// An interpreter's webhook that does not answer may answer later (it is retried): not Stalled.
		stalled.Status, stalled.Reason, stalled.Message = metav1.ConditionTrue, obs.invalid.Reason, obs.invalid.Message
	case !obs.placementFound:
		stalled.Status, stalled.Reason = metav1.ConditionTrue, workv1alpha1.ReasonPlacementNotFound
		stalled.Message = fmt.Sprintf("Placement %q does not exist in this namespace", obs.placementName)
	case rollout != nil && (rollout.Reason == workv1alpha1.ReasonInvalidRolloutStrategy || rollout.Reason == workv1alpha1.ReasonRolloutMaxFailures ||
		rollout.Reason == workv1alpha1.ReasonRolledBack):
		// Only the user unblocks these: a strategy sdk-go refuses, or a rollout stopped by maxFailures (and rolled
		// back) until the template is fixed or retried.
		stalled.Status, stalled.Reason, stalled.Message = metav1.ConditionTrue, rollout.Reason, rollout.Message
	}
	switch {
	case stalled.Status == metav1.ConditionTrue:
		ready.Reason, ready.Message = stalled.Reason, stalled.Message
	case !obs.decided():
		placement := placementCondition(&obs.inputs)
		ready.Reason, ready.Message = placement.Reason, placement.Message
	case len(obs.clusters) == 0 && obs.leaving == 0:
		// Nothing to deliver is a finished state, so GitOps tools that gate on Ready or kstatus do not wait
		// forever; PlacementVerified stays False to say why.
		ready.Status, ready.Reason = metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecisionEmpty
		ready.Message = fmt.Sprintf("Placement %q selects no cluster, so there is nothing to deliver", obs.placementName)
	case len(obs.clusters) == 0:
		ready.Reason = workv1alpha1.ReasonPlacementDecisionEmpty
		ready.Message = fmt.Sprintf("Placement %q selects no cluster; the works of %d clusters are kept until the move timeout in case that is a moment", obs.placementName, obs.leaving)
		if away := awayLeaving(obs); away > 0 {
			ready.Message = fmt.Sprintf("Placement %q selects no cluster; the works of %d clusters are kept: %d while their ManagedCluster is not available (OCM's placement controller drops such clusters and decides them again once they are back), the others until the move timeout",
				obs.placementName, obs.leaving, away)
		}
	case obs.invalid != nil:
		ready.Reason, ready.Message = obs.invalid.Reason, obs.invalid.Message
	case len(obs.conflicts) > 0:
		ready.Reason = workv1alpha1.ReasonManifestWorkConflict
		ready.Message = fmt.Sprintf("ManifestWorks not owned by this PlacementManifestWork block %s; the other clusters are served", names(obs.conflicts))
	case len(obs.writeErrors) > 0:
		ready.Reason, ready.Message = workv1alpha1.ReasonWriteFailed, fmt.Sprintf("%d ManifestWork writes failed and will be retried", len(obs.writeErrors))
	case obs.plan != nil && (len(obs.plan.OverrideFailures) > 0 || len(obs.plan.DependencyFailures) > 0):
		// Not Stalled: a change of a cluster's labels or claims, or a dependency created on the hub, may fix it,
		// and the other clusters are served.
		ready.Reason, ready.Message = clusterFailures(obs.plan)
	case rollout != nil && rollout.Status != metav1.ConditionTrue:
		ready.Reason, ready.Message = rollout.Reason, rollout.Message
	case s.Degraded > 0:
		ready.Reason = workv1alpha1.ReasonClustersDegraded
		ready.Message = fmt.Sprintf("%d of %d clusters are degraded, %d available", s.Degraded, s.Total, s.Available)
	case s.Available < s.Total:
		ready.Reason = workv1alpha1.ReasonClustersProgressing
		ready.Message = fmt.Sprintf("%d of %d clusters are available", s.Available, s.Total)
	default:
		ready.Status, ready.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAllClustersAvailable
		ready.Message = fmt.Sprintf("All %d clusters are available", s.Total)
	}
	switch {
	case ready.Status == metav1.ConditionTrue:
		reconciling.Reason, reconciling.Message = workv1alpha1.ReasonReady, ready.Message
	case stalled.Status == metav1.ConditionTrue:
		reconciling.Reason, reconciling.Message = stalled.Reason, "Stalled: "+stalled.Message
	default:
		reconciling.Status, reconciling.Reason, reconciling.Message = metav1.ConditionTrue, ready.Reason, ready.Message
	}
	return ready, reconciling, stalled
}

func setCondition(st *workv1alpha1.PlacementManifestWorkStatus, pmw *workv1alpha1.PlacementManifestWork, c metav1.Condition) {
	c.ObservedGeneration = pmw.Generation
	meta.SetStatusCondition(&st.Conditions, c)
}

func placementCondition(in *inputs) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionPlacementVerified}
	switch {
	case !in.placementFound:
		c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementNotFound
		c.Message = fmt.Sprintf("Placement %q does not exist in this namespace; the %d ManifestWorks already delivered are kept", in.placementName, len(in.owned))
	case in.undecided != "":
		c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementNotDecided
		c.Message = fmt.Sprintf("%s; the %d ManifestWorks already delivered are kept until it is", in.undecided, len(in.owned))
	case len(in.clusters) == 0:
		c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonPlacementDecisionEmpty
		c.Message = fmt.Sprintf("Placement %q selects no cluster: check its predicates and the ManagedClusterSetBindings of this namespace", in.placementName)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonPlacementDecided
		c.Message = fmt.Sprintf("Placement %q selects %d clusters", in.placementName, len(in.clusters))
	}
	return c
}

// appliedCondition is ManifestworkApplied: True only when every decided cluster applied the current template,
// which recipes that orphan the workloads and then delete the PlacementManifestWork wait for. failure is the
// rollout's failure step: while a failed revision is rolled back the plan and the summary are the completed
// revision's, so a cluster back on it counts as applied, and only the step tells that none carries the current
// template.
func appliedCondition(in *inputs, out *outcome, failure failureStep, outcomes []status.ClusterOutcome, summary workv1alpha1.PlacedManifestWorkSummary) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionManifestworkApplied, Status: metav1.ConditionFalse}
	switch {
	case in.invalid != nil:
		c.Reason, c.Message = in.invalid.Reason, in.invalid.Message
	case !in.decided() || len(in.clusters) == 0:
		c.Reason, c.Message = workv1alpha1.ReasonNoClusters, "No cluster is decided, so no ManifestWork is written"
	case len(out.conflicts) > 0:
		c.Reason = workv1alpha1.ReasonManifestWorkConflict
		c.Message = fmt.Sprintf("A ManifestWork named %q that this PlacementManifestWork does not own exists in %s; it is left alone and those clusters get nothing until it is removed or renamed",
			in.workName, names(out.conflicts))
	case len(out.writeErrors) > 0:
		c.Reason = workv1alpha1.ReasonWriteFailed
		c.Message = fmt.Sprintf("%d ManifestWork writes failed and will be retried, for clusters %s; first error: %v",
			len(out.writeErrors), names(out.failedClusters), out.writeErrors[0])
	case failure.rollingBack:
		// Before the clusters' own results: an apply failure of the completed revision is on Ready and
		// status.unhealthyClusters, and what a reader of this condition must learn is that the current template
		// is not what the clusters are meant to carry.
		c.Reason = workv1alpha1.ReasonRolledBack
		c.Message = fmt.Sprintf("Revision %d failed and is rolled back: %d of %d clusters applied revision %d, the last completed, not the current template; no cluster gets revision %d until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it",
			failure.failed.Revision, summary.Applied, summary.Total, failure.to.Revision, failure.failed.Revision)
	default:
		var failed []string
		for _, o := range outcomes {
			if o.Reason == workv1alpha1.ReasonApplyFailed {
				failed = append(failed, o.Cluster)
			}
		}
		switch {
		case len(failed) > 0:
			c.Reason = workv1alpha1.ReasonApplyFailed
			c.Message = fmt.Sprintf("%d of %d clusters report Applied=False: %s", len(failed), summary.Total, names(failed))
		case summary.Applied < summary.Total:
			c.Reason = workv1alpha1.ReasonWaitingForApply
			c.Message = fmt.Sprintf("%d of %d clusters applied the current ManifestWork", summary.Applied, summary.Total)
		default:
			c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonAsExpected
			c.Message = fmt.Sprintf("All %d clusters applied the current ManifestWork", summary.Total)
		}
	}
	return c
}

func distributedCondition(pmw *workv1alpha1.PlacementManifestWork, invalid *planner.InvalidError, plan *planner.Plan) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionDistributed, Status: metav1.ConditionFalse}
	switch {
	case invalid != nil:
		c.Reason, c.Message = invalid.Reason, invalid.Message
	case plan != nil && (len(plan.OverrideFailures) > 0 || len(plan.DependencyFailures) > 0):
		c.Reason, c.Message = clusterFailures(plan)
	case plan != nil && len(plan.Problems) > 0:
		msgs := make([]string, 0, len(plan.Problems))
		for _, problem := range plan.Problems {
			msgs = append(msgs, problem.Message)
		}
		c.Reason, c.Message = plan.Problems[0].Reason, strings.Join(msgs, "; ")
	default:
		c.Status, c.Reason = metav1.ConditionTrue, workv1alpha1.ReasonDistributed
		manifests := len(pmw.Spec.ManifestWorkTemplate.Workload.Manifests)
		splits := 0
		if plan != nil {
			splits = len(plan.Splits)
		}
		c.Message = fmt.Sprintf("%d manifests: %d replicated, %d split", manifests, manifests-splits, splits)
	}
	return c
}

// aggregatedCondition is StatusAggregated: whether the webhooks that roll manifests' status up under
// failurePolicy Fail did; ok is false when no manifest has one. last is the condition as written before.
func aggregatedCondition(r status.Rollup, last *metav1.Condition) (metav1.Condition, bool) {
	c := metav1.Condition{Type: workv1alpha1.ConditionStatusAggregated, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonStatusAggregated}
	switch {
	case r.WebhookAggregations == 0:
		return c, false
	case len(r.AggregationFailures) == 0:
		c.Message = fmt.Sprintf("The interpreter webhooks rolled the status of %d manifests up", r.WebhookAggregations)
		if r.WebhookAggregations == 1 {
			c.Message = "The interpreter webhook rolled the status of 1 manifest up"
		}
		return c, true
	}
	failed := make([]string, 0, len(r.AggregationFailures))
	for _, f := range r.AggregationFailures {
		failed = append(failed, f.Manifest)
	}
	first := r.AggregationFailures[0].Err
	kind := ""
	if reason := interpreterwebhook.ReasonOf(first); reason != "" {
		kind = fmt.Sprintf(" (%s)", reason)
	}
	// What fails comes first and the error of the call last. The client's words are the same for the same
	// failure (no uid, no local port), but it quotes the webhook's own (its message, its HTTP error's body),
	// which may differ on every call (a time, a counter): so while the same manifests fail for the same reason
	// the message first written stays, and a webhook that keeps failing costs no status write.
	its := "its"
	if len(failed) > 1 {
		its = "their"
	}
	// The part before the error is compared below, so it is never cut: only the error is (TruncateTail). Long
	// manifest names (five of them may take 3 KB) name fewer manifests instead, so that the message keeps its
	// bound and room for the error.
	var stable string
	for listed := maxNamesInMessage; ; listed-- {
		stable = fmt.Sprintf("The interpreter webhook did not roll the status up (AggregateStatus) for %s%s: %s status.manifests[].aggregated stays as last written (absent when none was), and the webhook is asked again every %s. Error: ",
			namesUpTo(failed, listed), kind, its, interpreterRetry)
		if listed == 1 || len(stable)+aggregationErrorRoom <= interpreter.MaxMessage {
			break
		}
	}
	c.Status, c.Reason = metav1.ConditionFalse, workv1alpha1.ReasonInterpreterFailed
	c.Message = interpreter.TruncateTail(stable, first.Error())
	if last != nil && last.Status == metav1.ConditionFalse && last.Reason == c.Reason && strings.HasPrefix(last.Message, stable) {
		c.Message = last.Message
	}
	return c, true
}

// names lists the first few names and counts the rest.
func names(all []string) string {
	return namesUpTo(all, maxNamesInMessage)
}

// namesUpTo lists the first n names and counts the rest.
func namesUpTo(all []string, n int) string {
	if len(all) <= n {
		return strings.Join(all, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(all[:n], ", "), len(all)-n)
}

func sortedKeys(m map[string]*workv1.ManifestWork) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clusterFailures is the reason and message of the conditions when some clusters keep their works because they
// cannot get the current template: OverrideFailed when an override fails somewhere (the message then names the
// dependency failures too), otherwise the reason of the first cluster's dependency failure (DependencyNotFound,
// InterpreterFailed).
func clusterFailures(plan *planner.Plan) (string, string) {
	switch {
	case len(plan.DependencyFailures) == 0:
		return workv1alpha1.ReasonOverrideFailed, overrideFailedMessage(plan)
	case len(plan.OverrideFailures) == 0:
		first := slices.Min(slices.Collect(maps.Keys(plan.DependencyFailures)))
		return plan.DependencyFailures[first].Reason, interpreter.Truncate(dependencyFailedMessage(plan))
	}
	return workv1alpha1.ReasonOverrideFailed, interpreter.Truncate(overrideFailedMessage(plan) + ". " + dependencyFailedMessage(plan))
}

// maxDependencyFailures bounds the distinct dependency failures a message quotes.
const maxDependencyFailures = 3

// clustersCount is "1 cluster" or "n clusters".
func clustersCount(n int) string {
	if n == 1 {
		return "1 cluster"
	}
	return fmt.Sprintf("%d clusters", n)
}

// dependencyFailedMessage says, for each distinct failure, on which clusters the dependencies of the manifests
// as their overrides leave them cannot be found and why, and what becomes of those clusters.
func dependencyFailedMessage(plan *planner.Plan) string {
	byMessage := map[string][]string{}
	for cluster, e := range plan.DependencyFailures {
		byMessage[e.Message] = append(byMessage[e.Message], cluster)
	}
	messages := slices.Sorted(maps.Keys(byMessage))
	parts := make([]string, 0, min(len(messages), maxDependencyFailures)+1)
	for _, m := range messages[:min(len(messages), maxDependencyFailures)] {
		clusters := byMessage[m]
		sort.Strings(clusters)
		parts = append(parts, fmt.Sprintf("on %s (%s): %s", clustersCount(len(clusters)), names(clusters), m))
	}
	if more := len(messages) - maxDependencyFailures; more > 0 {
		// Overrides that differ per cluster (cluster.name in a value) give a failure per cluster: the message
		// stays within a condition's and an event's bounds.
		parts = append(parts, fmt.Sprintf("and %d more failures", more))
	}
	return fmt.Sprintf("The dependencies of the manifests as the overrides leave them cannot be found %s. They keep their ManifestWorks as they were (a cluster without one gets none); the other clusters are served",
		strings.Join(parts, "; "))
}

// overrideFailedMessage names the overrides that fail, the clusters where each fails and why on the first of
// them, and says what becomes of those clusters.
func overrideFailedMessage(plan *planner.Plan) string {
	byOverride := map[string][]string{}
	why := map[string]string{}
	var order []string
	for cluster, ce := range plan.OverrideFailures {
		for _, f := range ce.Failures {
			if _, ok := byOverride[f.Override]; !ok {
				order = append(order, f.Override)
			}
			if !slices.Contains(byOverride[f.Override], cluster) {
				byOverride[f.Override] = append(byOverride[f.Override], cluster)
			}
			if w, ok := why[f.Override+"/"+cluster]; !ok || f.Error() < w {
				why[f.Override+"/"+cluster] = f.Error()
			}
		}
	}
	sort.Strings(order)
	parts := make([]string, 0, len(order))
	for _, o := range order {
		clusters := byOverride[o]
		sort.Strings(clusters)
		parts = append(parts, fmt.Sprintf("override %s fails on %d clusters (%s): %s", o, len(clusters), names(clusters), why[o+"/"+clusters[0]]))
	}
	return fmt.Sprintf("%s. Those %d clusters keep their ManifestWorks as they were (a cluster without one gets none); the other clusters are served. Fix the override or the clusters' labels or claims",
		strings.Join(parts, "; "), len(plan.OverrideFailures))
}
