// Package controllers holds the PlacementManifestWork reconciler.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// conflictRetry is how soon a PlacementManifestWork blocked by a foreign ManifestWork tries again: the foreign
// work is outside the manager's cache, so no event says when it goes away.
const conflictRetry = time.Minute

// defaultDecisionSettleTimeout is how long a reconcile waits for a Placement's decisions to settle (see
// placementdecision.Unsettled) before acting on them anyway: OCM's placement controller rewrites them within
// seconds, so a longer wait means something else writes them, and their owner should see them applied.
const defaultDecisionSettleTimeout = 30 * time.Second

// failureStoreWait is how soon a reconcile that held a rollback until the status records the failure looks again.
const failureStoreWait = 500 * time.Millisecond

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
	// interpreterCache compiles ResourceInterpreters once per generation (shared with their status controller).
	interpreterCache *interpreter.Cache
	// webhooks calls the interpreters' webhooks, through a Session per reconcile; when nil, they call them
	// through the cache's caller.
	webhooks *interpreterwebhook.Caller
	// preview, when set, is what gather reads through instead of the cache (see Preview): a plain reader,
	// without the cache's field indexes. gather then creates no Placement and does not wait for decisions to
	// settle.
	preview client.Reader
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
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch;create;patch;delete

// Reconcile brings one PlacementManifestWork's ManifestWorks and status in line with its spec and placement.
func (r *PlacementManifestWorkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	log := ctrl.LoggerFrom(ctx)
	// Pacing is in the machine's time, not r.now(): it is about the CPU a reconcile takes.
	start := time.Now()
	if wait := r.memory.paced(req.NamespacedName, start); wait > 0 {
		// The events that woke it are taken up by the reconcile after the wait, which reads the cache as it is then.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	defer func() { r.memory.reconciled(req.NamespacedName, time.Since(start), err != nil, time.Now()) }()
	pmw := &workv1alpha1.PlacementManifestWork{}
	if err := r.Get(ctx, req.NamespacedName, pmw); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone, whether through finalize or with its finalizer removed by hand: nothing of it may stay in
			// memory or in the metrics.
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	cacheAdvancedAt := r.memory.works.lastAdvance()
	owned, err := r.ownedWorks(ctx, pmw)
	if err != nil {
		return ctrl.Result{}, err
	}
	// Planning from a cache that misses this manager's own last writes would only repeat them; their watch
	// events wake this PlacementManifestWork again, the requeue is a backstop.
	if wait := r.memory.pendingWrites(req.NamespacedName, owned, cacheAdvancedAt, r.now()); wait > 0 {
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

	obs, wait, err := r.gather(ctx, pmw, owned)
	if err != nil || wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	requeueAfter, err := r.desiredStateAndApply(ctx, pmw, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if obs.invalid != nil {
		log.Info("Desired state is invalid; keeping the delivered ManifestWorks", "reason", obs.invalid.Reason, "message", obs.invalid.Message)
	}
	stored, retry, err := r.writeStatus(ctx, pmw, obs)
	if err != nil || stored == nil {
		return ctrl.Result{RequeueAfter: retry}, err
	}
	r.recordStored(pmw, obs, stored)
	requeueAfter = minPositive(requeueAfter, aggregationRetry(obs, stored))
	if obs.revisionError != nil {
		return ctrl.Result{}, obs.revisionError
	}
	if len(obs.writeErrors) > 0 {
		return ctrl.Result{}, fmt.Errorf("writing ManifestWorks: %w", errors.Join(obs.writeErrors...))
	}
	if len(obs.conflicts) > 0 {
		requeueAfter = minPositive(requeueAfter, conflictRetry)
	}
	return ctrl.Result{RequeueAfter: requeueAfter}, nil
}

// aggregationRetry is how soon a reconcile whose interpreter webhook did not roll the status up asks it again;
// 0 for none. A webhook that did not roll the status up may answer later, and nothing else wakes this PMW when
// it does. The retry writes nothing while it keeps failing: the condition's message stays as it is. Only a
// reconcile that asked the webhook retries it (obs.aggregationFailed), not one that kept a False condition
// without asking: a run whose works were removed keeps its status as it was, and nothing is rolled up again.
func aggregationRetry(obs *observation, stored *statusChange) time.Duration {
	if obs.aggregationFailed && meta.IsStatusConditionFalse(stored.after.Conditions, workv1alpha1.ConditionStatusAggregated) {
		return interpreterRetry
	}
	return 0
}

// gather reads what the desired state depends on: the Placement and its decisions (creating the generated
// Placement), the template, the ManagedClusters that are not available. It returns how long to wait instead
// when the Placement's decisions are in the middle of a rewrite.
func (r *PlacementManifestWorkReconciler) gather(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, owned map[string]*workv1.ManifestWork) (*observation, time.Duration, error) {
	log := ctrl.LoggerFrom(ctx)
	key := manifestwork.Owner(pmw)
	obs := &observation{inputs: inputs{placementName: pmw.PlacementName(), workName: manifestwork.WorkName(manifestwork.Owner(pmw)),
		owned: owned, shares: ownedShares(owned)}}
	if err := r.resolvePlacement(ctx, pmw, obs); err != nil {
		return nil, 0, err
	}
	if obs.undecided != "" {
		log.V(1).Info("Keeping the delivered ManifestWorks until the Placement is decided", "why", obs.undecided)
	}
	// A preview goes on with unsettled decisions (and says so), as the manager does once it has waited.
	if wait, why := r.decisionsSettling(key, obs); wait > 0 && r.preview == nil {
		// The Placement watch wakes this PlacementManifestWork when they settle; the requeue is a backstop.
		log.V(1).Info("Waiting for the Placement's decisions to settle", "why", why)
		return nil, wait, nil
	}
	var err error
	if obs.kinds, err = r.interpreters(ctx); err != nil {
		return nil, 0, err
	}
	obs.template, err = planner.ParseTemplate(pmw)
	if !errors.As(err, &obs.invalid) && err != nil {
		return nil, 0, err
	}
	if problems := pmw.Spec.DecodeProblems(); len(problems) > 0 {
		// Stored before the CRD refused such values: the decoded spec lacks those fields, so acting on it would
		// not be acting on the user's spec.
		obs.invalid = &planner.InvalidError{Reason: workv1alpha1.ReasonInvalidSpec, Message: fmt.Sprintf(
			"The stored spec has fields the manager cannot decode: %s; edit them to valid values (the CRD now refuses such values). The ManifestWorks already delivered are kept",
			strings.Join(problems, "; "))}
	}
	if obs.invalid == nil && pmw.Spec.PropagateDependencies {
		// The dependencies travel as manifests after the template's, so health and status judge them too.
		deps, invalid, err := r.dependencies(ctx, pmw, obs.kinds, obs.template)
		if err != nil {
			return nil, 0, err
		}
		if obs.invalid = invalid; deps != nil {
			obs.template, obs.deps = append(obs.template, deps.own...), deps
		}
	}
	if obs.invalid == nil && len(pmw.Spec.Overrides) > 0 {
		obs.overrides, obs.invalid = r.overrides(pmw, obs.template, obs.kinds)
	}
	if obs.overrides.Len() == 0 {
		obs.deps = nil // every cluster carries the template's dependencies
	}
	if obs.unavailable, err = r.unavailableClusters(ctx); err != nil {
		return nil, 0, err
	}
	if obs.availableSince, obs.detached, err = r.leavingClusterFacts(ctx, leavingClusters(obs)); err != nil {
		return nil, 0, err
	}
	if obs.decided() && obs.invalid == nil {
		if obs.revisionData, err = revision.Data(pmw); err != nil {
			return nil, 0, err
		}
		obs.revisionName = revision.Name(pmw.Name, obs.revisionData)
		if obs.planInput, obs.scoresExpire, err = r.planInput(ctx, pmw, obs.clusters); err != nil {
			return nil, 0, err
		}
		obs.planInput.Overrides = obs.overrides
		// A preview writes no revision, so it does not read them (its user may not be allowed to).
		if r.preview == nil {
			if obs.revisions, err = r.ownedRevisions(ctx, pmw); err != nil {
				return nil, 0, err
			}
			obs.revisionsKnown = true
		}

		if obs.completed, err = r.completedTarget(ctx, pmw, obs); err != nil {
			return nil, 0, err
		}
	}
	return obs, 0, nil
}

// desiredStateAndApply decides the desired state and the writes it asks for (decide), and runs them: the
// ControllerRevisions (applyRevisions) beside the works (apply), not before them, as nothing waits on them
// but the status, written after both. It returns when time alone changes the outcome.
func (r *PlacementManifestWorkReconciler) desiredStateAndApply(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) (time.Duration, error) {
	wp, recheck, err := r.decide(ctx, pmw, obs)
	if err != nil || wp == nil {
		return recheck, err
	}
	// applyRevisions reads only pmw and the plan, which apply does not change, and touches nothing of obs.
	var revisionDone <-chan error
	if p := obs.revisionPlan; p != nil {
		revisionDone = parallel.Go(ctx, func() error { return r.applyRevisions(ctx, pmw, p) })
	}
	r.apply(ctx, pmw, obs, wp.ops)
	if revisionDone != nil {
		obs.revisionError = <-revisionDone
	}
	return minPositive(recheck, wp.recheck), nil
}

// decide decides the desired state when the Placement is decided and the spec usable, from the inputs and what
// the manager remembers, and the writes it asks for (planWrites); nil when there are none to plan (undecided,
// invalid). It writes nothing to the hub, only to memory, so Preview runs it too. It returns when time alone
// changes the desired state.
func (r *PlacementManifestWorkReconciler) decide(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) (*writePlan, time.Duration, error) {
	if !obs.decided() || obs.invalid != nil {
		return nil, 0, nil
	}
	key := manifestwork.Owner(pmw)
	mem := remembered{failover: r.memory.failoverStates(key, &pmw.Status)}
	mem.delivered, mem.deliveredKnown = r.memory.deliveredShares(key)
	now := r.now()
	d, invalid, recheck, err := desiredState(pmw, &obs.inputs, mem, now)
	if err != nil {
		return nil, 0, err
	}
	obs.desired = d
	if d.sharesDropped {
		ctrl.LoggerFrom(ctx).Info("The split shares recorded on the ManifestWorks are not the ones the status reports; dividing afresh")
	}
	if invalid != nil {
		r.rememberFailover(key, &obs.desired)
		obs.invalid = invalid
		return nil, recheck, nil
	}
	// The revisions follow the spec, also while a failed revision is rolled back.
	var revisionPlan *revision.Plan
	if obs.revisionsKnown {
		revisionPlan = planRevisions(pmw, &obs.inputs, &obs.desired)
	}
	current := currentRevision(pmw, revisionPlan, obs.revisionName)
	obs.currentRevision, obs.now = current, now
	obs.onCompleted = pmw.Status.CompletedRevision != nil && pmw.Status.CompletedRevision.Name == obs.revisionName
	obs.approvals = recordApprovals(pmw, current.Revision, now)
	// Kept in memory, not on the works: marking each leaving work would cost a write per cluster that leaves.
	since := r.memory.leaving(key, leavingClusters(obs), now)
	wp := planWrites(pmw, obs, since, now)
	obs.rollout, obs.upToDate = wp.rollout, wp.upToDate
	// The record is kept in memory too: a reconcile woken by a work before the cache shows the status that
	// recorded a failure must not forget it (and roll the failed revision out again).
	step := judgeFailure(pmw, failureInput{current: current, record: r.memory.failureRecord(key, &pmw.Status),
		breached: wp.rollout.maxFailures, failedClusters: failedClusters(obs.clusters, &obs.desired), canRollBack: obs.completed != nil && pmw.Spec.FailurePolicy == workv1alpha1.FailurePolicyRollback})
	r.memory.setFailureRecord(key, failureRecord{failed: step.failed, retried: step.retried})
	switch {
	case step.rollingBack:
		// The desired state of the completed revision's template, paced by the rollout strategy: the clusters
		// that carry the failed revision go back, the others already carry the completed one.
		rb := obs.completed
		obs.template, obs.overrides, obs.deps, obs.planInput, obs.scoresExpire = rb.template, rb.overrides, rb.deps, rb.planInput, rb.scoresExpire
		d, invalid, recheck, err = desiredState(rb.pmw, &obs.inputs, mem, now)
		if err != nil {
			return nil, 0, err
		}
		// The works planned are the completed revision's now.
		d.currentRevision, d.approvals, d.now, d.onCompleted = obs.currentRevision, obs.approvals, now, true
		obs.desired = d
		if invalid != nil {
			r.rememberFailover(key, &obs.desired)
			obs.invalid = invalid
			return nil, recheck, nil
		}
		wp = planWrites(rb.pmw, obs, since, now)
		if !failureStored(pmw, step.failed) {
			// The failure must be on the hub before the first write that hides it (the failed cluster back on
			// the completed revision): a manager that dies in between would leave its successor no trace of it,
			// and the successor would roll the failed revision out again. The status write wakes nothing (the
			// predicate drops it), so the requeue brings the next reconcile.
			wp.ops = heldOps(wp.ops)
			recheck = minPositive(recheck, failureStoreWait)
		}
	case step.hold:
		wp.ops = heldOps(wp.ops)
	case obs.completed != nil:
		wp.ops = append(wp.ops, joinOnCompleted(obs, &wp, mem, now)...)
	}
	if obs.sharesDropped {
		// Divided afresh: the record after this reconcile's writes must hold every decided cluster's share, not
		// only those written. The works that already carry their planned shares delivered them before it.
		obs.previous = wp.carried
	}
	r.rememberFailover(key, &obs.desired)
	wp.rollout.failure = step
	obs.revisionPlan = revisionPlan
	obs.rollout, obs.upToDate, obs.leaving = wp.rollout, wp.upToDate, wp.leaving
	obs.writeErrors = append(obs.writeErrors, wp.buildErrors...)
	return &wp, recheck, nil
}

// rememberFailover keeps the failover states the desired state evaluated.
func (r *PlacementManifestWorkReconciler) rememberFailover(key types.NamespacedName, d *desired) {
	if d.failoverEvaluated {
		r.memory.setFailoverStates(key, d.failoverStates)
	}
}

// statusChange is a status this reconcile stored, with the one it replaced on the API server.
type statusChange struct {
	before, after workv1alpha1.PlacementManifestWorkStatus
}

// writeStatus stores the status computed from the observation, once, guarded by the resourceVersion read (a
// full update, so every count is written: a merge patch would drop zeros). It returns the change it stored,
// nil when nothing was stored: the write failed, or it conflicted with a newer PlacementManifestWork and the
// caller retries after the returned time. An unchanged status counts as stored.
func (r *PlacementManifestWorkReconciler) writeStatus(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation) (*statusChange, time.Duration, error) {
	change := &statusChange{before: pmw.Status, after: computeStatus(pmw, obs)}
	if equality.Semantic.DeepEqual(change.before, change.after) {
		return change, 0, nil
	}
	generation := pmw.Generation
	pmw.Status = change.after
	err := r.Status().Update(ctx, pmw)
	if err == nil {
		return change, 0, nil
	}
	pmw.Status = change.before
	if !apierrors.IsConflict(err) {
		return nil, 0, fmt.Errorf("updating status: %w", err)
	}
	// The cache had an older PlacementManifestWork (often this manager's own previous status update, whose
	// event the predicate drops). Not an error worth a log line or a backoff.
	change, err = r.retryStatus(ctx, manifestwork.Owner(pmw), generation, obs)
	if err != nil || change == nil {
		return nil, statusConflictRetry, nil
	}
	return change, 0, nil
}

// retryStatus writes the status once more after a conflict, computed on the PlacementManifestWork read from the
// API server, so what others wrote there (their own conditions) is kept. This reconcile's observation is still
// the newest: the reconcile that wrote the status it conflicted with ended before this one began. It gives up
// (nil) when the spec changed meanwhile or the write conflicts again; the caller then requeues.
func (r *PlacementManifestWorkReconciler) retryStatus(ctx context.Context, key types.NamespacedName, generation int64, obs *observation) (*statusChange, error) {
	if r.APIReader == nil {
		return nil, nil
	}
	fresh := &workv1alpha1.PlacementManifestWork{}
	if err := r.APIReader.Get(ctx, key, fresh); err != nil {
		return nil, fmt.Errorf("reading the PlacementManifestWork: %w", err)
	}
	if fresh.Generation != generation || !fresh.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	change := &statusChange{before: fresh.Status, after: computeStatus(fresh, obs)}
	if equality.Semantic.DeepEqual(change.before, change.after) {
		return change, nil
	}
	fresh.Status = change.after
	if err := r.Status().Update(ctx, fresh); err != nil {
		if apierrors.IsConflict(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("updating status: %w", err)
	}
	return change, nil
}

// recordStored emits the events of a stored status change and updates the metrics from the stored status.
// Only a stored status is reported: an event or gauge for a status the API server refused would be reported
// again, or contradicted, by the reconcile that stores it.
func (r *PlacementManifestWorkReconciler) recordStored(pmw *workv1alpha1.PlacementManifestWork, obs *observation, change *statusChange) {
	r.record(pmw, &change.before, &change.after)
	observeRollouts(manifestwork.Owner(pmw), change, r.now())
	r.observeMetrics(manifestwork.Owner(pmw), pmw.Generation, obs, change.after)
}

func (r *PlacementManifestWorkReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// observation is what one reconcile read, decided and did, in the order of its steps: computeStatus turns it
// into status. Each part is filled by one step only.
type observation struct {
	inputs
	desired
	outcome
	// aggregationFailed is set by computeStatus when it rolled the manifests' status up and an interpreter
	// webhook did not (StatusAggregated False): only then is the webhook asked again (aggregationRetry).
	aggregationFailed bool
}

// inputs are what gather read.
type inputs struct {
	placementName  string
	placementFound bool
	// undecided, when not empty, says why the Placement's decisions are not its selection yet (see
	// placementdecision.Unknown): the delivered works are kept as they are, like when the Placement is missing.
	undecided string
	// placement and decisions are the Placement and its PlacementDecisions, when it exists.
	placement *clusterv1beta1.Placement
	decisions []clusterv1beta1.PlacementDecision
	// clusters are the decided clusters, sorted.
	clusters []string
	// workName is the name of this PlacementManifestWork's ManifestWork in every cluster namespace.
	workName string
	// owned are this PlacementManifestWork's ManifestWorks by cluster, as listed before any write.
	owned map[string]*workv1.ManifestWork
	// shares are the split shares each owned work's annotation claims, decoded once per reconcile: the work
	// agent may edit them, so they judge only that cluster's own health.
	shares map[string]map[string]int32
	// template are the template's manifests, decoded; nil when the template is invalid.
	template []template.Manifest
	// invalid is set when no valid desired state exists (the template or spec cannot be used, or, set by the
	// desired state, a split field); nothing is written.
	invalid *planner.InvalidError
	// unavailable says, per ManagedCluster that is not available, why.
	unavailable map[string]string
	// availableSince says, for each cluster that left the decisions and whose ManagedCluster is available, since
	// when (its Available condition's last transition): a cluster back from being unreachable keeps its work a
	// while, for the Placement to decide it again (planWrites).
	availableSince map[string]time.Time
	// detached are the clusters that left the decisions whose ManagedCluster is gone or being deleted: never held
	// for being away.
	detached map[string]bool
	// planInput are the cluster facts a split weighs clusters by (labels, scores), read only when the desired
	// state is computed; scoresExpire is when the earliest score used expires.
	planInput    planner.Input
	scoresExpire time.Duration
	// kinds interpret the manifests' kinds: the built-in ones and the users' ResourceInterpreters.
	kinds *health.Interpreters
	// overrides are spec.overrides, compiled once per generation and checked against the template; nil
	// without overrides. The cluster facts they read are in planInput.ClusterFacts.
	overrides *override.Set
	// deps finds the dependencies of the manifests as a cluster's overrides leave them, when the template's
	// dependencies are carried along (spec.propagateDependencies; template ends with them) and overrides
	// exist; nil otherwise: every cluster carries the template's.
	deps *dependencyFinder
	// revisionData and revisionName are the spec's template as a revision's data (revision.Data) and its
	// ControllerRevision's name, computed once per reconcile when the desired state is computed.
	revisionData []byte
	revisionName string
	// revisions are the PlacementManifestWork's ControllerRevisions, read (revisionsKnown) when the desired
	// state is computed, except by a preview.
	revisions      []*appsv1.ControllerRevision
	revisionsKnown bool
	// completed is the last completed revision's template, read while the current revision is another and a
	// rollback or a joining cluster may need it (see completedTarget); nil otherwise or when it cannot be used.
	completed *completedTarget
}

// desired is the desired state decided from the inputs.
type desired struct {
	// builder builds the works of the current template; templateHash is its hash
	// (workv1alpha1.AnnotationTemplateHash), "" without a plan, and templateHashes the hashes of the clusters
	// an override selects, which differ per cluster (see templateHashes and clusterTemplateHash).
	builder        *manifestwork.Builder
	templateHash   string
	templateHashes map[string]string
	// inputs are the current template's manifest inputs for health, per set of shares, judged with the
	// manifestConfigs of inputsFor, the PlacementManifestWork the desired state was computed for.
	inputs    *manifestInputs
	inputsFor *workv1alpha1.PlacementManifestWork
	// current is the health of each cluster's work before this reconcile's writes; currentDeps the
	// dependencies of those that carry the current template with dependencies of their own.
	current     map[string]health.ClusterResult
	currentDeps map[string]clusterDependencies
	// failoverEvaluated is set when failover applies and was evaluated in this reconcile.
	failoverEvaluated bool
	// failoverStates is each decided cluster's failover state, failedOver the clusters whose shares others carry.
	failoverStates map[string]failover.State
	failedOver     map[string]bool
	// previous are the shares this manager delivered before this reconcile, by cluster (see memory). When the
	// works' annotations were dropped (sharesDropped), the planner divides without them, and decide then sets
	// previous to the shares of the decided clusters whose works already carry their planned work
	// (writePlan.carried), so the record after the writes (delivered) and status.splits cover every cluster.
	previous map[string]map[string]int32
	plan     *planner.Plan
	// rollout says which clusters the rollout strategy lets have the current template now.
	rollout rolloutPlan
	// upToDate are the decided clusters whose work carries the current template after this reconcile.
	upToDate map[string]bool
	// leaving is the number of clusters that left the decisions and whose works are kept for now.
	leaving int32
	// sharesDropped is set when the works' shares annotations, read after a restart, did not match the status.
	sharesDropped bool
	// revisionPlan is what the ControllerRevisions need for the current template (see planRevisions); nil
	// when the revisions were not read.
	revisionPlan *revision.Plan
	// currentRevision is the current spec's revision (its number is 0 when the revisions are not known).
	currentRevision workv1alpha1.RevisionReference
	// onCompleted is set when the works planned carry the last completed revision (status.completedRevision):
	// the spec's template is that revision, or a rollback returns to it. Nothing new is rolled out then.
	onCompleted bool
	// approvals are status.approvals after this reconcile (recordApprovals).
	approvals []workv1alpha1.RolloutApproval
	// now is when the desired state was decided.
	now time.Time
}

// outcome is what apply's writes did.
type outcome struct {
	// written are the ManifestWorks this reconcile created or updated, by cluster.
	written map[string]*workv1.ManifestWork
	// deleted are the clusters whose works this reconcile deleted.
	deleted []string
	// conflicts are clusters whose namespace holds a foreign ManifestWork with the name this one would use.
	conflicts   []string
	writeErrors []error
	// revisionError is why writing the ControllerRevisions failed; status.currentRevision then stays as it was.
	revisionError error
	// failedClusters are the clusters whose writes failed, sorted.
	failedClusters []string
}

// decided reports whether the Placement exists and its decisions are its selection, so they may be acted on.
func (in *inputs) decided() bool {
	return in.placementFound && in.undecided == ""
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
				metrics.WriteErrors.WithLabelValues("delete").Inc()
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
	// NotFound: the PlacementManifestWork is already gone (another replica removed the finalizer first).
	if err := r.Patch(ctx, pmw, patch); client.IgnoreNotFound(err) != nil {
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

func minPositive(a, b time.Duration) time.Duration {
	if b <= 0 {
		return a
	}
	if a <= 0 || b < a {
		return b
	}
	return a
}
