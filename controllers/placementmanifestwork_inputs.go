package controllers

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/placementdecision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// ownedWorks lists this PlacementManifestWork's ManifestWorks, keyed by cluster. Works that carry its label but
// not its UID belong to someone else and are left out.
func (r *PlacementManifestWorkReconciler) ownedWorks(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	ownership := manifestwork.OwnershipOf(pmw)
	// The works are only read (an update writes a copy), so the cache's objects are not copied: at thousands of
	// clusters the copies would dominate each reconcile.
	if err := r.listByLabel(ctx, list, workv1alpha1.LabelPlacementManifestWork, ownership.LabelValue(), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ManifestWorks: %w", err)
	}
	owned := make(map[string]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		w := &list.Items[i]
		if ownership.Owns(w) {
			owned[w.Namespace] = w
		}
	}
	return owned, nil
}

// reader is what gather reads through: the manager's cache, or a preview's reader.
func (r *PlacementManifestWorkReconciler) reader() client.Reader {
	if r.preview != nil {
		return r.preview
	}
	return r.Client
}

// listByLabel lists the objects whose label has value through the field index that mirrors the label
// (labelindex): the cache matches a label selector against every object of the type, an index looks them up. A
// preview's plain reader has no index and sends the label selector to the API server.
func (r *PlacementManifestWorkReconciler) listByLabel(ctx context.Context, list client.ObjectList, label, value string, opts ...client.ListOption) error {
	if r.preview != nil {
		return r.reader().List(ctx, list, append(opts, client.MatchingLabels{label: value})...)
	}
	return labelindex.List(ctx, r.reader(), list, label, value, opts...)
}

// resolvePlacement finds the Placement, creating it when the PlacementManifestWork names none, and collects
// its decided clusters.
func (r *PlacementManifestWorkReconciler) resolvePlacement(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) error {
	placement := &clusterv1beta1.Placement{}
	err := r.reader().Get(ctx, types.NamespacedName{Namespace: pmw.Namespace, Name: obs.placementName}, placement)
	switch {
	case apierrors.IsNotFound(err) && pmw.Spec.PlacementRef == nil && r.preview == nil: // a preview creates nothing
		if placement, err = r.createPlacement(ctx, pmw); err != nil {
			return err
		}
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("getting Placement %s: %w", obs.placementName, err)
	}
	obs.placementFound = true
	obs.placement = placement

	decisions := &clusterv1beta1.PlacementDecisionList{}
	if err := r.listByLabel(ctx, decisions, clusterv1beta1.PlacementLabel, obs.placementName, client.InNamespace(pmw.Namespace)); err != nil {
		return fmt.Errorf("listing PlacementDecisions: %w", err)
	}
	obs.decisions = decisions.Items
	obs.undecided = placementdecision.Unknown(placement, decisions.Items)
	if obs.undecided == "" {
		obs.clusters = DecidedClusters(decisions.Items)
	}
	return nil
}

// decisionsSettling returns how long to wait at most for the Placement's decisions to settle, and why, or zero
// when they are settled or have been unsettled for DecisionSettleTimeout.
func (r *PlacementManifestWorkReconciler) decisionsSettling(key types.NamespacedName, obs *observation) (time.Duration, string) {
	why := ""
	if obs.decided() {
		why = placementdecision.Unsettled(obs.placement, obs.decisions)
	}
	if why == "" {
		r.memory.settled(key)
		return 0, ""
	}
	timeout := r.DecisionSettleTimeout
	if timeout <= 0 {
		timeout = defaultDecisionSettleTimeout
	}
	now := r.now()
	left := timeout - now.Sub(r.memory.unsettled(key, now))
	if left <= 0 {
		return 0, why
	}
	return left, why
}

// createPlacement creates the empty Placement a PlacementManifestWork without placementRef uses. It is owned by
// the PlacementManifestWork, so it goes with it, and it is never updated, so users may edit it.
func (r *PlacementManifestWorkReconciler) createPlacement(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (*clusterv1beta1.Placement, error) {
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: pmw.Name, Namespace: pmw.Namespace},
	}
	if err := controllerutil.SetControllerReference(pmw, placement, r.Scheme()); err != nil {
		return nil, fmt.Errorf("owning Placement: %w", err)
	}
	if err := r.Create(ctx, placement); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating Placement %s: %w", pmw.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created Placement", "placement", pmw.Name)
	return placement, nil
}

// DecidedClusters is the sorted union of the clusters of every decision.
func DecidedClusters(decisions []clusterv1beta1.PlacementDecision) []string {
	seen := map[string]struct{}{}
	var out []string
	for i := range decisions {
		for _, d := range decisions[i].Status.Decisions {
			if _, ok := seen[d.ClusterName]; ok || d.ClusterName == "" {
				continue
			}
			seen[d.ClusterName] = struct{}{}
			out = append(out, d.ClusterName)
		}
	}
	sort.Strings(out)
	return out
}

// planInput gathers what the planner needs beyond the spec and the previous shares: cluster labels or scores
// when a split weighs clusters by them, and the labels and claims of the clusters when overrides may read them.
// It also returns how soon the earliest used score expires.
func (r *PlacementManifestWorkReconciler) planInput(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, clusters []string) (planner.Input, time.Duration, error) {
	in := planner.Input{Clusters: clusters, MaxManifestBytes: r.MaxManifestBytes}
	if readsClusterFacts(pmw) {
		facts, err := r.clusterFacts(ctx, clusters)
		if err != nil {
			return in, 0, err
		}
		in.ClusterFacts = facts
	}
	var expiry time.Duration
	for _, s := range pmw.Spec.DistributionStrategy {
		if s.Split == nil {
			continue
		}
		switch {
		case s.Split.Type == workv1alpha1.SplitWeighted && in.ClusterLabels == nil && usesSelector(s.Split.Weights):
			in.ClusterLabels = make(map[string]map[string]string, len(in.ClusterFacts))
			for c, f := range in.ClusterFacts {
				in.ClusterLabels[c] = f.Labels
			}
		case s.Split.Type == workv1alpha1.SplitScore && s.Split.Score != nil:
			if in.Scores == nil {
				in.Scores = map[workv1alpha1.ScoreSource]map[string]int32{}
			}
			if _, done := in.Scores[*s.Split.Score]; done {
				continue
			}
			scores, next, err := r.scores(ctx, *s.Split.Score, clusters)
			if err != nil {
				return in, 0, err
			}
			in.Scores[*s.Split.Score] = scores
			if next > 0 && (expiry == 0 || next < expiry) {
				expiry = next
			}
		}
	}
	return in, expiry, nil
}

func usesSelector(weights []workv1alpha1.ClusterWeight) bool {
	for _, w := range weights {
		if w.ClusterSelector != nil {
			return true
		}
	}
	return false
}

// readsClusterFacts reports whether the PlacementManifestWork reads its clusters' labels or claims: a Weighted
// split with a clusterSelector, or overrides (which select by them and whose expressions read them). The
// IndexClusterLabels index lists these, so a ManagedCluster's label or claim change reaches them.
func readsClusterFacts(pmw *workv1alpha1.PlacementManifestWork) bool {
	if len(pmw.Spec.Overrides) > 0 {
		return true
	}
	for _, s := range pmw.Spec.DistributionStrategy {
		if s.Split != nil && s.Split.Type == workv1alpha1.SplitWeighted && usesSelector(s.Split.Weights) {
			return true
		}
	}
	return false
}

// clusterFacts reads the labels and ClusterClaims of the clusters' ManagedClusters (from the cache, which keeps
// both); a cluster without a ManagedCluster has none.
func (r *PlacementManifestWorkReconciler) clusterFacts(ctx context.Context, clusters []string) (map[string]override.Cluster, error) {
	out := make(map[string]override.Cluster, len(clusters))
	for _, c := range clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := r.reader().Get(ctx, types.NamespacedName{Name: c}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("getting ManagedCluster %s: %w", c, err)
		}
		f := override.Cluster{Name: c, Labels: mc.Labels}
		if len(mc.Status.ClusterClaims) > 0 {
			f.Claims = claims(mc)
		}
		out[c] = f
	}
	return out, nil
}

// overrides compiles spec.overrides once per generation (memory) and checks them against the template: what
// either refuses only the user can fix (InvalidOverride), and nothing is written until they do.
func (r *PlacementManifestWorkReconciler) overrides(pmw *workv1alpha1.PlacementManifestWork, manifests []template.Manifest, kinds *health.Interpreters) (*override.Set, *planner.InvalidError) {
	set, err := r.memory.compiledOverrides(manifestwork.Owner(pmw), pmw.Generation, func() (*override.Set, error) {
		return override.Compile(pmw.Spec.Overrides)
	})
	if err == nil {
		if problems := set.CheckTemplate(manifests, planner.TemplateSplitFields(pmw, manifests, kinds)); len(problems) > 0 {
			err = problems
		}
	}
	if err != nil {
		return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidOverride, Message: fmt.Sprintf(
			"spec.overrides cannot be used: %v; fix the overrides. Nothing is written until then, and the ManifestWorks already delivered are kept", err)}
	}
	return set, nil
}

// scores reads one score of each cluster's AddOnPlacementScore, leaving out missing and expired ones, and
// returns how long until the earliest of the used ones expires.
func (r *PlacementManifestWorkReconciler) scores(ctx context.Context, src workv1alpha1.ScoreSource, clusters []string) (map[string]int32, time.Duration, error) {
	now := r.now()
	out := map[string]int32{}
	var next time.Duration
	for _, c := range clusters {
		score := &clusterv1alpha1.AddOnPlacementScore{}
		if err := r.reader().Get(ctx, types.NamespacedName{Namespace: c, Name: src.ResourceName}, score); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, 0, fmt.Errorf("getting AddOnPlacementScore %s/%s: %w", c, src.ResourceName, err)
		}
		if v := score.Status.ValidUntil; v != nil {
			left := v.Sub(now)
			if left <= 0 {
				continue
			}
			if next == 0 || left < next {
				next = left
			}
		}
		for _, item := range score.Status.Scores {
			if item.Name == src.ScoreName {
				out[c] = item.Value
				break
			}
		}
	}
	return out, next, nil
}

// ownedShares decodes the shares annotation of each owned work.
func ownedShares(owned map[string]*workv1.ManifestWork) map[string]map[string]int32 {
	out := make(map[string]map[string]int32, len(owned))
	for cluster, w := range owned {
		if shares := manifestwork.Shares(w); shares != nil {
			out[cluster] = shares
		}
	}
	return out
}

// unavailableClusters says, for every ManagedCluster whose Available condition is False, Unknown or not yet
// reported, why it is not available. A decided cluster without a ManagedCluster is not listed: OCM only
// decides clusters that exist, so its absence is a deletion in progress, reported through its work instead.
func (r *PlacementManifestWorkReconciler) unavailableClusters(ctx context.Context) (map[string]string, error) {
	list := &clusterv1.ManagedClusterList{}
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if r.preview == nil { // a preview's plain reader has no field index: it lists them all, filtered below
		opts = append(opts, client.MatchingFields{IndexUnavailable: "true"})
	}
	if err := r.reader().List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing unavailable ManagedClusters: %w", err)
	}
	out := map[string]string{}
	for i := range list.Items {
		if why := health.ManagedClusterUnavailable(&list.Items[i]); why != "" {
			out[list.Items[i].Name] = why
		}
	}
	return out, nil
}

// leavingClusterFacts reads the ManagedClusters of the given clusters (those that left the decisions): since
// when each available one has been available, and which are detached (the ManagedCluster is gone or being
// deleted), which is the user's intent, not a moment.
func (r *PlacementManifestWorkReconciler) leavingClusterFacts(ctx context.Context, clusters []string) (availableSince map[string]time.Time, detached map[string]bool, err error) {
	availableSince, detached = map[string]time.Time{}, map[string]bool{}
	for _, cluster := range clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := r.reader().Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				detached[cluster] = true
				continue
			}
			return nil, nil, fmt.Errorf("reading ManagedCluster %s: %w", cluster, err)
		}
		if !mc.DeletionTimestamp.IsZero() {
			detached[cluster] = true
			continue
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c != nil && c.Status == metav1.ConditionTrue {
			availableSince[cluster] = c.LastTransitionTime.Time
		}
	}
	return availableSince, detached, nil
}
