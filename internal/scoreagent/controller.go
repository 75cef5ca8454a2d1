package scoreagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// statusConflictRetry is how soon a reconcile whose status write met a newer generator runs again.
const statusConflictRetry = 100 * time.Millisecond

// Reconciler measures the AddOnPlacementScoreGenerators addressed to one addon in one cluster namespace of
// the hub and writes their AddOnPlacementScores and status.
type Reconciler struct {
	// Client reads generators from the hub's cache (the cluster namespace only) and writes to the hub.
	Client client.Client
	// APIReader reads the AddOnPlacementScores from the hub around the cache, so that a score the agent
	// has just written is never missed.
	APIReader client.Reader
	// Registry holds the plugins that measure.
	Registry *scoreagent.Registry
	// ClusterName is the managed cluster's name: the hub namespace the agent reads and writes.
	ClusterName string
	// AddonName is the addon whose generators the agent measures (spec.addOnPlacementSelector.name).
	AddonName string
	// MaxConcurrentProbes bounds the scores of one generator measured at once (and so how long a measurement
	// may take, which validation checks against validFor); 4 when 0.
	MaxConcurrentProbes int
	// Now is the clock of measurements, schedules and validUntil; time.Now when nil.
	Now func() time.Time
	// Recorder records events on the generators; none when nil.
	Recorder events.EventRecorder

	memory memory
}

// Reconcile validates one generator, measures it when due, writes its AddOnPlacementScore and its status,
// and requeues for the next measurement.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
	if err := r.Client.Get(ctx, req.NamespacedName, gen); err != nil {
		if apierrors.IsNotFound(err) {
			r.memory.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.addressed(gen) || !gen.DeletionTimestamp.IsZero() {
		// Its AddOnPlacementScore is left to expire (or to go with the generator, which owns it).
		r.memory.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}

	// gather
	score, err := r.score(ctx, gen)
	if err != nil {
		return ctrl.Result{}, err
	}
	last := r.memory.lastOf(gen)

	// desired: what is asked for, whether it may be measured, and whether it is time to
	s := settingsOf(gen)
	reqs, fromOtherPlugin := requestsOf(gen)
	v := validate(r.Registry, reqs, fromOtherPlugin, s, r.probesAtOnce())
	measured := false
	if now, _ := due(gen, v, last, score != nil, s, r.now()); now {
		m, err := r.measure(ctx, gen, reqs)
		if err != nil {
			return ctrl.Result{}, err
		}
		r.memory.measured(req.NamespacedName, m)
		last, measured = m, true
	}

	// apply
	var writeErr error
	if v.valid() {
		writeErr = r.writeScore(ctx, gen, score, desiredScore(last, s.validFor))
	}

	// status
	before := gen.Status.DeepCopy()
	retry, err := r.writeStatus(ctx, gen, func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) scoresv1alpha1.AddOnPlacementScoreGeneratorStatus {
		return generatorStatus(g, v, last, s.validFor, writeErr, r.now())
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	r.recordEvents(gen, before, v, last, measured, writeErr)
	if writeErr != nil {
		return ctrl.Result{}, writeErr
	}
	// Invalid: nothing to wait for but a change of the generator, which its watch brings.
	now, next := due(gen, v, last, true, s, r.now())
	switch {
	case retry > 0:
		next = retry
	case now:
		// Due already (the measurement was not due when this reconcile began): soon, but not at once.
		next = time.Second
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// addressed says whether the generator is this agent's: it names the agent's addon, in the generator's
// own namespace (the agent's cluster namespace) or none.
func (r *Reconciler) addressed(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) bool {
	sel := gen.Spec.AddOnPlacementSelector
	return gen.Namespace == r.ClusterName && sel.Name == r.AddonName && (sel.Namespace == "" || sel.Namespace == r.ClusterName)
}

// score reads the generator's AddOnPlacementScore from the hub; nil when there is none.
func (r *Reconciler) score(ctx context.Context, gen *scoresv1alpha1.AddOnPlacementScoreGenerator) (*clusterv1alpha1.AddOnPlacementScore, error) {
	score := &clusterv1alpha1.AddOnPlacementScore{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(gen), score)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting AddOnPlacementScore %s/%s: %w", gen.Namespace, gen.Name, err)
	}
	return score, nil
}

// measure measures every request, a few at once, and returns what it found. It fails only when ctx ends
// (the agent is stopping): a score that cannot be measured is part of the measurement.
func (r *Reconciler) measure(ctx context.Context, gen *scoresv1alpha1.AddOnPlacementScoreGenerator, reqs []scoreagent.Request) (*measurement, error) {
	log := ctrl.LoggerFrom(ctx)
	results := make([]result, len(reqs))
	errs := parallel.Run(ctx, len(reqs), r.probesAtOnce(), func(i int) error {
		res, err := r.Registry.Measure(ctx, reqs[i])
		results[i] = result{name: reqs[i].ScoreName, res: res, err: err}
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	m := newMeasurement(gen, r.now(), results)
	log.V(1).Info("Measured", "scores", len(m.scores), "failed", len(m.failed))
	return m, nil
}

// writeScore brings the AddOnPlacementScore in line with desired: created, owned by the generator, when
// missing; its status written when it says something else. Nothing is written when desired is nil.
func (r *Reconciler) writeScore(ctx context.Context, gen *scoresv1alpha1.AddOnPlacementScoreGenerator, score *clusterv1alpha1.AddOnPlacementScore, desired *clusterv1alpha1.AddOnPlacementScoreStatus) error {
	if desired == nil {
		return nil
	}
	if score == nil {
		score = &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: gen.Name, Namespace: gen.Namespace}}
		// Not blocking the owner's deletion: that would need the right to update the generator's finalizers,
		// which the agent does not have.
		if err := controllerutil.SetControllerReference(gen, score, r.Client.Scheme(), controllerutil.WithBlockOwnerDeletion(false)); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, score); err != nil {
			return fmt.Errorf("creating AddOnPlacementScore %s/%s: %w", score.Namespace, score.Name, err)
		}
	} else if !metav1.IsControlledBy(score, gen) {
		return fmt.Errorf("the AddOnPlacementScore %s/%s exists and is not this generator's (no owner reference to it); rename the generator or delete that AddOnPlacementScore",
			score.Namespace, score.Name)
	}
	next, changed := scoreStatus(score.Status, desired, score.Generation, r.now())
	if !changed {
		return nil
	}
	score.Status = next
	if err := r.Client.Status().Update(ctx, score); err != nil {
		return fmt.Errorf("writing the status of AddOnPlacementScore %s/%s: %w", score.Namespace, score.Name, err)
	}
	return nil
}

// writeStatus writes the status that status computes from the generator, when it differs. When the cache
// is behind the generator, status is computed again from the generator as the API server has it; when the
// generator has changed in between, the reconcile that change causes writes it, and retry says how soon.
func (r *Reconciler) writeStatus(ctx context.Context, gen *scoresv1alpha1.AddOnPlacementScoreGenerator,
	status func(*scoresv1alpha1.AddOnPlacementScoreGenerator) scoresv1alpha1.AddOnPlacementScoreGeneratorStatus) (time.Duration, error) {
	current := gen
	for range 3 {
		next := status(current)
		if equality.Semantic.DeepEqual(current.Status, next) {
			return 0, nil
		}
		write := current.DeepCopy()
		write.Status = next
		err := r.Client.Status().Update(ctx, write)
		switch {
		case err == nil:
			return 0, nil
		case !apierrors.IsConflict(err):
			return 0, fmt.Errorf("writing the status: %w", err)
		}
		fresh := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(gen), fresh); err != nil {
			return 0, client.IgnoreNotFound(err)
		}
		if fresh.Generation != gen.Generation || fresh.UID != gen.UID {
			return statusConflictRetry, nil
		}
		current = fresh
	}
	return statusConflictRetry, nil
}

// recordEvents records a Warning when the generator becomes invalid or changes why, when a measurement
// leaves scores out, and when the AddOnPlacementScore cannot be written for a new reason (not at each retry).
func (r *Reconciler) recordEvents(gen *scoresv1alpha1.AddOnPlacementScoreGenerator, before *scoresv1alpha1.AddOnPlacementScoreGeneratorStatus,
	v verdict, m *measurement, measured bool, writeErr error) {
	if r.Recorder == nil {
		return
	}
	if !v.valid() {
		old := meta.FindStatusCondition(before.Conditions, scoresv1alpha1.ConditionValid)
		if old == nil || old.Reason != v.reason || old.Message != v.message || old.ObservedGeneration != gen.Generation {
			r.Recorder.Eventf(gen, nil, corev1.EventTypeWarning, v.reason, "Validate", "%s", truncate(v.message, 1024))
		}
	}
	if measured && len(m.failed) > 0 {
		r.Recorder.Eventf(gen, nil, corev1.EventTypeWarning, scoresv1alpha1.ReasonMeasureFailed, "Measure", "%s",
			truncate(strings.Join(m.failed, "; "), 1024))
	}
	if old := meta.FindStatusCondition(before.Conditions, scoresv1alpha1.ConditionMeasured); writeErr != nil &&
		(old == nil || old.Message != truncate(writeFailed(writeErr), maxMessage)) {
		r.Recorder.Eventf(gen, nil, corev1.EventTypeWarning, scoresv1alpha1.ReasonMeasureFailed, "WriteScore", "%s", truncate(writeErr.Error(), 1024))
	}
}

// probesAtOnce is how many scores of one generator are measured at once: what measure runs and validate
// bounds a measurement's time with.
func (r *Reconciler) probesAtOnce() int {
	if r.MaxConcurrentProbes > 0 {
		return r.MaxConcurrentProbes
	}
	return defaultProbesAtOnce
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
