package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// maxFailedClustersListed bounds status.failedRevision.clusters.
const maxFailedClustersListed = 10

// completedTarget is the last completed revision, as failurePolicy Rollback returns to it and a joining cluster
// gets it during a rollout: a copy of the PlacementManifestWork whose template-relevant spec is the revision's,
// and what gather reads for it.
type completedTarget struct {
	pmw          *workv1alpha1.PlacementManifestWork
	template     []template.Manifest
	overrides    *override.Set
	deps         *dependencyFinder
	planInput    planner.Input
	scoresExpire time.Duration
}

// failureRecord is status.failedRevision and status.retriedRevision as the manager last decided them.
type failureRecord struct {
	failed  *workv1alpha1.FailedRevision
	retried int64
}

// failureInput is what judgeFailure weighs besides the PlacementManifestWork's spec.
type failureInput struct {
	// record is the failure record before this reconcile (memory, seeded from the status).
	record failureRecord
	// current is the current spec's revision.
	current workv1alpha1.RevisionReference
	// breached is set when the rollout strategy reports more failures than maxFailures on the current revision.
	breached bool
	// failedClusters are the clusters that carry the current revision and failed (degraded or timed out), sorted.
	failedClusters []string
	// canRollBack is set when the completed revision's template was read and can be delivered.
	canRollBack bool
}

// failureStep is what judgeFailure decided: status.failedRevision and retriedRevision after this reconcile, and
// which desired state the works follow.
type failureStep struct {
	// evaluated is set when the step was judged (a plan exists); otherwise the status keeps its record.
	evaluated bool
	failed    *workv1alpha1.FailedRevision
	retried   int64
	// recorded is set when failed was recorded by this reconcile; retry when a retry was consumed.
	recorded, retry bool
	// rollingBack: the works follow the completed revision (to), at the rollout strategy's pace.
	rollingBack bool
	to          *workv1alpha1.RevisionReference
	// hold: a failure is recorded but the completed revision cannot be delivered (its ControllerRevision cannot
	// be read or used): no cluster gets a new template, as under Pause.
	hold bool
	// noTarget: failurePolicy Rollback, a failed rollout, and no completed revision to return to.
	noTarget bool
}

// judgeFailure decides, without I/O, what failurePolicy makes of the current rollout:
//   - a record whose revision is no longer the current spec's (the spec moved to another template, or back to
//     the failed one under a new number) or under another policy than Rollback is cleared;
//   - the retry annotation naming the recorded revision, once per revision (status.retriedRevision), clears it
//     and the revision is rolled out again;
//   - with failurePolicy Rollback, a rollout that breached maxFailures is recorded when a completed revision
//     other than the current one exists (otherwise it stops, as under Pause: noTarget);
//   - while a record names the current revision, the works follow the completed revision (rollingBack), or stay
//     as they are when it cannot be delivered (hold).
func judgeFailure(pmw *workv1alpha1.PlacementManifestWork, in failureInput) failureStep {
	step := failureStep{evaluated: true, failed: in.record.failed.DeepCopy(), retried: in.record.retried, to: pmw.Status.CompletedRevision.DeepCopy()}
	rollback := pmw.Spec.FailurePolicy == workv1alpha1.FailurePolicyRollback
	switch f := step.failed; {
	case f == nil:
	case !rollback || f.Name != in.current.Name || f.Revision != in.current.Revision:
		step.failed = nil
	case retryAsked(pmw) == f.Revision && f.Revision != step.retried:
		step.failed, step.retried, step.retry = nil, f.Revision, true
	}
	hasTarget := step.to != nil && step.to.Name != in.current.Name
	if step.failed == nil && !step.retry && rollback && in.breached {
		if hasTarget {
			step.recorded = true
			step.failed = &workv1alpha1.FailedRevision{Revision: in.current.Revision, Name: in.current.Name}
			listed := in.failedClusters
			if len(listed) > maxFailedClustersListed {
				listed = listed[:maxFailedClustersListed]
			}
			step.failed.Clusters = append([]string(nil), listed...)
			step.failed.ClustersNotListed = int32(len(in.failedClusters) - len(listed))
		} else {
			step.noTarget = true
		}
	}
	if step.failed != nil {
		step.rollingBack = hasTarget && in.canRollBack
		step.hold = !step.rollingBack
	}
	return step
}

// retryAsked is the revision number the retry annotation names, or -1.
func retryAsked(pmw *workv1alpha1.PlacementManifestWork) int64 {
	v, ok := pmw.Annotations[workv1alpha1.AnnotationRetryRevision]
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// failedClusters are the clusters that carry the current template and failed: degraded or timed out, sorted.
// They are judged on the health before this reconcile's writes (d.current), as the rollout strategy judged the
// breach of maxFailures they explain: status.failedRevision records them, and they stay its record whatever the
// writes do to them (a work rewritten for new split shares is neither failed nor succeeded in status.rollout
// until its agent reports; rolloutStatus names such clusters in the RolloutMaxFailures message).
func failedClusters(clusters []string, d *desired) []string {
	timedOut := map[string]bool{}
	for _, c := range d.rollout.timedOut {
		timedOut[c] = true
	}
	var out []string
	for _, c := range clusters {
		if d.upToDate[c] && (timedOut[c] || d.current[c].State == health.Degraded) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// currentRevision is the current spec's revision: the revision plan's, or without one (a preview) the status'
// when it names the current template (name), or the template's name alone.
func currentRevision(pmw *workv1alpha1.PlacementManifestWork, p *revision.Plan, name string) workv1alpha1.RevisionReference {
	if p != nil {
		return p.Current
	}
	if c := pmw.Status.CurrentRevision; c != nil && c.Name == name {
		return *c
	}
	return workv1alpha1.RevisionReference{Name: name}
}

// heldOps drops the writes that would bring a cluster a new template: what a recorded failure that cannot be
// rolled back holds, as Pause would.
func heldOps(ops []writeOp) []writeOp {
	out := ops[:0]
	for _, op := range ops {
		if op.delete || !op.templateChange {
			out = append(out, op)
		}
	}
	return out
}

// completedTarget reads, while the current revision is not the completed one and the completed one may be
// needed (failurePolicy Rollback, or a decided cluster without a work, which joins on it), the completed
// revision's template: its ControllerRevision's data, read around the cache (which drops it) once per revision
// (memory), then what gather reads for a spec (template, dependencies, overrides, cluster facts). It returns nil
// when it is not needed or cannot be used; a failed rollout then stops as under Pause, and a joining cluster
// waits for its turn.
func (r *PlacementManifestWorkReconciler) completedTarget(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) (*completedTarget, error) {
	completed := pmw.Status.CompletedRevision
	if completed == nil || pmw.Spec.FailurePolicy != workv1alpha1.FailurePolicyRollback && !anyWithoutWork(obs) {
		return nil, nil
	}
	if obs.revisionName == completed.Name {
		return nil, nil
	}
	log := ctrl.LoggerFrom(ctx)
	spec, err := r.memory.revisionSpec(manifestwork.Owner(pmw), completed.Name, func() (*workv1alpha1.PlacementManifestWorkSpec, error) {
		return r.readRevisionSpec(ctx, pmw, completed.Name)
	})
	if apierrors.IsNotFound(err) || errors.Is(err, revision.ErrUnusable) {
		log.Info("The completed revision's ControllerRevision cannot be read; a failed rollout cannot be rolled back, nor a joining cluster get it", "revision", completed.Name, "error", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := &completedTarget{pmw: revision.WithTemplate(pmw, spec)}
	var invalid *planner.InvalidError
	if t.template, err = planner.ParseTemplate(t.pmw); err == nil && t.pmw.Spec.PropagateDependencies {
		var deps *dependencyFinder
		if deps, invalid, err = r.dependencies(ctx, t.pmw, obs.kinds, t.template); err != nil {
			return nil, err
		}
		if deps != nil {
			t.template, t.deps = append(t.template, deps.own...), deps
		}
	}
	if err == nil && invalid == nil && len(t.pmw.Spec.Overrides) > 0 {
		// Compiled per reconcile while it is needed: the compiled overrides in memory are the spec's.
		if t.overrides, err = override.Compile(t.pmw.Spec.Overrides); err == nil {
			if problems := t.overrides.CheckDelivered(t.template, planner.TemplateSplitFields(t.pmw, t.template, obs.kinds)); len(problems) > 0 {
				err = problems
			}
		}
	}
	if err != nil || invalid != nil {
		log.Info("The completed revision cannot be delivered again; a failed rollout cannot be rolled back, nor a joining cluster get it", "revision", completed.Name, "error", err, "invalid", invalid)
		return nil, nil
	}
	if t.planInput, t.scoresExpire, err = r.planInput(ctx, t.pmw, obs.clusters); err != nil {
		return nil, err
	}
	t.planInput.Overrides = t.overrides
	if t.overrides.Len() == 0 {
		t.deps = nil
	}
	return t, nil
}

// readRevisionSpec reads the named ControllerRevision of pmw around the cache and decodes its data.
func (r *PlacementManifestWorkReconciler) readRevisionSpec(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, name string) (*workv1alpha1.PlacementManifestWorkSpec, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.reader()
	}
	cr := &appsv1.ControllerRevision{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: pmw.Namespace, Name: name}, cr); err != nil {
		return nil, fmt.Errorf("reading ControllerRevision %s: %w", name, err)
	}
	return revision.Spec(cr, pmw)
}

// anyWithoutWork reports whether a decided cluster has no ManifestWork of this PlacementManifestWork.
func anyWithoutWork(obs *observation) bool {
	for _, c := range obs.clusters {
		if obs.owned[c] == nil {
			return true
		}
	}
	return false
}

// failureStored reports whether the PlacementManifestWork as read records the failure f in its status.
func failureStored(pmw *workv1alpha1.PlacementManifestWork, f *workv1alpha1.FailedRevision) bool {
	s := pmw.Status.FailedRevision
	return s != nil && f != nil && s.Name == f.Name && s.Revision == f.Revision
}
