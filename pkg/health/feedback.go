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
	"strings"

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
	return workv1.JsonPath{Name: FeedbackPrefix + name, Path: p}
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

// identifier is the manifestConfigs resource identifier of a manifest of an interpreted kind.
func identifier(m template.Manifest) workv1.ResourceIdentifier {
	return workv1.ResourceIdentifier{
		Group:     m.GVK.Group,
		Resource:  rules[m.GVK.GroupKind()].resource,
		Name:      m.Object.GetName(),
		Namespace: m.Object.GetNamespace(),
	}
}

// ManifestConfigs returns the user's manifestConfigs with the feedback rules the manager needs added: to the
// user's entry for the same resource when there is one, keeping all of the user's rules, otherwise as a new
// entry. The user's slice is not modified.
func ManifestConfigs(manifests []template.Manifest, user []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	out := make([]workv1.ManifestConfigOption, 0, len(user)+len(manifests))
	for i := range user {
		out = append(out, *user[i].DeepCopy())
	}
	for _, m := range manifests {
		if !Interpreted(m) {
			continue
		}
		id := identifier(m)
		rule := workv1.FeedbackRule{Type: workv1.JSONPathsType, JsonPaths: rules[m.GVK.GroupKind()].paths}
		merged := false
		for i := range out {
			if sameResource(out[i].ResourceIdentifier, id) {
				out[i].FeedbackRules = append(out[i].FeedbackRules, rule)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, workv1.ManifestConfigOption{ResourceIdentifier: id, FeedbackRules: []workv1.FeedbackRule{rule}})
		}
	}
	return out
}

func sameResource(a, b workv1.ResourceIdentifier) bool {
	return a.Group == b.Group && strings.EqualFold(a.Resource, b.Resource) && a.Name == b.Name && a.Namespace == b.Namespace
}
