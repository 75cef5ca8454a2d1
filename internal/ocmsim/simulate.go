package ocmsim

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	workv1 "open-cluster-management.io/api/work/v1"
)

// Condition reasons OCM's work agent (v1.2) uses; the simulated agent reports the same ones so the hub sees
// what it would see from a real cluster.
const (
	reasonWorkApplied         = "AppliedManifestWorkComplete"
	reasonWorkApplyFailed     = "AppliedManifestWorkFailed"
	reasonManifestApplied     = "AppliedManifestComplete"
	reasonManifestApplyFailed = "AppliedManifestFailed"
	reasonResourcesAvailable  = "ResourcesAvailable"
	reasonResourcesMissing    = "ResourcesNotAvailable"
	reasonResourceAvailable   = "ResourceAvailable"
	reasonResourceMissing     = "ResourceNotAvailable"
	reasonFeedbackSynced      = "StatusFeedbackSynced"
	reasonNoFeedback          = "NoStatusFeedbackSynced"
	reasonFeedbackFailed      = "StatusFeedbackSyncFailed"
	conditionFeedbackSynced   = "StatusFeedbackSynced"
)

// Behavior is how a simulated work agent reports the ManifestWorks it is given.
type Behavior string

const (
	// Healthy reports every work Applied and Available, and its workloads ready after the spoke's ready delay.
	Healthy Behavior = "healthy"
	// FailApply reports every work Applied=False, as an agent whose apply is refused would.
	FailApply Behavior = "fail-apply"
	// NeverReady reports every work Applied and Available (its resources exist), but its workloads never ready:
	// after the ready delay a Deployment reports ProgressDeadlineExceeded.
	NeverReady Behavior = "never-ready"
)

// Spoke is how the simulated work agent of one cluster behaves.
type Spoke struct {
	Behavior Behavior
	// ReadyDelay is how long after a new generation the workloads report ready (or miss their deadline).
	ReadyDelay time.Duration
	// FailureCause names, in a FailApply agent's messages, what asked for the failure (the sandbox's
	// "--fail-apply"); empty says nothing.
	FailureCause string
}

// Simulation is what the simulated agent reports for one ManifestWork at one moment.
type Simulation struct {
	Status workv1.ManifestWorkStatus
	// RequeueAfter is how soon the status changes by itself (workloads becoming ready, or missing their
	// progress deadline); zero when it is final for this generation.
	RequeueAfter time.Duration
}

// Simulate computes the status the work agent of the work's cluster (its namespace), behaving as spoke, reports
// for work at now, when it first saw the work's current generation at since, as OCM's agent (v1.2) would:
// Applied and Available on the work, Applied, Available and StatusFeedbackSynced on each manifest, and the
// status feedback that the work's manifestConfigs ask for, read from the object as it would stand on the
// cluster by then (see LiveObject). Like the real agent, it sets no Progressing or Degraded condition on the
// work without condition rules, and it does not evaluate condition rules (CEL).
//
// Conditions whose status did not change keep their transition time, so a status simulated again with nothing
// changed compares equal and is not written.
func Simulate(work *workv1.ManifestWork, spoke Spoke, since, now time.Time) Simulation {
	gen := work.Generation
	elapsed := now.Sub(since)
	timeUp := elapsed >= spoke.ReadyDelay
	applied := spoke.Behavior != FailApply
	rollout := Rollout{Ready: spoke.Behavior == Healthy && timeUp, DeadlineExceeded: spoke.Behavior == NeverReady && timeUp, Generation: gen}
	cause := ""
	if spoke.FailureCause != "" {
		cause = " (" + spoke.FailureCause + ")"
	}

	prevManifests := map[int32][]metav1.Condition{}
	for _, m := range work.Status.ResourceStatus.Manifests {
		prevManifests[m.ResourceMeta.Ordinal] = m.Conditions
	}
	var manifests []workv1.ManifestCondition
	workloads := 0
	for i, raw := range work.Spec.Workload.Manifests {
		m, workload := simulateManifest(int32(i), raw.Raw, applied, cause, rollout, work.Spec.ManifestConfigs)
		for j := range m.Conditions {
			m.Conditions[j] = carryTransition(prevManifests[int32(i)], m.Conditions[j], gen, now)
		}
		if workload {
			workloads++
		}
		manifests = append(manifests, m)
	}

	var conds []metav1.Condition
	add := func(t string, status metav1.ConditionStatus, reason, msg string) {
		c := metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg}
		conds = append(conds, carryTransition(work.Status.Conditions, c, gen, now))
	}
	if applied {
		add(workv1.WorkApplied, metav1.ConditionTrue, reasonWorkApplied, "Apply manifest work complete")
		add(workv1.WorkAvailable, metav1.ConditionTrue, reasonResourcesAvailable, "All resources are available")
	} else {
		add(workv1.WorkApplied, metav1.ConditionFalse, reasonWorkApplyFailed,
			fmt.Sprintf("Failed to apply manifest work: simulated failure on %s%s", work.Namespace, cause))
		add(workv1.WorkAvailable, metav1.ConditionFalse, reasonResourcesMissing,
			fmt.Sprintf("%d of %d resources are not available", len(manifests), len(manifests)))
	}
	var requeue time.Duration
	if applied && workloads > 0 && !timeUp {
		// Healthy workloads become ready then, and never-ready ones miss their progress deadline then.
		requeue = spoke.ReadyDelay - elapsed
	}
	return Simulation{
		Status:       workv1.ManifestWorkStatus{Conditions: conds, ResourceStatus: workv1.ManifestResourceStatus{Manifests: manifests}},
		RequeueAfter: requeue,
	}
}

// carryTransition stamps c with the generation, and keeps the previous transition time when the previous
// condition of that type had the same status.
func carryTransition(prev []metav1.Condition, c metav1.Condition, gen int64, now time.Time) metav1.Condition {
	c.ObservedGeneration = gen
	c.LastTransitionTime = metav1.NewTime(now)
	for _, p := range prev {
		if p.Type == c.Type && p.Status == c.Status {
			c.LastTransitionTime = p.LastTransitionTime
		}
	}
	return c
}

// simulateManifest is the agent's report of one manifest, and whether it runs pods.
func simulateManifest(ordinal int32, raw []byte, applied bool, cause string, rollout Rollout, configs []workv1.ManifestConfigOption) (workv1.ManifestCondition, bool) {
	out := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal}}
	obj := &unstructured.Unstructured{}
	// UnmarshalJSON, unlike json.Unmarshal, keeps integers int64, as JSONPath feedback needs them.
	if err := obj.UnmarshalJSON(raw); err != nil {
		out.Conditions = []metav1.Condition{{
			Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: reasonManifestApplyFailed,
			Message: fmt.Sprintf("The manifest is not a Kubernetes object: %v", err),
		}}
		return out, false
	}
	gvk := obj.GroupVersionKind()
	out.ResourceMeta = workv1.ManifestResourceMeta{
		Ordinal: ordinal, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: GuessResource(gvk.Kind), Name: obj.GetName(), Namespace: obj.GetNamespace(),
	}
	if !applied {
		out.Conditions = []metav1.Condition{
			{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: reasonManifestApplyFailed, Message: "Failed to apply manifest: simulated failure" + cause},
			{Type: workv1.ManifestAvailable, Status: metav1.ConditionFalse, Reason: reasonResourceMissing, Message: "Resource is not available"},
		}
		return out, IsWorkload(gvk)
	}
	live := LiveObject(obj, rollout)
	values, synced := feedback(live, feedbackRules(out.ResourceMeta, configs))
	out.StatusFeedbacks.Values = values
	out.Conditions = []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: reasonManifestApplied, Message: "Apply manifest complete"},
		{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, Reason: reasonResourceAvailable, Message: "Resource is available"},
		synced,
	}
	return out, IsWorkload(gvk)
}

// feedbackRules are the feedback rules of the first manifestConfig that names the resource and has any, as
// OCM's agent picks them (ocm pkg/work/helper FindManifestConfiguration).
func feedbackRules(rm workv1.ManifestResourceMeta, configs []workv1.ManifestConfigOption) []workv1.FeedbackRule {
	for _, c := range configs {
		id := c.ResourceIdentifier
		if id.Group == rm.Group && id.Resource == rm.Resource && wildcardMatch(rm.Namespace, id.Namespace) &&
			wildcardMatch(rm.Name, id.Name) && len(c.FeedbackRules) > 0 {
			return c.FeedbackRules
		}
	}
	return nil
}

// wildcardMatch matches a name against a manifestConfig's, where * matches any run of characters.
func wildcardMatch(value, pattern string) bool {
	if value == pattern || pattern == "*" {
		return true
	}
	re, err := regexp.Compile("^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$")
	return err == nil && re.MatchString(value)
}

// wellKnownStatus are the paths of OCM's WellKnownStatus feedback rule (ocm v1.2,
// pkg/work/spoke/statusfeedback/rules).
var wellKnownStatus = map[schema.GroupKind][]workv1.JsonPath{
	{Group: "apps", Kind: "Deployment"}: {
		{Name: "ReadyReplicas", Path: ".status.readyReplicas"},
		{Name: "Replicas", Path: ".status.replicas"},
		{Name: "AvailableReplicas", Path: ".status.availableReplicas"},
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		{Name: "NumberReady", Path: ".status.numberReady"},
		{Name: "DesiredNumberScheduled", Path: ".status.desiredNumberScheduled"},
		{Name: "NumberAvailable", Path: ".status.numberAvailable"},
	},
	{Group: "batch", Kind: "Job"}: {
		{Name: "JobComplete", Path: `.status.conditions[?(@.type=="Complete")].status`},
		{Name: "JobSucceeded", Path: ".status.succeeded"},
	},
	{Group: "", Kind: "Pod"}: {
		{Name: "PodReady", Path: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "PodPhase", Path: ".status.phase"},
	},
}

// feedback evaluates feedback rules against the live object as OCM's status reader does: a path that finds
// nothing yields no value, and integers, strings and booleans are the only values.
func feedback(live *unstructured.Unstructured, rules []workv1.FeedbackRule) ([]workv1.FeedbackValue, metav1.Condition) {
	synced := metav1.Condition{Type: conditionFeedbackSynced, Status: metav1.ConditionTrue, Reason: reasonFeedbackSynced}
	if len(rules) == 0 {
		synced.Reason = reasonNoFeedback
		return nil, synced
	}
	var values []workv1.FeedbackValue
	var errs []string
	for _, rule := range rules {
		paths := rule.JsonPaths
		if rule.Type == workv1.WellKnownStatusType {
			paths = wellKnownStatus[live.GroupVersionKind().GroupKind()]
			if len(paths) == 0 {
				errs = append(errs, fmt.Sprintf("cannot find the wellknown statuses for resource with gvk %s", live.GroupVersionKind()))
			}
		}
		for _, p := range paths {
			if p.Version != "" && p.Version != live.GroupVersionKind().Version {
				errs = append(errs, fmt.Sprintf("version set in the path %s is not matched for the related resource", p.Name))
				continue
			}
			v, err := JSONPathValue(live, p.Name, p.Path)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if v != nil {
				values = append(values, *v)
			}
		}
	}
	if len(errs) > 0 {
		synced.Status, synced.Reason = metav1.ConditionFalse, reasonFeedbackFailed
		synced.Message = "Sync status feedback failed with error " + strings.Join(errs, "; ")
	}
	return values, synced
}

// JSONPathValue reads one feedback value from obj; nil when the path finds nothing.
func JSONPathValue(obj *unstructured.Unstructured, name, path string) (*workv1.FeedbackValue, error) {
	j := jsonpath.New(name).AllowMissingKeys(true)
	if err := j.Parse("{" + path + "}"); err != nil {
		return nil, fmt.Errorf("failed to parse json path %s of %s: %w", path, name, err)
	}
	results, err := j.FindResults(obj.UnstructuredContent())
	if err != nil {
		return nil, fmt.Errorf("failed to find value for %s: %w", name, err)
	}
	if len(results) == 0 || len(results[0]) == 0 {
		return nil, nil
	}
	out := &workv1.FeedbackValue{Name: name}
	switch v := results[0][0].Interface().(type) {
	case nil:
		return nil, nil
	case int64:
		out.Value = workv1.FieldValue{Type: workv1.Integer, Integer: &v}
	case string:
		out.Value = workv1.FieldValue{Type: workv1.String, String: &v}
	case bool:
		out.Value = workv1.FieldValue{Type: workv1.Boolean, Boolean: &v}
	default:
		return nil, fmt.Errorf("the type %T of the value for %s is not supported", v, name)
	}
	return out, nil
}

// GuessResource is the lowercase plural of a kind, as a RESTMapper would say for the built-in kinds; the
// simulated agent has no cluster to ask.
func GuessResource(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "":
		return ""
	case k == "endpoints":
		return k
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
