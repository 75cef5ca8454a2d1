// Package controllers holds the PlacementManifestWork reconciler.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/placementdecision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// conflictRetry is how soon a PlacementManifestWork blocked by a foreign ManifestWork tries again: the foreign
// work is outside the manager's cache, so no event says when it goes away.
const conflictRetry = time.Minute

// defaultDecisionSettleTimeout is how long a reconcile waits for a Placement's decisions to settle (see
// placementdecision.Unsettled) before acting on them anyway: OCM's placement controller rewrites them within
// seconds, so a longer wait means something else writes them, and their owner should see them applied.
const defaultDecisionSettleTimeout = 30 * time.Second

// statusConflictRetry is how soon a reconcile whose status update met a newer PlacementManifestWork runs again.
const statusConflictRetry = 100 * time.Millisecond

// PlacementManifestWorkReconciler writes one ManifestWork per decided cluster and rolls their status up.
type PlacementManifestWorkReconciler struct {
	client.Client
	// MaxConcurrentWrites bounds the ManifestWork writes one reconcile runs in parallel.
	MaxConcurrentWrites int
	// MaxManifestBytes bounds the manifests of one ManifestWork; planner.DefaultMaxManifestBytes when 0.
	MaxManifestBytes int
	// APIReader reads around the cache, to tell this manager's own works, not yet cached, from foreign ones.
	APIReader client.Reader
	// Now is the clock, for score expiry; time.Now when nil.
	Now func() time.Time
	// Recorder records events on PlacementManifestWorks; none when nil.
	Recorder events.EventRecorder
	// DecisionSettleTimeout bounds how long a Placement's decisions may stay in the middle of a rewrite before
	// the manager acts on them as they are; defaultDecisionSettleTimeout when 0.
	DecisionSettleTimeout time.Duration

	memory memory
}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks/status,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=placementmanifestworks/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=list;watch;create
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=addonplacementscores,verbs=list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one PlacementManifestWork's ManifestWorks and status in line with its spec and placement.
func (r *PlacementManifestWorkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	pmw := &workv1alpha1.PlacementManifestWork{}
	if err := r.Get(ctx, req.NamespacedName, pmw); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone, whether through finalize or with its finalizer removed by hand: nothing of it may stay in
			// memory or in the metrics.
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	owned, err := r.ownedWorks(ctx, pmw)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Planning from a cache that misses this manager's own last writes would only repeat them; their watch
	// events wake this PlacementManifestWork again, the requeue is a backstop.
	if wait := r.memory.pendingWrites(req.NamespacedName, owned, r.now()); wait > 0 {
		log.V(1).Info("Waiting for the cache to show the last ManifestWork writes")
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if !pmw.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, pmw, owned)
	}
	if !controllerutil.ContainsFinalizer(pmw, workv1alpha1.Finalizer) {
		patch := client.MergeFrom(pmw.DeepCopy())
		controllerutil.AddFinalizer(pmw, workv1alpha1.Finalizer)
		if err := r.Patch(ctx, pmw, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	r.memory.generationSeen(req.NamespacedName, pmw.Generation, r.now())

	obs := &observation{placementName: pmw.PlacementName(), workName: manifestwork.WorkName(manifestwork.Owner(pmw)),
		owned: owned, shares: ownedShares(owned)}
	if err := r.resolvePlacement(ctx, pmw, obs); err != nil {
		return ctrl.Result{}, err
	}
	if obs.undecided != "" {
		log.V(1).Info("Keeping the delivered ManifestWorks until the Placement is decided", "why", obs.undecided)
	}
	if wait, why := r.decisionsSettling(req.NamespacedName, obs); wait > 0 {
		// The Placement watch wakes this PlacementManifestWork when they settle; the requeue is a backstop.
		log.V(1).Info("Waiting for the Placement's decisions to settle", "why", why)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	var requeueAfter time.Duration
	obs.template, err = planner.ParseTemplate(pmw)
	if !errors.As(err, &obs.invalid) && err != nil {
		return ctrl.Result{}, err
	}
	if problems := pmw.Spec.DecodeProblems(); len(problems) > 0 {
		// Stored before the CRD refused such values: the decoded spec lacks those fields, so acting on it would
		// not be acting on the user's spec.
		obs.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidSpec, Message: fmt.Sprintf(
			"The stored spec has fields the manager cannot decode: %s; edit them to valid values (the CRD now refuses such values). The ManifestWorks already delivered are kept",
			strings.Join(problems, "; "))}
	}
	if obs.unavailable, err = r.unavailableClusters(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if obs.decided() && obs.invalid == nil {
		configs := health.ManifestConfigs(obs.template, pmw.Spec.ManifestWorkTemplate.ManifestConfigs)
		if obs.templateHash, err = manifestwork.TemplateHash(pmw, configs); err != nil {
			return ctrl.Result{}, err
		}
		obs.current = clusterHealth(pmw, obs)
		var failoverRecheck time.Duration
		if policy, ok := failoverPolicy(pmw); ok {
			obs.failoverEvaluated = true
			obs.failoverStates, obs.failedOver, failoverRecheck = failoverStates(policy, obs.clusters, obs.current, r.memory.failoverStates(req.NamespacedName, &pmw.Status), r.now())
			r.memory.setFailoverStates(req.NamespacedName, obs.failoverStates)
		}
		previous, trusted := r.memory.deliveredShares(req.NamespacedName)
		if !trusted {
			previous = obs.shares // verified against the status below
		}
		input, expiry, err := r.planInput(ctx, pmw, obs.clusters, previous)
		if err != nil {
			return ctrl.Result{}, err
		}
		if len(obs.failedOver) > 0 {
			input.FailedOver = obs.failedOver
		}
		requeueAfter = minPositive(expiry, failoverRecheck)
		plan, err := planner.Compute(pmw, obs.template, input)
		if err == nil && !trusted && len(previous) > 0 && !sharesMatchStatus(plan, previous, obs.clusters, obs.failedOver, pmw.Status.Splits) {
			log.Info("The split shares recorded on the ManifestWorks are not the ones the status reports; dividing afresh")
			previous, input.Previous = nil, nil
			plan, err = planner.Compute(pmw, obs.template, input)
		}
		obs.previous = previous
		switch {
		case errors.As(err, &obs.invalid):
		case err != nil:
			return ctrl.Result{}, err
		default:
			obs.plan = plan
			requeueAfter = minPositive(requeueAfter, r.sync(ctx, pmw, obs))
		}
	}
	if obs.invalid != nil {
		log.Info("Desired state is invalid; keeping the delivered ManifestWorks", "reason", obs.invalid.Reason, "message", obs.invalid.Message)
	}

	newStatus := computeStatus(pmw, obs)
	r.record(pmw, &pmw.Status, &newStatus)
	r.observeMetrics(req.NamespacedName, pmw.Generation, obs, newStatus)
	if !equality.Semantic.DeepEqual(pmw.Status, newStatus) {
		// A full update, guarded by the resourceVersion read above, so every count is written (a merge patch
		// would drop zeros) and a newer status is never overwritten: a conflict retries with fresh data.
		generation := pmw.Generation
		pmw.Status = newStatus
		if err := r.Status().Update(ctx, pmw); err != nil {
			if !apierrors.IsConflict(err) {
				return ctrl.Result{}, fmt.Errorf("updating status: %w", err)
			}
			// The cache had an older PlacementManifestWork (often this manager's own previous status update,
			// whose event the predicate drops). Not an error worth a log line or a backoff.
			if written, err := r.retryStatus(ctx, req.NamespacedName, generation, obs); err != nil || !written {
				return ctrl.Result{RequeueAfter: statusConflictRetry}, nil
			}
		}
	}
	if len(obs.writeErrors) > 0 {
		return ctrl.Result{}, fmt.Errorf("writing ManifestWorks: %w", errors.Join(obs.writeErrors...))
	}
	if len(obs.conflicts) > 0 {
		requeueAfter = minPositive(requeueAfter, conflictRetry)
	}
	return ctrl.Result{RequeueAfter: requeueAfter}, nil
}

// retryStatus writes the status once more after a conflict, computed on the PlacementManifestWork read from the
// API server, so what others wrote there (their own conditions) is kept. This reconcile's observation is still
// the newest: the reconcile that wrote the status it conflicted with ended before this one began. It gives up
// (false) when the spec changed meanwhile or the write conflicts again; the caller then requeues.
func (r *PlacementManifestWorkReconciler) retryStatus(ctx context.Context, key types.NamespacedName, generation int64, obs *observation) (bool, error) {
	if r.APIReader == nil {
		return false, nil
	}
	fresh := &workv1alpha1.PlacementManifestWork{}
	if err := r.APIReader.Get(ctx, key, fresh); err != nil {
		return false, fmt.Errorf("reading the PlacementManifestWork: %w", err)
	}
	if fresh.Generation != generation || !fresh.DeletionTimestamp.IsZero() {
		return false, nil
	}
	st := computeStatus(fresh, obs)
	if equality.Semantic.DeepEqual(fresh.Status, st) {
		return true, nil
	}
	fresh.Status = st
	if err := r.Status().Update(ctx, fresh); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, fmt.Errorf("updating status: %w", err)
	}
	return true, nil
}

func (r *PlacementManifestWorkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// observation is what one reconcile found and did; computeStatus turns it into status.
type observation struct {
	placementName  string
	placementFound bool
	// undecided, when not empty, says why the Placement's decisions are not its selection yet (see
	// placementdecision.Unknown): the delivered works are kept as they are, like when the Placement is missing.
	undecided string
	// workName is the name of this PlacementManifestWork's ManifestWork in every cluster namespace.
	workName string
	// clusters are the decided clusters, sorted.
	clusters []string
	// owned are this PlacementManifestWork's ManifestWorks by cluster, as listed before any write.
	owned map[string]*workv1.ManifestWork
	// shares are the split shares each owned work's annotation claims, decoded once per reconcile: the work
	// agent may edit them, so they judge only that cluster's own health.
	shares map[string]map[string]int32
	// previous are the shares this manager delivered before this reconcile, by cluster (see sharesMemory).
	previous map[string]map[string]int32
	// deleted are the clusters whose works this reconcile deleted.
	deleted []string
	// template are the template's manifests, decoded; nil when the template is invalid.
	template []template.Manifest
	// invalid is set when no valid desired state exists; nothing was written.
	invalid *planner.InvalidError
	plan    *planner.Plan
	// written are the ManifestWorks this reconcile created or updated, by cluster.
	written map[string]*workv1.ManifestWork
	// conflicts are clusters whose namespace holds a foreign ManifestWork with the name this one would use.
	conflicts   []string
	writeErrors []error
	// failedClusters are the clusters whose writes failed, sorted.
	failedClusters []string
	// unavailable says, per ManagedCluster that is not available, why.
	unavailable map[string]string
	// placement and decisions are the Placement and its PlacementDecisions, when it exists.
	placement *clusterv1beta1.Placement
	decisions []clusterv1beta1.PlacementDecision
	// current is the health of each cluster's work before this reconcile's writes.
	current map[string]health.ClusterResult
	// failoverEvaluated is set when failover applies and was evaluated in this reconcile.
	failoverEvaluated bool
	// failoverStates is each decided cluster's failover state, failedOver the clusters whose shares others carry.
	failoverStates map[string]failover.State
	failedOver     map[string]bool
	// rollout says which clusters the rollout strategy lets have the current template now.
	rollout rolloutPlan
	// templateHash is the hash of the current template (workv1alpha1.AnnotationTemplateHash); "" without a plan.
	templateHash string
	// upToDate are the decided clusters whose work carries the current template after this reconcile.
	upToDate map[string]bool
	// leaving is the number of clusters that left the decisions and whose works are kept for now.
	leaving int32
}

// decided reports whether the Placement exists and its decisions are its selection, so they may be acted on.
func (o *observation) decided() bool {
	return o.placementFound && o.undecided == ""
}

// work is the cluster's ManifestWork after this reconcile's writes, or nil.
func (o *observation) work(cluster string) *workv1.ManifestWork {
	if w, ok := o.written[cluster]; ok {
		return w
	}
	return o.owned[cluster]
}

// deliveredShares are the split shares this manager delivered to the cluster, after this reconcile's writes.
func (o *observation) deliveredShares(cluster string) map[string]int32 {
	if w, ok := o.written[cluster]; ok {
		return manifestwork.Shares(w)
	}
	return o.previous[cluster]
}

// workShares are the split shares the cluster's work carries after this reconcile's writes.
func (o *observation) workShares(cluster string) map[string]int32 {
	if w, ok := o.written[cluster]; ok {
		return manifestwork.Shares(w)
	}
	return o.shares[cluster]
}

// ownedWorks lists this PlacementManifestWork's ManifestWorks, keyed by cluster. Works that carry its label but
// not its UID belong to someone else and are left out.
func (r *PlacementManifestWorkReconciler) ownedWorks(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (map[string]*workv1.ManifestWork, error) {
	list := &workv1.ManifestWorkList{}
	// The works are only read (an update writes a copy), so the cache's objects are not copied: at thousands of
	// clusters the copies would dominate each reconcile.
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	}); err != nil {
		return nil, fmt.Errorf("listing ManifestWorks: %w", err)
	}
	owned := make(map[string]*workv1.ManifestWork, len(list.Items))
	for i := range list.Items {
		w := &list.Items[i]
		if manifestwork.IsOwnedBy(w, pmw) {
			owned[w.Namespace] = w
		}
	}
	return owned, nil
}

// finalize deletes every owned ManifestWork and releases the PlacementManifestWork once they are all gone, so
// the agents have removed the workloads from the clusters first.
func (r *PlacementManifestWorkReconciler) finalize(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, owned map[string]*workv1.ManifestWork) error {
	if !controllerutil.ContainsFinalizer(pmw, workv1alpha1.Finalizer) {
		return nil
	}
	if len(owned) > 0 {
		var pending []*workv1.ManifestWork
		for _, w := range owned {
			if w.DeletionTimestamp.IsZero() {
				pending = append(pending, w)
			}
		}
		var mu sync.Mutex
		expected := make(map[string]expectedWrite, len(pending))
		errs := r.parallel(ctx, len(pending), func(i int) error {
			if err := r.Delete(ctx, pending[i], client.Preconditions{UID: &pending[i].UID}); client.IgnoreNotFound(err) != nil {
				return err
			}
			mu.Lock()
			expected[pending[i].Namespace] = expectedWrite{deletedUID: pending[i].UID}
			mu.Unlock()
			return nil
		})
		r.memory.expectWrites(manifestwork.Owner(pmw), expected, r.now())
		if len(errs) > 0 {
			return fmt.Errorf("deleting ManifestWorks: %w", errors.Join(errs...))
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for ManifestWorks to be removed", "remaining", len(owned))
		return nil
	}
	patch := client.MergeFrom(pmw.DeepCopy())
	controllerutil.RemoveFinalizer(pmw, workv1alpha1.Finalizer)
	if err := r.Patch(ctx, pmw, patch); err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	r.forget(manifestwork.Owner(pmw))
	return nil
}

// forget drops everything the manager keeps of a PlacementManifestWork: its in-memory state and its metric
// series.
func (r *PlacementManifestWorkReconciler) forget(key types.NamespacedName) {
	metrics.Forget(key)
	r.memory.forget(key)
}

// resolvePlacement finds the Placement, creating it when the PlacementManifestWork names none, and collects
// its decided clusters.
func (r *PlacementManifestWorkReconciler) resolvePlacement(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) error {
	placement := &clusterv1beta1.Placement{}
	err := r.Get(ctx, types.NamespacedName{Namespace: pmw.Namespace, Name: obs.placementName}, placement)
	switch {
	case apierrors.IsNotFound(err) && pmw.Spec.PlacementRef == nil:
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
	if err := r.List(ctx, decisions, client.InNamespace(pmw.Namespace),
		client.MatchingLabels{clusterv1beta1.PlacementLabel: obs.placementName}); err != nil {
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

// planInput gathers what the planner needs beyond the spec: previous shares, and cluster labels or scores
// when a split weighs clusters by them. It also returns how soon the earliest used score expires.
func (r *PlacementManifestWorkReconciler) planInput(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, clusters []string, previous map[string]map[string]int32) (planner.Input, time.Duration, error) {
	in := planner.Input{Clusters: clusters, Previous: previous, MaxManifestBytes: r.MaxManifestBytes}
	var expiry time.Duration
	for _, s := range pmw.Spec.DistributionStrategy {
		if s.Split == nil {
			continue
		}
		switch {
		case s.Split.Type == workv1alpha1.SplitWeighted && in.ClusterLabels == nil && usesSelector(s.Split.Weights):
			labels, err := r.clusterLabels(ctx, clusters)
			if err != nil {
				return in, 0, err
			}
			in.ClusterLabels = labels
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

func (r *PlacementManifestWorkReconciler) clusterLabels(ctx context.Context, clusters []string) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(clusters))
	for _, c := range clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := r.Get(ctx, types.NamespacedName{Name: c}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("getting ManagedCluster %s: %w", c, err)
		}
		out[c] = mc.Labels
	}
	return out, nil
}

// scores reads one score of each cluster's AddOnPlacementScore, leaving out missing and expired ones, and
// returns how long until the earliest of the used ones expires.
func (r *PlacementManifestWorkReconciler) scores(ctx context.Context, src workv1alpha1.ScoreSource, clusters []string) (map[string]int32, time.Duration, error) {
	now := r.now()
	out := map[string]int32{}
	var next time.Duration
	for _, c := range clusters {
		score := &clusterv1alpha1.AddOnPlacementScore{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: c, Name: src.ResourceName}, score); err != nil {
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

// sync creates, updates and deletes ManifestWorks so each decided cluster has the planned one, writing only
// where something differs. The rollout strategy decides which clusters get a new template now; the works of
// clusters that left are kept until the joining clusters are available (make before break). It records what
// it wrote, conflicts and write errors on obs, and returns when time alone changes the outcome.
func (r *PlacementManifestWorkReconciler) sync(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) time.Duration {
	type op struct {
		cluster    string
		desired    *workv1.ManifestWork
		existing   *workv1.ManifestWork
		specChange bool
		delete     bool
	}
	now := r.now()
	desired := make(map[string]*workv1.ManifestWork, len(obs.clusters))
	desiredHash := make(map[string]string, len(obs.clusters))
	builder, err := manifestwork.NewBuilder(pmw, obs.plan.ManifestConfigs)
	if err != nil {
		obs.writeErrors = append(obs.writeErrors, err)
		return 0
	}
	for _, cluster := range obs.clusters {
		w, err := builder.Build(cluster, obs.plan.Manifests[cluster], obs.plan.Shares[cluster])
		if err != nil {
			obs.writeErrors = append(obs.writeErrors, err)
			continue
		}
		desired[cluster], desiredHash[cluster] = w, w.Annotations[workv1alpha1.AnnotationSpecHash]
	}
	obs.templateHash = builder.TemplateHash()
	obs.rollout = planRollout(pmw, obs, obs.current)
	recheck := obs.rollout.recheck

	var ops []op
	obs.upToDate = make(map[string]bool, len(obs.clusters))
	for _, cluster := range obs.clusters {
		d, existing := desired[cluster], obs.owned[cluster]
		if d == nil {
			continue
		}
		// The rollout strategy governs the template; split shares that change (a cluster joined, left or failed
		// over) reach a cluster that runs the current template at once, so failover is never held back by the
		// rollout's failure accounting.
		templateChange := !manifestwork.CarriesTemplate(existing, obs.templateHash)
		specChange := existing == nil || existing.Annotations[workv1alpha1.AnnotationSpecHash] != desiredHash[cluster]
		if !templateChange {
			obs.upToDate[cluster] = true
		}
		switch {
		case templateChange && obs.rollout.allowed != nil && !obs.rollout.allowed[cluster]:
			// Not this cluster's turn: it keeps what it has, and a joining cluster waits.
		case specChange || !manifestwork.UpToDate(existing, d):
			ops = append(ops, op{cluster: cluster, desired: d, existing: existing, specChange: templateChange})
		}
	}

	progressing := false
	for _, cluster := range obs.clusters {
		joining := obs.owned[cluster] == nil || obs.current[cluster].State == health.Progressing
		if joining && obs.current[cluster].State != health.Degraded {
			progressing = true
		}
	}
	decided := make(map[string]bool, len(obs.clusters))
	for _, c := range obs.clusters {
		decided[c] = true
	}
	timeout := moveTimeout(pmw)
	var leaving []string
	for cluster, w := range obs.owned {
		if !decided[cluster] && w.DeletionTimestamp.IsZero() {
			leaving = append(leaving, cluster)
		}
	}
	sort.Strings(leaving)
	// Kept in memory, not on the works: marking each leaving work would cost a write per cluster that leaves.
	since := r.memory.leaving(manifestwork.Owner(pmw), leaving, now)
	// Decisions that drop to nothing are as often a moment (a ManagedClusterSetBinding re-created, every
	// cluster briefly unreachable) as the user's intent, and a move to nowhere has nothing to make before the
	// break: the works wait out the move timeout, in case the decisions come back.
	waitForJoining := progressing || len(obs.clusters) == 0
	for _, cluster := range leaving {
		left := timeout - now.Sub(since[cluster])
		if timeout == 0 || !waitForJoining || left <= 0 {
			ops = append(ops, op{cluster: cluster, existing: obs.owned[cluster], delete: true})
			continue
		}
		obs.leaving++
		recheck = minPositive(recheck, left)
	}

	var mu sync.Mutex
	obs.written = make(map[string]*workv1.ManifestWork, len(ops))
	expected := make(map[string]expectedWrite, len(ops))
	expect := func(cluster string, e expectedWrite) {
		mu.Lock()
		expected[cluster] = e
		mu.Unlock()
	}
	failed := func(cluster string) {
		mu.Lock()
		obs.failedClusters = append(obs.failedClusters, cluster)
		mu.Unlock()
	}
	errs := r.parallel(ctx, len(ops), func(i int) error {
		o := ops[i]
		if o.delete {
			if err := r.Delete(ctx, o.existing, client.Preconditions{UID: &o.existing.UID}); client.IgnoreNotFound(err) != nil {
				metrics.WriteErrors.WithLabelValues("delete").Inc()
				failed(o.cluster)
				return fmt.Errorf("cluster %s: deleting: %w", o.cluster, err)
			}
			expect(o.cluster, expectedWrite{deletedUID: o.existing.UID})
			mu.Lock()
			obs.deleted = append(obs.deleted, o.cluster)
			mu.Unlock()
			return nil
		}
		var err error
		result := o.desired
		operation := "create"
		if o.specChange {
			result.Annotations[workv1alpha1.AnnotationUpdatedAt] = now.UTC().Format(time.RFC3339)
		}
		if o.existing == nil {
			err = r.Create(ctx, result)
			if apierrors.IsAlreadyExists(err) {
				var ours bool
				if result, ours, err = r.adopt(ctx, pmw, o.desired); !ours && err == nil {
					mu.Lock()
					obs.conflicts = append(obs.conflicts, o.cluster)
					mu.Unlock()
					return nil
				}
			}
		} else {
			operation = "update"
			result = manifestwork.Merge(o.existing, o.desired)
			err = r.Update(ctx, result)
		}
		if err != nil {
			metrics.WriteErrors.WithLabelValues(operation).Inc()
			failed(o.cluster)
			return fmt.Errorf("cluster %s: %w", o.cluster, err)
		}
		mu.Lock()
		switch {
		case o.existing == nil:
			expected[o.cluster] = expectedWrite{}
		case result.ResourceVersion != o.existing.ResourceVersion:
			// An update the API server found to change nothing keeps the version and sends no event to wait for.
			expected[o.cluster] = expectedWrite{staleVersion: o.existing.ResourceVersion}
		}
		obs.written[o.cluster] = result
		if decided[o.cluster] {
			obs.upToDate[o.cluster] = true
		}
		mu.Unlock()
		return nil
	})
	// The wait is counted from the end of the writes, not from the start of the reconcile: thousands of writes
	// take longer than the wait itself.
	r.memory.expectWrites(manifestwork.Owner(pmw), expected, r.now())
	r.memory.setDeliveredShares(manifestwork.Owner(pmw), delivered(obs))
	obs.writeErrors = append(obs.writeErrors, errs...)
	sort.Strings(obs.conflicts)
	sort.Strings(obs.failedClusters)
	if len(ops) > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("Wrote ManifestWorks", "writes", len(ops), "failed", len(errs), "conflicts", len(obs.conflicts))
	}
	return recheck
}

// adopt handles a create refused because the name is taken. The cache can lag behind this manager's own
// creates, so the work is read from the API server: when it is this PlacementManifestWork's, it is brought to
// the desired state (if it is not already) and returned as written; otherwise it belongs to someone else.
func (r *PlacementManifestWorkReconciler) adopt(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, desired *workv1.ManifestWork) (*workv1.ManifestWork, bool, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	cur := &workv1.ManifestWork{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(desired), cur); err != nil {
		return nil, false, fmt.Errorf("reading the existing ManifestWork: %w", err)
	}
	if !manifestwork.IsOwnedBy(cur, pmw) {
		return nil, false, nil
	}
	if cur.Annotations[workv1alpha1.AnnotationSpecHash] == desired.Annotations[workv1alpha1.AnnotationSpecHash] && manifestwork.UpToDate(cur, desired) {
		return cur, true, nil
	}
	updated := manifestwork.Merge(cur, desired)
	if err := r.Update(ctx, updated); err != nil {
		return nil, true, err
	}
	return updated, true, nil
}

func minPositive(a, b time.Duration) time.Duration {
	if b <= 0 {
		return a
	}
	if a <= 0 || b < a {
		return b
	}
	return a
}

// parallel runs fn for 0..n-1 with at most MaxConcurrentWrites at once and returns the errors.
func (r *PlacementManifestWorkReconciler) parallel(ctx context.Context, n int, fn func(i int) error) []error {
	limit := r.MaxConcurrentWrites
	if limit < 1 {
		limit = 1
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, limit)
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errs
}

// delivered is the record of the shares delivered after a reconcile's writes: what it wrote, and for the other
// works what was delivered before.
func delivered(obs *observation) map[string]map[string]int32 {
	out := make(map[string]map[string]int32, len(obs.previous)+len(obs.written))
	for c, v := range obs.previous {
		out[c] = v
	}
	for c, w := range obs.written {
		if shares := manifestwork.Shares(w); shares != nil {
			out[c] = shares
		} else {
			delete(out, c)
		}
	}
	for _, c := range obs.deleted {
		delete(out, c)
	}
	return out
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
