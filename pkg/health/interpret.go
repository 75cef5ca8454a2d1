package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// State is the health of a manifest or a cluster.
type State string

const (
	Healthy     State = "Healthy"
	Progressing State = "Progressing"
	Degraded    State = "Degraded"
)

// Verdict is a State with the reason for it.
type Verdict struct {
	State   State
	Reason  string
	Message string
	// Finished is true when the workload ran to its end (a Job, a Pod, a kind whose interpreter says
	// Completed): Healthy and Finished is completed, Degraded and Finished is failed.
	Finished bool
}

// Words an interpreter (a ResourceInterpreter's expression or webhook) answers for a kind that finishes: how
// it ended.
const (
	// WordCompleted is Healthy and finished.
	WordCompleted = "Completed"
	// WordFailed is Degraded and finished.
	WordFailed = "Failed"
)

// VerdictOf is the verdict an interpreter's state word means: Healthy, Progressing or Degraded, or Completed
// and Failed, which are Healthy and Degraded and finished. False for any other word.
func VerdictOf(word string) (Verdict, bool) {
	switch word {
	case string(Healthy), string(Progressing), string(Degraded):
		return Verdict{State: State(word)}, true
	case WordCompleted:
		return Verdict{State: Healthy, Finished: true}, true
	case WordFailed:
		return Verdict{State: Degraded, Finished: true}, true
	}
	return Verdict{}, false
}

func healthy() Verdict { return Verdict{State: Healthy} }

func progressing(reason, format string, args ...any) Verdict {
	return Verdict{State: Progressing, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func degraded(reason, format string, args ...any) Verdict {
	return Verdict{State: Degraded, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Manifest-level reasons.
const (
	ReasonNotReported              = "NotReported"
	ReasonApplyFailed              = "ApplyFailed"
	ReasonWaitingForFeedback       = "WaitingForFeedback"
	ReasonRolloutInProgress        = "RolloutInProgress"
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonReplicaFailure           = "ReplicaFailure"
	ReasonJobFailed                = "JobFailed"
	ReasonJobRunning               = "JobRunning"
	ReasonPodFailed                = "PodFailed"
	ReasonPodNotReady              = "PodNotReady"
	ReasonClaimLost                = "ClaimLost"
	ReasonClaimPending             = "ClaimPending"
	ReasonNoLoadBalancerIngress    = "NoLoadBalancerIngress"
	ReasonAutoscalerCannotScale    = "AutoscalerCannotScale"
	ReasonAutoscalerInactive       = "AutoscalerInactive"
	ReasonConditionRuleDegraded    = "ConditionRuleDegraded"
	ReasonConditionRulePending     = "ConditionRulePending"
	ReasonNotAvailable             = "NotAvailable"
)

// degradedRuleConditions are the condition types of user condition rules that mean trouble when True. Every
// other rule condition means health when True.
var degradedRuleConditions = map[string]bool{"Degraded": true, "Failed": true}

// Feedback is the status feedback of one manifest, by name without FeedbackPrefix for the manager's own values.
type Feedback map[string]workv1.FieldValue

// FeedbackOf indexes a manifest's feedback values; the manager's values lose their prefix.
func FeedbackOf(values []workv1.FeedbackValue) Feedback {
	out := make(Feedback, len(values))
	for _, v := range values {
		if v.Name != FeedbackPrefix+TemplateHash { // the marker is for StaleReport, not a value of the object's
			out[strings.TrimPrefix(v.Name, FeedbackPrefix)] = v.Value
		}
	}
	return out
}

// own indexes the manager's own feedback values, by name without FeedbackPrefix. Only these are interpreted: a
// value of the user's rules that happens to have the name of one of ours is not ours.
func own(values []workv1.FeedbackValue) Feedback {
	out := make(Feedback, len(values))
	for _, v := range values {
		if name, ok := strings.CutPrefix(v.Name, FeedbackPrefix); ok && name != TemplateHash {
			out[name] = v.Value
		}
	}
	return out
}

// allOwn reports whether every value is the manager's own (FeedbackPrefix), so that FeedbackOf and own index
// the same values.
func allOwn(values []workv1.FeedbackValue) bool {
	for _, v := range values {
		if !strings.HasPrefix(v.Name, FeedbackPrefix) {
			return false
		}
	}
	return true
}

// Count is a count of the object's status, 0 when the agent reports none: Kubernetes omits zero counts from
// status, and the agent reports no value for a path that finds nothing.
func (f Feedback) Count(name string) int64 {
	n, _ := f.Integer(name)
	return n
}

// Integer is the integer value named name, and whether the agent reports one.
func (f Feedback) Integer(name string) (int64, bool) {
	v, ok := f[name]
	if !ok || v.Integer == nil {
		return 0, false
	}
	return *v.Integer, true
}

// Text is the string value named name, "" when the agent reports none.
func (f Feedback) Text(name string) string {
	if v, ok := f[name]; ok && v.String != nil {
		return *v.String
	}
	return ""
}

// ManifestInput is what is known of one manifest on one cluster.
type ManifestInput struct {
	// Manifest is the manifest as delivered to that cluster (a split manifest carries the cluster's share).
	Manifest template.Manifest
	// Status is the agent's report of it; nil when the agent has not reported it.
	Status *workv1.ManifestCondition
	// ConditionRules are the condition types the agent sets on it from the user's condition rules.
	ConditionRules []string
	// Replicas, when set, is the manifest's .spec.replicas on this cluster (its share of a split); otherwise
	// the manifest's own value is used (for a FromWork manifest, its reported .spec.replicas).
	Replicas *int64
	// Share, when the manifest is split, is the value this cluster's work carries at the manifest's split field
	// (whatever that field is: .spec.replicas, .spec.parallelism, ...). 0 means nothing is asked of this
	// cluster: the manifest is healthy once the agent reports it and not as failed to apply, whatever its
	// kind's feedback says.
	// nil when the manifest is not split.
	Share *int64
	// Fields, when the manifest is split, are the values this cluster's work carries at each split field, by
	// dotted path: Delivered sets them on the template's manifest.
	Fields map[string]int32

	// FromWork is true for a manifest known only from the agent's report of the work (WorkManifests), not from a
	// template: Manifest holds only its group, version, kind, name and namespace, so the replicas it asks for are
	// its .spec.replicas as reported (SpecReplicas feedback), and a Service's type is its ServiceType feedback.
	FromWork bool

	// Kind interprets the manifest's kind (Inputs and WorkManifests set it); when nil, the built-in
	// interpreter of the kind does, if there is one. Without one, health comes from condition rules or the
	// agent's conditions.
	Kind Interpreter

	// WorkTemplateHash is the template hash of the work that carries the manifest (Cluster sets it): the agent's
	// report of a manifest that carries another template marker was read before it applied this work.
	WorkTemplateHash string

	// match, set by Inputs, finds ConditionRules again for the resource the agent reports.
	match *ruleMatch
	// own, when set (by Cluster), is own(Status.StatusFeedbacks.Values), made once.
	own Feedback
}

// Delivered is the manifest as delivered to this cluster: the template's, with the cluster's share at each
// split field (a copy when there is any; the template's object itself, not to be modified, otherwise).
func (in ManifestInput) Delivered() map[string]any {
	if len(in.Fields) == 0 || in.Manifest.Object == nil {
		if in.Manifest.Object == nil {
			return nil
		}
		return in.Manifest.Object.Object
	}
	// One copy for all the fields: this runs per cluster and manifest on every reconcile.
	obj := in.Manifest.Object.DeepCopy()
	for path, v := range in.Fields {
		if keys, err := template.FieldPathKeys(path); err == nil {
			// A path through something that is not a map is left as it is, as SetIntField would.
			_ = unstructured.SetNestedField(obj.Object, int64(v), keys...)
		}
	}
	return obj.Object
}

// Manifest decides the health of one manifest on one cluster.
func Manifest(in ManifestInput) Verdict {
	id := in.Manifest.ID()
	if in.Status == nil {
		return progressing(ReasonNotReported, "%s: not reported by the agent yet", id)
	}
	conds := in.Status.Conditions
	if c := meta.FindStatusCondition(conds, workv1.ManifestApplied); c != nil && c.Status == metav1.ConditionFalse {
		return degraded(ReasonApplyFailed, "%s: not applied: %s", id, c.Message)
	}
	if in.Share != nil && *in.Share == 0 {
		// Nothing is asked of this cluster: a Job with parallelism 0 never completes, and that is fine here.
		return healthy()
	}
	if StaleReport(in.Status, in.WorkTemplateHash) {
		return progressing(ReasonStaleFeedback, "%s: the agent's last report of it was read before it applied this template", id)
	}
	kind := in.Kind
	if kind == nil {
		kind = Builtin(in.Manifest.GVK.GroupKind())
	}
	if kind != nil {
		f := in.own
		if f == nil {
			f = own(in.Status.StatusFeedbacks.Values)
		}
		if v, ok := kind.Health(in, f); ok {
			return v
		}
	}
	if types := in.conditionRules(); len(types) > 0 {
		return byConditionRules(id, conds, types)
	}
	if meta.IsStatusConditionTrue(conds, workv1.ManifestApplied) && meta.IsStatusConditionTrue(conds, workv1.ManifestAvailable) {
		return healthy()
	}
	return progressing(ReasonNotAvailable, "%s: not yet applied and available", id)
}

func byConditionRules(id string, conds []metav1.Condition, types []string) Verdict {
	for _, t := range types {
		if degradedRuleConditions[t] && meta.IsStatusConditionTrue(conds, t) {
			c := meta.FindStatusCondition(conds, t)
			return degraded(ReasonConditionRuleDegraded, "%s: condition %s is True: %s", id, t, c.Message)
		}
	}
	for _, t := range types {
		if !degradedRuleConditions[t] && !meta.IsStatusConditionTrue(conds, t) {
			return progressing(ReasonConditionRulePending, "%s: condition %s is not True yet", id, t)
		}
	}
	return healthy()
}

// desiredReplicas is the manifest's .spec.replicas as delivered, 1 when unset as the API server defaults it.
func desiredReplicas(m template.Manifest) int64 {
	if n, ok := specInteger(m, "replicas"); ok {
		return n
	}
	return 1
}

// specInteger is the integer at .spec.<fields...> of the manifest, and whether it has one.
func specInteger(m template.Manifest, fields ...string) (int64, bool) {
	if m.Object == nil {
		return 0, false
	}
	v, found, err := unstructured.NestedFieldNoCopy(m.Object.Object, append([]string{"spec"}, fields...)...)
	if err != nil || !found {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// onDelete reports whether the manifest's .spec.updateStrategy.type is OnDelete (a StatefulSet's or a
// DaemonSet's): its controller replaces no pod on a template change; a pod takes the new template only when it is
// deleted.
func onDelete(m template.Manifest) bool {
	if m.Object == nil {
		return false
	}
	t, _, _ := unstructured.NestedString(m.Object.Object, "spec", "updateStrategy", "type")
	return t == "OnDelete"
}

// toUpdate is how many of the want replicas the manifest's update strategy moves to the current template: all
// of them, except for a StatefulSet with OnDelete (none) or with a rolling update partition (the ordinals at
// or above it, want - partition), as kstatus counts them. A manifest known only from the work's report has no
// spec to read a strategy from: all of them.
func toUpdate(m template.Manifest, want int64) int64 {
	if m.GVK.Kind != "StatefulSet" {
		return want
	}
	if onDelete(m) {
		return 0
	}
	if p, ok := specInteger(m, "updateStrategy", "rollingUpdate", "partition"); ok && p > 0 {
		return max(want-p, 0)
	}
	return want
}

// interpreted reports whether the manager judges the manifest by its own feedback. A manifest known only from
// the work's report has no spec to read a Service's type from: its Service rule asks for .spec.type, which the
// manager asks for only on LoadBalancer Services, so a Service that reports LoadBalancer is judged by its
// ingress and any other by the agent's Applied and Available conditions. (A LoadBalancer Service whose work
// was written before the manager asked for .spec.type, and that has no ingress yet, is judged by those too.)
func (in ManifestInput) interpreted(f Feedback) bool {
	if !in.FromWork {
		return Interpreted(in.Manifest)
	}
	if in.Manifest.GVK.GroupKind() == (schema.GroupKind{Kind: "Service"}) {
		return f.Text(ServiceType) == "LoadBalancer"
	}
	_, ok := rules[in.Manifest.GVK.GroupKind()]
	return ok
}

// wantReplicas is how many replicas the manifest asks for on this cluster: Replicas when set; for a manifest
// known only from the work, its .spec.replicas as the agent reports it (ok is false until it does); else the
// manifest's own.
func (in ManifestInput) wantReplicas(f Feedback) (want int64, ok bool) {
	switch {
	case in.Replicas != nil:
		return *in.Replicas, true
	case in.FromWork:
		return f.Integer(SpecReplicas)
	}
	return desiredReplicas(in.Manifest), true
}

func interpret(id string, in ManifestInput, f Feedback) Verdict {
	m := in.Manifest
	switch m.GVK.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		want, ok := in.wantReplicas(f)
		if !ok {
			return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback (.spec.replicas)", id)
		}
		return replicated(id, m, want, f)
	case "DaemonSet":
		return daemonSet(id, m, f)
	case "Job":
		return job(id, f)
	case "Pod":
		return pod(id, f)
	case "PersistentVolumeClaim":
		return claim(id, f)
	case "Service", "Ingress":
		if f.Text(IngressIP) == "" && f.Text(IngressHostname) == "" {
			return progressing(ReasonNoLoadBalancerIngress, "%s: the load balancer has no ingress yet", id)
		}
		return healthy()
	case "HorizontalPodAutoscaler":
		return autoscaler(id, f)
	case "CronJob":
		// A schedule: healthy once applied; its times are reported for the status, not judged (a run in
		// progress and a failed one look alike in them).
		return healthy()
	}
	return healthy()
}

// observed reports whether the controller on the cluster has seen the object's current generation.
func observed(id string, f Feedback) (Verdict, bool) {
	gen, ok1 := f.Integer(Generation)
	obs, ok2 := f.Integer(ObservedGeneration)
	if !ok1 || !ok2 {
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id), false
	}
	if obs < gen {
		return progressing(ReasonRolloutInProgress, "%s: generation %d not yet observed (observed %d)", id, gen, obs), false
	}
	return Verdict{}, true
}

func replicated(id string, m template.Manifest, want int64, f Feedback) Verdict {
	if m.GVK.Kind == "Deployment" && f.Text(ProgressingReason) == "ProgressDeadlineExceeded" {
		return degraded(ReasonProgressDeadlineExceeded, "%s: progress deadline exceeded", id)
	}
	// A Deployment copies its new ReplicaSet's ReplicaFailure condition: pods refused by a quota, PodSecurity
	// or a missing ServiceAccount.
	if (m.GVK.Kind == "Deployment" || m.GVK.Kind == "ReplicaSet") && f.Text(ReplicaFailure) == "True" {
		if msg := f.Text(ReplicaFailureMessage); msg != "" {
			return degraded(ReasonReplicaFailure, "%s: replica failure: %s", id, msg)
		}
		return degraded(ReasonReplicaFailure, "%s: replica failure", id)
	}
	if v, ok := observed(id, f); !ok {
		return v
	}
	ready, available, replicas := f.Count(ReadyReplicas), f.Count(AvailableReplicas), f.Count(Replicas)
	updated := f.Count(UpdatedReplicas)
	if m.GVK.Kind == "ReplicaSet" { // a ReplicaSet has no updatedReplicas: all of its pods are of its template
		updated = replicas
	}
	// A StatefulSet with OnDelete or a partition keeps some pods on the old template, on purpose.
	update := toUpdate(m, want)
	switch {
	case updated < update:
		return progressing(ReasonRolloutInProgress, "%s: %d of %d replicas updated", id, updated, update)
	case update == want && replicas > updated:
		return progressing(ReasonRolloutInProgress, "%s: %d old replicas pending termination", id, replicas-updated)
	case update < want && replicas > want:
		// Only where the strategy leaves old pods on purpose: a scale-down still under way. Elsewhere more
		// replicas than the manifest's, all updated, are an autoscaler's (replicas retained), not a rollout's.
		return progressing(ReasonRolloutInProgress, "%s: %d replicas above %d pending termination", id, replicas-want, want)
	case available < want || ready < want:
		return progressing(ReasonRolloutInProgress, "%s: %d of %d replicas available", id, min(available, ready), want)
	}
	return healthy()
}

func daemonSet(id string, m template.Manifest, f Feedback) Verdict {
	if v, ok := observed(id, f); !ok {
		return v
	}
	// desiredNumberScheduled is always in a DaemonSet's status (not omitempty): without it there is no status yet.
	desired, ok := f.Integer(DesiredNumberScheduled)
	if !ok {
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id)
	}
	updated, available := f.Count(UpdatedNumberScheduled), f.Count(NumberAvailable)
	if onDelete(m) {
		// Its pods keep the old template until they are deleted: none is waited for to be updated, as Argo CD
		// judges it (kstatus waits for them all, which never ends without someone deleting the pods).
		if available < desired {
			return progressing(ReasonRolloutInProgress, "%s: %d of %d pods available", id, available, desired)
		}
		return healthy()
	}
	if updated < desired || available < desired {
		return progressing(ReasonRolloutInProgress, "%s: %d of %d pods updated and %d available", id, updated, desired, available)
	}
	return healthy()
}

func job(id string, f Feedback) Verdict {
	if f.Text(FailedCondition) == "True" {
		v := degraded(ReasonJobFailed, "%s: failed (%d failed pods)", id, f.Count(Failed))
		v.Finished = true
		return v
	}
	if f.Text(Complete) == "True" {
		return Verdict{State: Healthy, Finished: true}
	}
	if len(f) == 0 {
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id)
	}
	return progressing(ReasonJobRunning, "%s: running (%d active, %d succeeded)", id, f.Count(Active), f.Count(Succeeded))
}

func pod(id string, f Feedback) Verdict {
	switch f.Text(Phase) {
	case "Failed":
		v := degraded(ReasonPodFailed, "%s: the pod failed", id)
		v.Finished = true
		return v
	case "Succeeded":
		return Verdict{State: Healthy, Finished: true}
	case "Running":
		if f.Text(Ready) == "True" {
			return healthy()
		}
	case "":
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id)
	}
	return progressing(ReasonPodNotReady, "%s: the pod is %s and not ready", id, f.Text(Phase))
}

// autoscaler judges a HorizontalPodAutoscaler by its conditions, as its controller sets them: one that cannot
// scale or cannot compute a scale (missing metrics, a scale target it cannot find) is degraded; scaling
// disabled (a target scaled to zero on purpose) is healthy.
func autoscaler(id string, f Feedback) Verdict {
	switch {
	case f.Text(AbleToScale) == "" && f.Text(ScalingActive) == "":
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id)
	case f.Text(AbleToScale) == "False":
		return degraded(ReasonAutoscalerCannotScale, "%s: cannot scale: %s", id, f.Text(AbleToScaleMessage))
	case f.Text(ScalingActive) == "False" && f.Text(ScalingActiveReason) != "ScalingDisabled":
		return degraded(ReasonAutoscalerInactive, "%s: %s: %s", id, f.Text(ScalingActiveReason), f.Text(ScalingActiveMessage))
	}
	return healthy()
}

func claim(id string, f Feedback) Verdict {
	switch f.Text(Phase) {
	case "Bound":
		return healthy()
	case "Lost":
		return degraded(ReasonClaimLost, "%s: the claim lost its volume", id)
	case "":
		return progressing(ReasonWaitingForFeedback, "%s: waiting for status feedback", id)
	}
	return progressing(ReasonClaimPending, "%s: the claim is %s", id, f.Text(Phase))
}
