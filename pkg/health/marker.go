package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The template marker tells feedback that describes the object a work's template made from feedback read
// before the agent applied it. OCM's agent (v1.2.0) reads feedback in a controller of its own, which runs when
// the work changes and waits only for *an* Applied condition, of any generation: when it runs before the apply,
// it reports the object as it was, with the work's new generation on its Available condition, and the old
// object's counts (all replicas updated and available) pass for the new template's until its next read. So the
// manager stamps the work's template hash (workv1alpha1.AnnotationTemplateHash) on each object it judges by
// what the agent reads of it, asks for that annotation back as feedback, and trusts the rest of that read only
// when it carries the work's hash: the annotation changes with every template, so the object always changes
// with it, and a read that has it was made after the apply.

// TemplateHash is the feedback value (named without FeedbackPrefix) of the template marker. Its hyphen keeps
// it apart from every value an interpreter asks for (a ResourceInterpreter's names are identifiers).
const TemplateHash = "template-hash"

// ReasonStaleFeedback is a manifest's reason while the agent's report of it was read before it applied the
// work's template.
const ReasonStaleFeedback = "StaleFeedback"

// templateHashPath reads the marker annotation; the dots of its key are escaped for Kubernetes JSONPath.
var templateHashPath = workv1.JsonPath{
	Name: TemplateHash,
	Path: ".metadata.annotations." + strings.ReplaceAll(workv1alpha1.AnnotationTemplateHash, ".", `\.`),
}

// Marked reports whether the manager stamps the template marker on m: when it judges m by what the agent reads
// of it (its interpreter's feedback, or the user's condition rules for it), unless the agent would not apply
// every template change to it as it is:
//   - the user's update strategy for it is CreateOnly or ReadOnly: the marker would never change;
//   - it is applied server-side with ignored fields (the user's, or fields its interpreter retains): the agent
//     applies the hub's values of those fields again whenever the manifest changes, and the marker would change
//     it on every template change, not only when the hub changes this manifest; ignored annotations would also
//     keep an old marker.
func (s *Interpreters) Marked(m template.Manifest, user []workv1.ManifestConfigOption) bool {
	id := resourceOf(m)
	if strategy := updateStrategyOf(id, user); strategy != nil {
		switch {
		case strategy.Type == workv1.UpdateStrategyTypeCreateOnly, strategy.Type == workv1.UpdateStrategyTypeReadOnly:
			return false
		case strategy.ServerSideApply != nil && len(strategy.ServerSideApply.IgnoreFields) > 0:
			return false
		}
	}
	k := s.For(m.GVK)
	if k != nil && len(k.Retain()) > 0 {
		return false
	}
	if k != nil && len(k.FeedbackPaths(m)) > 0 {
		return true
	}
	return len(conditionRuleTypes(id, m.GVK, user)) > 0
}

// Mark returns a copy of the manifest object obj with the template marker set to hash.
func Mark(obj map[string]any, hash string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	metadata := map[string]any{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		for k, v := range m {
			metadata[k] = v
		}
	}
	annotations := map[string]any{}
	if a, ok := metadata["annotations"].(map[string]any); ok {
		for k, v := range a {
			annotations[k] = v
		}
	}
	annotations[workv1alpha1.AnnotationTemplateHash] = hash
	metadata["annotations"] = annotations
	out["metadata"] = metadata
	return out
}

// updateStrategyOf is the update strategy the agent applies the resource with: the first matching entry's
// that has one (ocm v1.2.0 FindManifestConfiguration); nil for the default, Update.
func updateStrategyOf(id workv1.ResourceIdentifier, configs []workv1.ManifestConfigOption) *workv1.UpdateStrategy {
	for i := range configs {
		if configs[i].UpdateStrategy != nil && matches(configs[i].ResourceIdentifier, id) {
			return configs[i].UpdateStrategy
		}
	}
	return nil
}

// StaleReport reports whether the agent's report of a manifest was read before it applied the template of the
// work whose template hash (workv1alpha1.AnnotationTemplateHash) is given: it carries another template marker.
// A report without one (an object delivered before the manager stamped markers, a manifest it does not mark) is
// taken as it is, and so is a manifest the agent reports Complete: the agent applies it no more (a finished Job
// keeps the marker of the template it ran).
func StaleReport(mc *workv1.ManifestCondition, workTemplateHash string) bool {
	if workTemplateHash == "" || mc == nil || meta.IsStatusConditionTrue(mc.Conditions, workv1.ManifestComplete) {
		return false
	}
	for _, v := range mc.StatusFeedbacks.Values {
		if v.Name == FeedbackPrefix+TemplateHash && v.Value.String != nil {
			return *v.Value.String != workTemplateHash
		}
	}
	return false
}
