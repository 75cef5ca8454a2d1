package controllers

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

// ownedRevisions lists the ControllerRevisions of the PlacementManifestWork: its label, and its UID as their
// controller.
func (r *PlacementManifestWorkReconciler) ownedRevisions(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := r.listByLabel(ctx, list, workv1alpha1.LabelPlacementManifestWork, manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)), client.InNamespace(pmw.Namespace)); err != nil {
		return nil, fmt.Errorf("listing ControllerRevisions: %w", err)
	}
	return revision.Owned(list.Items, pmw), nil
}

// planRevisions decides, without I/O, the ControllerRevisions of the desired state's template (revision.Compute):
// its data, the template hash of the works no override selects and those of the works an override selects.
func planRevisions(pmw *workv1alpha1.PlacementManifestWork, in *inputs, d *desired) *revision.Plan {
	want := revision.Desired{Data: in.revisionData, TemplateHash: d.templateHash}
	for _, h := range d.templateHashes {
		want.ClusterTemplateHashes = append(want.ClusterTemplateHashes, h)
	}
	sort.Strings(want.ClusterTemplateHashes)
	p := revision.Compute(pmw, in.revisions, want)
	return &p
}

// applyRevisions writes the revision plan while the works are written (desiredStateAndApply), not before
// them: a reader that finds a work's template hash among the revisions (kubectl pmw status, the fleet
// controller) may see the work a moment before its revision. That is safe because the revisions are a record
// the works do not wait on: the status, which names the current revision, is written only after both, and
// only when this succeeded; the completed revision a rollback or a joining cluster reads was named by such a
// status; a failure is retried by the next reconcile and does not hold the works back. It creates the current
// revision (or, when the cache has not shown one this manager created, finds it on the API server), patches
// the one that comes back (number, labels) and deletes those beyond the history limit. The
// ControllerRevisions' data is immutable and the cache drops it, so updates are merge patches. It reads pmw
// and p only, so it may run beside apply.
func (r *PlacementManifestWorkReconciler) applyRevisions(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, p *revision.Plan) error {
	if p.Create != nil {
		if err := r.Create(ctx, p.Create.DeepCopy()); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating ControllerRevision %s: %w", p.Create.Name, err)
			}
			if err := r.revisionTaken(ctx, pmw, p.Create.Name); err != nil {
				return err
			}
		}
	}
	if p.Update != nil {
		if err := r.Patch(ctx, p.Update.DeepCopy(), client.MergeFrom(p.UpdateFrom)); err != nil {
			return fmt.Errorf("updating ControllerRevision %s: %w", p.Update.Name, err)
		}
	}
	for _, cr := range p.Delete {
		if err := r.Delete(ctx, cr, client.Preconditions{UID: &cr.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ControllerRevision %s: %w", cr.Name, err)
		}
	}
	return nil
}

// revisionTaken handles a create refused because the name is taken: this manager's own create the cache does
// not show yet is fine; another object (a PlacementManifestWork of the same name deleted and created again,
// whose revisions the garbage collector has not removed yet) is an error that a later reconcile retries.
func (r *PlacementManifestWorkReconciler) revisionTaken(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, name string) error {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	cur := &appsv1.ControllerRevision{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: pmw.Namespace, Name: name}, cur); err != nil {
		return fmt.Errorf("reading the existing ControllerRevision %s: %w", name, err)
	}
	if !revision.OwnedBy(cur, pmw) {
		return fmt.Errorf("ControllerRevision %s exists and belongs to another object", name)
	}
	return nil
}

// revisionStatus sets status.currentRevision and status.completedRevision: the current revision once it is
// written, and it becomes the completed one when every decided cluster carries the current template
// (RolloutComplete True) and is available. The completed revision's number follows a renumbering.
func revisionStatus(st *workv1alpha1.PlacementManifestWorkStatus, obs *observation, rollout *metav1.Condition) {
	p := obs.revisionPlan
	if p == nil || obs.revisionError != nil {
		return
	}
	current := p.Current
	st.CurrentRevision = &current
	s := st.PlacedManifestWorkSummary
	if rollout != nil && rollout.Status == metav1.ConditionTrue && s.Total > 0 && s.Available == s.Total {
		completed := current
		st.CompletedRevision = &completed
		return
	}
	if c := st.CompletedRevision; c != nil {
		if n, ok := p.Numbers[c.Name]; ok && n != c.Revision {
			st.CompletedRevision = &workv1alpha1.RevisionReference{Revision: n, Name: c.Name}
		}
	}
}

// rolloutStart sets status.rollout.startedAt: while the current revision is not the completed one, when the
// manager first saw it rolling out (kept from the previous status for the same revision), otherwise unset.
func rolloutStart(st, before *workv1alpha1.PlacementManifestWorkStatus, now time.Time) {
	if st.Rollout == nil {
		return
	}
	st.Rollout.StartedAt = nil
	cur, done := st.CurrentRevision, st.CompletedRevision
	if cur == nil || done != nil && done.Name == cur.Name {
		return
	}
	if b := before.CurrentRevision; b != nil && b.Name == cur.Name && before.Rollout != nil && before.Rollout.StartedAt != nil {
		st.Rollout.StartedAt = before.Rollout.StartedAt.DeepCopy()
		return
	}
	t := metav1.NewTime(now.UTC().Truncate(time.Second))
	st.Rollout.StartedAt = &t
}
