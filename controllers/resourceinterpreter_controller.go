package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
)

// ResourceInterpreterReconciler reports on each ResourceInterpreter whether the manager uses it: whether it
// compiles and whether it wins its kind. Conflicts depend on every interpreter, so one reconcile judges them
// all, whatever changed.
type ResourceInterpreterReconciler struct {
	client.Client
	// Cache compiles interpreters once per generation; the PlacementManifestWork reconciler shares it.
	Cache *interpreter.Cache
	// Recorder records an event when an interpreter stops being used; none when nil.
	Recorder events.EventRecorder
}

// allInterpreters is the one request every ResourceInterpreter event maps to.
var allInterpreters = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all"}}

// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=resourceinterpreters,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=resourceinterpreters/status,verbs=update

// Reconcile writes the Ready condition of every ResourceInterpreter whose condition changed.
func (r *ResourceInterpreterReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	list := &workv1alpha1.ResourceInterpreterList{}
	if err := r.List(ctx, list); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing ResourceInterpreters: %w", err)
	}
	_, problems := interpreter.Resolve(list.Items, r.Cache)
	var errs []error
	for i := range list.Items {
		ri := &list.Items[i]
		if err := r.writeStatus(ctx, ri, problems[ri.Name]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return ctrl.Result{}, fmt.Errorf("writing ResourceInterpreter status: %v", errs)
	}
	return ctrl.Result{}, nil
}

func (r *ResourceInterpreterReconciler) writeStatus(ctx context.Context, ri *workv1alpha1.ResourceInterpreter, problem *interpreter.Problem) error {
	st := *ri.Status.DeepCopy()
	st.ObservedGeneration = ri.Generation
	meta.SetStatusCondition(&st.Conditions, interpreterReady(ri, problem))
	if equality.Semantic.DeepEqual(st, ri.Status) {
		return nil
	}
	was := meta.FindStatusCondition(ri.Status.Conditions, workv1alpha1.ConditionReady)
	ri.Status = st
	if err := r.Status().Update(ctx, ri); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // a newer version or its deletion wakes this reconciler again
		}
		return fmt.Errorf("%s: %w", ri.Name, err)
	}
	if problem != nil && r.Recorder != nil && (was == nil || was.Reason != problem.Reason || was.Message != problem.Message) {
		r.Recorder.Eventf(ri, nil, corev1.EventTypeWarning, problem.Reason, "Compile", "%s", problem.Message)
	}
	return nil
}

// interpreterReady is the Ready condition of an interpreter with the given problem (nil: none).
func interpreterReady(ri *workv1alpha1.ResourceInterpreter, problem *interpreter.Problem) metav1.Condition {
	c := metav1.Condition{Type: workv1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: ri.Generation,
		Reason: workv1alpha1.ReasonInterpreterAccepted, Message: fmt.Sprintf("Interprets %s", targetString(ri.Spec.Target))}
	if problem != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, problem.Reason, problem.Message
	}
	return c
}

func targetString(t workv1alpha1.InterpreterTarget) string {
	s := t.Kind
	if t.Group != "" {
		s += "." + t.Group
	}
	if len(t.Versions) > 0 {
		s += fmt.Sprintf(" (versions %v)", t.Versions)
	}
	return s
}

// setupInterpreters registers the ResourceInterpreter status controller.
func setupInterpreters(mgr ctrl.Manager, cache *interpreter.Cache) error {
	r := &ResourceInterpreterReconciler{Client: mgr.GetClient(), Cache: cache, Recorder: mgr.GetEventRecorder("resourceinterpreter-controller")}
	return ctrl.NewControllerManagedBy(mgr).
		Named("resourceinterpreter").
		Watches(&workv1alpha1.ResourceInterpreter{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{allInterpreters}
		})).
		Complete(r)
}

// interpreters are the kinds' interpreters: the built-in ones and the users' ResourceInterpreters from the
// cache, compiled once per generation. A generation that does not compile is replaced by the last one of that
// interpreter that did (in this process), so a typo does not change how a PlacementManifestWork is planned or
// judged; one with no such generation, or that loses its kind to another, is left out (its own status says
// why).
func (r *PlacementManifestWorkReconciler) interpreters(ctx context.Context) (*health.Interpreters, error) {
	list := &workv1alpha1.ResourceInterpreterList{}
	// Read only, on every reconcile: the cache's objects are not copied (compiling copies what it keeps).
	if err := r.reader().List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ResourceInterpreters: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	// One session per reconcile: a webhook that times out is asked once, not once per cluster, and no call
	// outlives the reconcile.
	var calls interpreter.Webhooks
	if r.webhooks != nil {
		calls = r.webhooks.Session(ctx)
	}
	set, _ := interpreter.ResolveWithWebhooks(list.Items, r.interpreterCache, calls)
	return set, nil
}
