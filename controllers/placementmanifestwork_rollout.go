package controllers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	rolloutsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"
	placementsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// defaultMoveTimeout bounds how long leaving works are kept when moveStrategy.timeout is not set.
const defaultMoveTimeout = 10 * time.Minute

func hasSplit(pmw *workv1alpha1.PlacementManifestWork) bool {
	for _, s := range pmw.Spec.DistributionStrategy {
		if s.Type == workv1alpha1.DistributionSplit {
			return true
		}
	}
	return false
}

// decisionGetter serves the PlacementDecisions already read to sdk-go's tracker. A decision without OCM's
// group index label belongs to group 0, as OCM's placement controller would label it.
type decisionGetter []clusterv1beta1.PlacementDecision

func (d decisionGetter) List(selector labels.Selector, namespace string) ([]*clusterv1beta1.PlacementDecision, error) {
	var out []*clusterv1beta1.PlacementDecision
	for i := range d {
		pd := d[i].DeepCopy()
		if pd.Namespace != namespace || !selector.Matches(labels.Set(pd.Labels)) {
			continue
		}
		if _, ok := pd.Labels[clusterv1beta1.DecisionGroupIndexLabel]; !ok {
			pd.Labels[clusterv1beta1.DecisionGroupIndexLabel] = "0"
		}
		out = append(out, pd)
	}
	return out, nil
}

// rolloutPlan says which clusters may receive the current template now.
type rolloutPlan struct {
	// allowed are the clusters whose work may be created or brought to the current template; nil means all.
	allowed map[string]bool
	// timedOut are clusters that did not become available within progressDeadline.
	timedOut    []string
	maxFailures bool
	// paused is spec.paused: no cluster gets the current template unless nothing is held back (planWrites).
	paused       bool
	currentGroup string
	// awaitingApproval is the rollout gate that held a cluster back in this step (holdAtGates).
	awaitingApproval string
	// budget is what the disruption budget held back of planWrites' writes (gateByBudget).
	budget  budgetOutcome
	recheck time.Duration
	err     error
	// failure is what failurePolicy made of the rollout (judgeFailure), handed on to computeStatus.
	failure failureStep
	// completion is what planWrites decided about a run whose manifests finish (ttlSecondsAfterFinished). It
	// travels with the rollout plan, the part of planWrites' decision the reconciler hands on to computeStatus.
	completion completionPlan
}

// planRollout asks sdk-go's rollout handler which clusters are next. A cluster whose work is missing or
// carries an older template (its split shares do not count) is ToApply; one that carries the current template is Succeeded when available,
// Failed when degraded, Progressing otherwise, timed from when the manager last changed its spec.
func planRollout(pmw *workv1alpha1.PlacementManifestWork, obs *observation, current map[string]health.ClusterResult) rolloutPlan {
	strategy := pmw.Spec.RolloutStrategy
	if strategy == nil || strategy.Type == "" || strategy.Type == clusterv1alpha1.All {
		return rolloutPlan{}
	}
	tracker := placementsdk.NewPlacementDecisionClustersTrackerWithGroups(obs.placement, decisionGetter(obs.decisions), nil)
	// On an error no cluster is allowed: clusters keep what they have until the strategy is fixed.
	if err := tracker.Refresh(); err != nil {
		return rolloutPlan{allowed: map[string]bool{}, err: err}
	}
	groupOf := tracker.ExistingClusterGroupsBesides().ClusterToGroupKey()
	handler, err := rolloutsdk.NewRolloutHandler(tracker, func(string, struct{}) (rolloutsdk.ClusterRolloutStatus, error) {
		return rolloutsdk.ClusterRolloutStatus{}, nil
	})
	if err != nil {
		return rolloutPlan{allowed: map[string]bool{}, err: err}
	}
	statuses := make([]rolloutsdk.ClusterRolloutStatus, 0, len(obs.clusters))
	for _, cluster := range obs.clusters {
		if obs.plan != nil && obs.plan.Kept(cluster) {
			// An override fails there, or the dependencies of its overridden manifests cannot be found, so it
			// cannot get the current template (OverrideFailed, DependencyNotFound say so): it takes no slot of the
			// rollout, which goes on with the other clusters. Skip, not left out: sdk-go counts a decided cluster
			// without a status as ToApply, which would hold its decision group (and every later one) for good.
			statuses = append(statuses, rolloutsdk.ClusterRolloutStatus{ClusterName: cluster, GroupKey: groupOf[cluster], Status: rolloutsdk.Skip})
			continue
		}
		st := rolloutsdk.ClusterRolloutStatus{ClusterName: cluster, GroupKey: groupOf[cluster], Status: rolloutsdk.ToApply}
		w := obs.owned[cluster]
		if manifestwork.CarriesTemplate(w, obs.clusterTemplateHash(cluster)) {
			st.LastTransitionTime = updatedAt(w)
			switch current[cluster].State {
			case health.Healthy:
				st.Status = rolloutsdk.Succeeded
				st.LastTransitionTime = succeededAt(w)
			case health.Degraded:
				st.Status = rolloutsdk.Failed
			default:
				st.Status = rolloutsdk.Progressing
			}
		}
		statuses = append(statuses, st)
	}
	_, result, err := handler.GetRolloutCluster(*strategy, statuses)
	if err != nil {
		return rolloutPlan{allowed: map[string]bool{}, err: err}
	}
	plan := rolloutPlan{allowed: map[string]bool{}, maxFailures: result.MaxFailureBreach}
	for _, c := range result.ClustersToRollout {
		plan.allowed[c.ClusterName] = true
		if plan.currentGroup == "" && strategy.Type == clusterv1alpha1.ProgressivePerGroup {
			plan.currentGroup = groupName(c.GroupKey)
		}
	}
	if len(pmw.Spec.RolloutGates) > 0 && !obs.onCompleted {
		// Gates hold new revisions only: a rollback (whose target is the completed revision) passes them.
		current := obs.currentRevision.Revision
		plan.awaitingApproval = holdAtGates(pmw.Spec.RolloutGates, func(gate string) bool { return approved(obs.approvals, current, gate) },
			statuses, result.ClustersToRollout, groupOf, plan.allowed)
	}
	for _, c := range result.ClustersTimeOut {
		plan.timedOut = append(plan.timedOut, c.ClusterName)
	}
	sort.Strings(plan.timedOut)
	if result.RecheckAfter != nil {
		plan.recheck = *result.RecheckAfter
	}
	return plan
}

func groupName(k placementsdk.GroupKey) string {
	if k.GroupName != "" {
		return k.GroupName
	}
	return fmt.Sprintf("%d", k.GroupIndex)
}

// succeededAt is when an available cluster began to succeed with its current template, from which
// minSuccessTime is counted: when its WorkAvailable condition last turned True for the work's generation, but
// never before the template arrived (updatedAt). The work agent keeps the condition's lastTransitionTime while
// it stays True across a template update, so on its own it would date from the work's first availability and
// the soak of a template update would be over before it began.
func succeededAt(w *workv1.ManifestWork) *metav1.Time {
	arrived := updatedAt(w)
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable); c != nil && c.ObservedGeneration == w.Generation && c.LastTransitionTime.After(arrived.Time) {
		return &c.LastTransitionTime
	}
	return arrived
}

func updatedAt(w *workv1.ManifestWork) *metav1.Time {
	if t, err := time.Parse(time.RFC3339, w.Annotations[workv1alpha1.AnnotationUpdatedAt]); err == nil {
		return &metav1.Time{Time: t}
	}
	return &w.CreationTimestamp
}

// moveTimeout is how long leaving works are kept; zero means they are removed at once.
func moveTimeout(pmw *workv1alpha1.PlacementManifestWork) time.Duration {
	m := pmw.Spec.MoveStrategy
	switch {
	case m != nil && m.Type == workv1alpha1.MoveImmediate:
		return 0
	case m != nil && m.Timeout != nil:
		return m.Timeout.Duration
	default:
		return defaultMoveTimeout
	}
}

// rolloutStatus and rolloutCondition describe how far the current template has reached. results are the
// clusters' health after this reconcile's writes, as the summary judges them: a cluster whose work this
// reconcile just gave the current template is neither succeeded nor failed until its agent reports on that
// template. d.current judged it before the write, on the template its work carried then; counting that would
// be wrong, and undone by the next reconcile in a second status write. current names the current revision in
// messages ("revision 3"), or "the current template" when the revisions are not known.
func rolloutStatus(pmwName string, clusters []string, d *desired, results map[string]health.ClusterResult, current string) (*workv1alpha1.RolloutStatus, metav1.Condition) {
	st := &workv1alpha1.RolloutStatus{Total: int32(len(clusters)), CurrentGroup: d.rollout.currentGroup, AwaitingApproval: d.rollout.awaitingApproval}
	timedOut := map[string]bool{}
	for _, c := range d.rollout.timedOut {
		timedOut[c] = true
	}
	for _, c := range clusters {
		if !d.upToDate[c] {
			continue
		}
		st.Updated++
		switch {
		case timedOut[c] || results[c].State == health.Degraded:
			st.Failed++
		case results[c].State == health.Healthy:
			st.Succeeded++
		}
	}
	cond := metav1.Condition{Type: workv1alpha1.ConditionRolloutComplete, Status: metav1.ConditionFalse}
	// A recorded failure wins over a pause: it needs the user's action (Stalled), which a pause does not say.
	held := d.rollout.paused && st.Updated < st.Total
	alsoPaused := ""
	if held {
		alsoPaused = "; the rollout is also paused (spec.paused): the clusters keep what they carry until it is resumed"
	}
	switch {
	case d.rollout.err != nil:
		cond.Reason, cond.Message = workv1alpha1.ReasonInvalidRolloutStrategy, d.rollout.err.Error()
	case d.rollout.failure.rollingBack:
		cond.Reason, cond.Message = workv1alpha1.ReasonRolledBack, rolledBackMessage(d.rollout.failure, st)+alsoPaused
	case d.rollout.failure.hold:
		f := d.rollout.failure.failed
		cond.Reason = workv1alpha1.ReasonRolloutMaxFailures
		cond.Message = fmt.Sprintf("Revision %d failed on %s and cannot be rolled back: the completed revision's ControllerRevision cannot be read, so every cluster keeps what it carries; change the spec (revert it in git) or retry with kubectl pmw rollout retry",
			f.Revision, failedNames(f)) + alsoPaused
	case d.rollout.maxFailures:
		cond.Reason = workv1alpha1.ReasonRolloutMaxFailures
		cond.Message = fmt.Sprintf("The rollout stopped: %d of %d updated clusters failed, more than maxFailures allows; %d of %d clusters carry the current template", st.Failed, st.Updated, st.Updated, st.Total)
		if rejudged := rejudgedFailures(clusters, d, results); len(rejudged) > 0 {
			// The rollout strategy stopped on the clusters' health before the writes, as it must (it decides
			// which works are written); the counts are after them. A failed cluster whose work was rewritten
			// since (new split shares after a failover) counts again once its agent reports on that work, so
			// the message says why the stop and the counts differ instead of counting it failed.
			cond.Message = fmt.Sprintf("The rollout stopped: more updated clusters had failed than maxFailures allows before this reconcile rewrote the works of %s, which count again once their agents report on them; %d of %d updated clusters count as failed now; %d of %d clusters carry the current template",
				names(rejudged), st.Failed, st.Updated, st.Updated, st.Total)
		}
		if d.rollout.failure.noTarget {
			cond.Message += "; failurePolicy Rollback had nothing to return to: no earlier revision completed"
		}
		cond.Message += alsoPaused
	case held:
		cond.Reason = workv1alpha1.ReasonRolloutPaused
		cond.Message = fmt.Sprintf("The rollout is paused (spec.paused): %s is held back from %d of %d clusters, which keep what they carry; set spec.paused to false to resume",
			current, st.Total-st.Updated, st.Total)
	case d.rollout.awaitingApproval != "":
		cond.Reason = workv1alpha1.ReasonRolloutAwaitingApproval
		cond.Message = awaitingApprovalMessage(pmwName, d.rollout.awaitingApproval, current, st, d.currentRevision.Revision)
	case len(d.rollout.timedOut) > 0:
		cond.Reason = workv1alpha1.ReasonRolloutTimeout
		cond.Message = fmt.Sprintf("Clusters %s did not become available within progressDeadline; %d of %d clusters carry the current template", names(d.rollout.timedOut), st.Updated, st.Total)
	case st.Updated < st.Total:
		cond.Reason = workv1alpha1.ReasonRolloutProgressing
		cond.Message = fmt.Sprintf("%d of %d clusters carry the current template", st.Updated, st.Total)
		if st.CurrentGroup != "" {
			cond.Message += ", rolling out group " + st.CurrentGroup
		}
		if b := d.rollout.budget.status; b != nil && b.Message != "" {
			cond.Message += "; the disruption budget holds clusters back: " + b.Message
		}
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.ReasonRolloutSucceeded
		cond.Message = fmt.Sprintf("All %d clusters carry the current template", st.Total)
	}
	return st, cond
}

// rejudgedFailures are the updated clusters the rollout strategy judged failed before this reconcile's writes
// (failedClusters) that status.rollout does not count failed after them: their works were rewritten, and
// nothing is known of the new ones yet.
func rejudgedFailures(clusters []string, d *desired, results map[string]health.ClusterResult) []string {
	var out []string
	for _, c := range failedClusters(clusters, d) {
		if !slices.Contains(d.rollout.timedOut, c) && results[c].State != health.Degraded {
			out = append(out, c)
		}
	}
	return out
}

// rolledBackMessage says which revision failed where, which completed revision the clusters return to, and
// how far they are (st counts the clusters that carry it).
func rolledBackMessage(f failureStep, st *workv1alpha1.RolloutStatus) string {
	head := fmt.Sprintf("Revision %d failed on %s (more than maxFailures allows)", f.failed.Revision, failedNames(f.failed))
	tail := "; it is not rolled out again until the spec changes (revert it in git) or kubectl pmw rollout retry asks for it"
	if st.Updated < st.Total {
		return fmt.Sprintf("%s and is being rolled back to revision %d, the last completed: %d of %d clusters carry it%s", head, f.to.Revision, st.Updated, st.Total, tail)
	}
	return fmt.Sprintf("%s and was rolled back to revision %d, the last completed, on every cluster%s", head, f.to.Revision, tail)
}

// failedNames names the failed clusters of a record: "clusters a, b and 3 more".
func failedNames(f *workv1alpha1.FailedRevision) string {
	switch {
	case len(f.Clusters) == 0:
		return "its clusters"
	case f.ClustersNotListed > 0:
		return fmt.Sprintf("clusters %s and %d more", strings.Join(f.Clusters, ", "), f.ClustersNotListed)
	}
	return "clusters " + strings.Join(f.Clusters, ", ")
}
