// Package health decides whether a manifest, and so a cluster, is healthy from what OCM's work agent reports:
// the status feedback the manager asks for on the kinds people deploy most, the conditions of the user's own
// condition rules (matched to manifests as the agent matches them), or else the agent's Applied and Available
// conditions.
//
// It never says Healthy when the pods asked for do not run: a count the agent does not report is 0 (Kubernetes
// omits zero counts, the agent reports nothing for a missing path), only a missing generation/observedGeneration
// pair means "waiting for feedback", a split manifest is judged against this cluster's share (a share of 0 asks
// nothing), a cluster held on an earlier template is judged against the manifests its work carries
// (WorkManifests), and a work being deleted is never available.
package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// FeedbackPrefix starts the name of every feedback value the manager asks for, so they never clash with the
// names of the user's own feedback rules.
const FeedbackPrefix = "pmw."

// Names of the feedback values, without FeedbackPrefix. Most are the field names of the kinds' status.
const (
	Generation             = "generation"
	ObservedGeneration     = "observedGeneration"
	Replicas               = "replicas"
	ReadyReplicas          = "readyReplicas"
	AvailableReplicas      = "availableReplicas"
	UpdatedReplicas        = "updatedReplicas"
	ProgressingReason      = "progressingReason"
	ReplicaFailure         = "replicaFailure"
	ReplicaFailureMessage  = "replicaFailureMessage"
	DesiredNumberScheduled = "desiredNumberScheduled"
	NumberReady            = "numberReady"
	NumberAvailable        = "numberAvailable"
	UpdatedNumberScheduled = "updatedNumberScheduled"
	Active                 = "active"
	Succeeded              = "succeeded"
	Failed                 = "failed"
	Complete               = "complete"
	FailedCondition        = "failedCondition"
	Phase                  = "phase"
	Ready                  = "ready"
	IngressIP              = "ingressIP"
	IngressHostname        = "ingressHostname"
	CurrentReplicas        = "currentReplicas"
	DesiredReplicas        = "desiredReplicas"
	AbleToScale            = "ableToScale"
	AbleToScaleMessage     = "ableToScaleMessage"
	ScalingActive          = "scalingActive"
	ScalingActiveReason    = "scalingActiveReason"
	ScalingActiveMessage   = "scalingActiveMessage"
	LastScheduleTime       = "lastScheduleTime"
	LastSuccessfulTime     = "lastSuccessfulTime"
	// SpecReplicas and ServiceType are of the spec: they let a cluster that a rollout holds on an earlier
	// template be judged from its work's report alone (see WorkManifests).
	SpecReplicas = "specReplicas"
	ServiceType  = "serviceType"
)

type kindRule struct {
	resource string
	paths    []workv1.JsonPath
}

func path(name, p string) workv1.JsonPath {
	return workv1.JsonPath{Name: name, Path: p}
}

func conditionField(condition, field string) string {
	return `.status.conditions[?(@.type=="` + condition + `")].` + field
}

var generations = []workv1.JsonPath{
	path(Generation, ".metadata.generation"),
	path(ObservedGeneration, ".status.observedGeneration"),
}

// rules are the feedback the manager asks for per kind. Paths are evaluated by the agent against the whole
// object, so generation and observedGeneration can be compared.
var rules = map[schema.GroupKind]kindRule{
	{Group: "apps", Kind: "Deployment"}: {resource: "deployments", paths: append([]workv1.JsonPath{
		path(SpecReplicas, ".spec.replicas"),
		path(Replicas, ".status.replicas"),
		path(ReadyReplicas, ".status.readyReplicas"),
		path(AvailableReplicas, ".status.availableReplicas"),
		path(UpdatedReplicas, ".status.updatedReplicas"),
		path(ProgressingReason, conditionField("Progressing", "reason")),
		path(ReplicaFailure, conditionField("ReplicaFailure", "status")),
		path(ReplicaFailureMessage, conditionField("ReplicaFailure", "message")),
	}, generations...)},
	{Group: "apps", Kind: "StatefulSet"}: {resource: "statefulsets", paths: append([]workv1.JsonPath{
		path(SpecReplicas, ".spec.replicas"),
		path(Replicas, ".status.replicas"),
		path(ReadyReplicas, ".status.readyReplicas"),
		path(AvailableReplicas, ".status.availableReplicas"),
		path(UpdatedReplicas, ".status.updatedReplicas"),
	}, generations...)},
	{Group: "apps", Kind: "ReplicaSet"}: {resource: "replicasets", paths: append([]workv1.JsonPath{
		path(SpecReplicas, ".spec.replicas"),
		path(Replicas, ".status.replicas"),
		path(ReadyReplicas, ".status.readyReplicas"),
		path(AvailableReplicas, ".status.availableReplicas"),
		path(ReplicaFailure, conditionField("ReplicaFailure", "status")),
		path(ReplicaFailureMessage, conditionField("ReplicaFailure", "message")),
	}, generations...)},
	{Group: "apps", Kind: "DaemonSet"}: {resource: "daemonsets", paths: append([]workv1.JsonPath{
		path(DesiredNumberScheduled, ".status.desiredNumberScheduled"),
		path(NumberReady, ".status.numberReady"),
		path(NumberAvailable, ".status.numberAvailable"),
		path(UpdatedNumberScheduled, ".status.updatedNumberScheduled"),
	}, generations...)},
	{Group: "batch", Kind: "Job"}: {resource: "jobs", paths: []workv1.JsonPath{
		path(Active, ".status.active"),
		path(Succeeded, ".status.succeeded"),
		path(Failed, ".status.failed"),
		path(Complete, conditionField("Complete", "status")),
		path(FailedCondition, conditionField("Failed", "status")),
	}},
	{Group: "", Kind: "Pod"}: {resource: "pods", paths: []workv1.JsonPath{
		path(Phase, ".status.phase"),
		path(Ready, conditionField("Ready", "status")),
	}},
	{Group: "", Kind: "PersistentVolumeClaim"}: {resource: "persistentvolumeclaims", paths: []workv1.JsonPath{
		path(Phase, ".status.phase"),
	}},
	{Group: "networking.k8s.io", Kind: "Ingress"}: {resource: "ingresses", paths: []workv1.JsonPath{
		path(IngressIP, ".status.loadBalancer.ingress[0].ip"),
		path(IngressHostname, ".status.loadBalancer.ingress[0].hostname"),
	}},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {resource: "horizontalpodautoscalers", paths: []workv1.JsonPath{
		path(CurrentReplicas, ".status.currentReplicas"),
		path(DesiredReplicas, ".status.desiredReplicas"),
		path(AbleToScale, conditionField("AbleToScale", "status")),
		path(AbleToScaleMessage, conditionField("AbleToScale", "message")),
		path(ScalingActive, conditionField("ScalingActive", "status")),
		path(ScalingActiveReason, conditionField("ScalingActive", "reason")),
		path(ScalingActiveMessage, conditionField("ScalingActive", "message")),
	}},
	{Group: "batch", Kind: "CronJob"}: {resource: "cronjobs", paths: []workv1.JsonPath{
		path(LastScheduleTime, ".status.lastScheduleTime"),
		path(LastSuccessfulTime, ".status.lastSuccessfulTime"),
	}},
	{Group: "", Kind: "Service"}: {resource: "services", paths: []workv1.JsonPath{
		path(IngressIP, ".status.loadBalancer.ingress[0].ip"),
		path(IngressHostname, ".status.loadBalancer.ingress[0].hostname"),
		path(ServiceType, ".spec.type"),
	}},
}

// Interpreted reports whether the manager interprets the manifest's kind itself. A Service is interpreted
// only when it is of type LoadBalancer: other Services are healthy once they exist.
func Interpreted(m template.Manifest) bool {
	_, ok := rules[m.GVK.GroupKind()]
	if ok && m.GVK.GroupKind() == (schema.GroupKind{Kind: "Service"}) {
		t, _, _ := unstructured.NestedString(m.Object.Object, "spec", "type")
		return t == "LoadBalancer"
	}
	return ok
}

// ManifestConfigs returns the user's manifestConfigs with what the built-in kinds need added (see
// Interpreters.ManifestConfigs).
func ManifestConfigs(manifests []template.Manifest, user []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	return (*Interpreters)(nil).ManifestConfigs(manifests, user)
}

// ManifestConfigs returns the user's manifestConfigs with what the manager needs of each manifest's kind
// added: the feedback rules its interpreter reads and the template marker (see Marked), named with
// FeedbackPrefix, and, for fields its interpreter retains, a server-side apply that leaves them as the cluster
// changed them. The agent takes the feedback rules
// of the first entry that matches a resource and has any (see match.go), so it finds the user's rules for the
// manifest followed by the manager's: the rule goes to the entry the agent would pick when it is the user's
// entry for exactly that resource; when a wildcard entry would be picked, a new entry for the resource, with
// that entry's rules and the manager's, goes before it; otherwise the rule goes to the user's entry for
// exactly that resource, or to a new entry at the end. What else the agent takes from the user's entries
// (condition rules, update strategy, scrape type) stays as it was: a user's update strategy for the resource
// wins over retained fields. The user's slice is not modified.
func (s *Interpreters) ManifestConfigs(manifests []template.Manifest, user []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	out := make([]workv1.ManifestConfigOption, 0, len(user)+len(manifests))
	for i := range user {
		out = append(out, *user[i].DeepCopy())
	}
	for _, m := range manifests {
		k := s.For(m.GVK)
		id := resourceOf(m)
		var paths []workv1.JsonPath
		if k != nil {
			paths = k.FeedbackPaths(m)
		}
		if s.Marked(m, user) {
			paths = append(slices.Clip(paths), templateHashPath)
		}
		if len(paths) > 0 {
			prefixed := make([]workv1.JsonPath, len(paths))
			for i, p := range paths {
				prefixed[i] = workv1.JsonPath{Name: FeedbackPrefix + p.Name, Path: p.Path}
			}
			out = withFeedbackRule(out, id, workv1.FeedbackRule{Type: workv1.JSONPathsType, JsonPaths: prefixed})
		}
		if k == nil {
			continue
		}
		if retain := k.Retain(); len(retain) > 0 {
			out = withRetainedFields(out, id, retain)
		}
	}
	return out
}

// withRetainedFields asks the agent to apply the resource server-side and to leave the retained fields as the
// cluster changed them (OCM's ignoreFields, OnSpokeChange), unless the user set an update strategy for it.
func withRetainedFields(out []workv1.ManifestConfigOption, id workv1.ResourceIdentifier, paths []string) []workv1.ManifestConfigOption {
	if updateStrategyOf(id, out) != nil {
		return out
	}
	strategy := &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply, ServerSideApply: &workv1.ServerSideApplyConfig{
		IgnoreFields: []workv1.IgnoreField{{Condition: workv1.IgnoreFieldsConditionOnSpokeChange, JSONPaths: slices.Clone(paths)}},
	}}
	for i := range out {
		if out[i].ResourceIdentifier == id {
			out[i].UpdateStrategy = strategy
			return out
		}
	}
	return append(out, workv1.ManifestConfigOption{ResourceIdentifier: id, UpdateStrategy: strategy})
}

func withFeedbackRule(out []workv1.ManifestConfigOption, id workv1.ResourceIdentifier, rule workv1.FeedbackRule) []workv1.ManifestConfigOption {
	picked, exact, last := -1, -1, -1 // the entry the agent takes feedback rules from, the first exact one, the last match
	for i := range out {
		if !matches(out[i].ResourceIdentifier, id) {
			continue
		}
		last = i
		if exact < 0 && out[i].ResourceIdentifier == id {
			exact = i
		}
		if picked < 0 && len(out[i].FeedbackRules) > 0 {
			picked = i
		}
	}
	switch {
	case picked >= 0 && picked == exact, picked < 0 && exact >= 0:
		out[exact].FeedbackRules = append(out[exact].FeedbackRules, rule)
	case picked < 0:
		// The agent takes the scrape type of the last matching entry: keep it.
		entry := workv1.ManifestConfigOption{ResourceIdentifier: id, FeedbackRules: []workv1.FeedbackRule{rule}}
		if last >= 0 {
			entry.FeedbackScrapeType = out[last].FeedbackScrapeType
		}
		out = append(out, entry)
	default: // a wildcard entry would be picked
		rules := append(deepCopyRules(out[picked].FeedbackRules), rule)
		if exact >= 0 && exact < picked {
			out[exact].FeedbackRules = rules
			break
		}
		out = slices.Insert(out, picked, workv1.ManifestConfigOption{ResourceIdentifier: id, FeedbackRules: rules})
	}
	return out
}

func deepCopyRules(in []workv1.FeedbackRule) []workv1.FeedbackRule {
	out := make([]workv1.FeedbackRule, len(in), len(in)+1)
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
