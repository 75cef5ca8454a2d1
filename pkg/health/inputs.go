package health

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Inputs prepares, once per template, what Manifest needs of each manifest except its status and its
// per-cluster replicas and share: the condition types of the user's condition rules for it, found as the agent
// finds them for the resource guessed from its kind (Manifest finds them again, rarely, when the agent reports
// another resource for it).
func Inputs(manifests []template.Manifest, userConfigs []workv1.ManifestConfigOption) []ManifestInput {
	return (*Interpreters)(nil).Inputs(manifests, userConfigs)
}

// Inputs is Inputs with each manifest interpreted by its kind's interpreter in s.
func (s *Interpreters) Inputs(manifests []template.Manifest, userConfigs []workv1.ManifestConfigOption) []ManifestInput {
	out := make([]ManifestInput, len(manifests))
	for i, m := range manifests {
		id := resourceOf(m)
		out[i] = ManifestInput{Manifest: m, ConditionRules: conditionRuleTypes(id, m.GVK, userConfigs), Kind: s.For(m.GVK)}
		if len(userConfigs) > 0 {
			out[i].match = &ruleMatch{resource: id, gvk: m.GVK, configs: userConfigs}
		}
	}
	return out
}

// WorkManifests returns what Manifest needs of each manifest a work carries, from the agent's report of the
// work alone, for a cluster judged against the manifests its work carries rather than the current template's
// (a progressive rollout holds it on an earlier template). The hub's cache holds no work's manifests, so each
// manifest is known by the ResourceMeta the agent reports for it (group, version, kind, resource, name,
// namespace); Manifest then takes the replicas it asks for from its SpecReplicas feedback and a Service's type
// from its ServiceType feedback (FromWork). Condition rules are the work's own spec.manifestConfigs, which the
// cache keeps: they are what the agent evaluates on that work, not the current template's.
//
// The result is indexed by the work's ordinals, as Cluster matches statuses to inputs: pass it as
// ClusterInput.Manifests with the same work. A manifest missing from the report is NotReported. Replicas and
// Share are left unset for the caller to fill in.
func WorkManifests(w *workv1.ManifestWork) []ManifestInput {
	return (*Interpreters)(nil).WorkManifests(w)
}

// WorkManifests is WorkManifests with each manifest interpreted by its kind's interpreter in s.
func (s *Interpreters) WorkManifests(w *workv1.ManifestWork) []ManifestInput {
	reported := w.Status.ResourceStatus.Manifests
	out := make([]ManifestInput, len(reported))
	for i := range out {
		out[i] = ManifestInput{Manifest: reportedManifest(workv1.ManifestResourceMeta{Ordinal: int32(i)}), FromWork: true}
	}
	for i := range reported {
		rm := reported[i].ResourceMeta
		// The agent reports every manifest once, at ordinals 0 to n-1: anything else is a report with a hole,
		// whose missing manifest stays NotReported.
		if rm.Ordinal < 0 || int(rm.Ordinal) >= len(out) {
			continue
		}
		m := reportedManifest(rm)
		id, ok := reportedResource(rm)
		if !ok {
			id = resourceOf(m)
		}
		out[rm.Ordinal] = ManifestInput{Manifest: m, ConditionRules: conditionRuleTypes(id, m.GVK, w.Spec.ManifestConfigs), FromWork: true, Kind: s.For(m.GVK)}
	}
	return out
}

// reportedManifest stands in for a manifest known only by its ResourceMeta: an object with its apiVersion, kind,
// name and namespace, so that it reads as the manifest in messages. A report without a kind or a name (a
// manifest the agent could not decode) reads "Manifest #<ordinal>".
func reportedManifest(rm workv1.ManifestResourceMeta) template.Manifest {
	gvk := schema.GroupVersionKind{Group: rm.Group, Version: rm.Version, Kind: rm.Kind}
	name := rm.Name
	if gvk.Kind == "" || name == "" {
		gvk.Kind, name = "Manifest", "#"+strconv.Itoa(int(rm.Ordinal))
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(gvk)
	obj.SetName(name)
	obj.SetNamespace(rm.Namespace)
	return template.Manifest{Index: int(rm.Ordinal), Object: obj, GVK: gvk}
}
