package health

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// This file finds a manifest's manifestConfigs entry as OCM's work agent does (ocm v1.2.0,
// pkg/work/helper/helpers.go FindManifestConfiguration and resourceMatch): the entry's group and resource equal
// the manifest's (exactly: no wildcard, no case folding), its namespace and name equal the manifest's or match
// them with * wildcards, and of the matching entries the first one that has condition rules gives them all,
// the first one that has feedback rules likewise. The manifest's resource is the one the agent reports for it
// (ManifestCondition.ResourceMeta, from the cluster's REST mapping); until it reports one, a guess from the kind.

// wellKnownConditions are the condition rules of type WellKnownConditions that OCM's agent can evaluate (ocm
// v1.2.0 pkg/work/spoke/conditions/rules): for any other kind or condition it sets no condition at all.
var wellKnownConditions = map[schema.GroupVersionKind]string{
	{Group: "batch", Version: "v1", Kind: "Job"}: workv1.ManifestComplete,
	{Version: "v1", Kind: "Pod"}:                 workv1.ManifestComplete,
}

// resourceOf is the manifest's resource identifier with its resource guessed from its kind: the manager's own
// for the kinds it interprets, else meta.UnsafeGuessKindToResource's.
func resourceOf(m template.Manifest) workv1.ResourceIdentifier {
	resource := rules[m.GVK.GroupKind()].resource
	if resource == "" {
		plural, _ := meta.UnsafeGuessKindToResource(m.GVK)
		resource = plural.Resource
	}
	return workv1.ResourceIdentifier{Group: m.GVK.Group, Resource: resource, Name: m.Object.GetName(), Namespace: m.Object.GetNamespace()}
}

// reportedResource is the resource identifier the agent reports for a manifest; ok is false when the agent
// could not map its kind to a resource (and so reports none).
func reportedResource(rm workv1.ManifestResourceMeta) (id workv1.ResourceIdentifier, ok bool) {
	return workv1.ResourceIdentifier{Group: rm.Group, Resource: rm.Resource, Name: rm.Name, Namespace: rm.Namespace}, rm.Resource != ""
}

// matches reports whether a manifestConfigs entry's identifier picks the resource, as the agent decides it.
func matches(entry, resource workv1.ResourceIdentifier) bool {
	return entry.Group == resource.Group && entry.Resource == resource.Resource &&
		wildcardMatch(resource.Namespace, entry.Namespace) && wildcardMatch(resource.Name, entry.Name)
}

// wildcardMatch reports whether value matches pattern, where each * matches any run of characters: the agent's
// regular expression ^pattern$ with * as .*, without compiling one per call.
func wildcardMatch(value, pattern string) bool {
	if value == pattern || pattern == "*" {
		return true
	}
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return false
	}
	first, last := parts[0], parts[len(parts)-1]
	if len(value) < len(first)+len(last) || !strings.HasPrefix(value, first) || !strings.HasSuffix(value, last) {
		return false
	}
	rest := value[len(first) : len(value)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// conditionRuleTypes returns the condition types the agent sets on the resource from the user's condition
// rules: those of the first matching entry that has any, less WellKnownConditions rules the agent has no rule
// for (they set nothing, so waiting for them would be waiting forever).
func conditionRuleTypes(resource workv1.ResourceIdentifier, gvk schema.GroupVersionKind, configs []workv1.ManifestConfigOption) []string {
	for _, c := range configs {
		if len(c.ConditionRules) == 0 || !matches(c.ResourceIdentifier, resource) {
			continue
		}
		var out []string
		for _, r := range c.ConditionRules {
			if r.Condition == "" || (r.Type == workv1.WellKnownConditionsType && wellKnownConditions[gvk] != r.Condition) {
				continue
			}
			out = append(out, r.Condition)
		}
		return out
	}
	return nil
}

// ruleMatch is what Manifest needs to find a manifest's condition rules again when the agent reports a resource
// identifier other than the one Inputs matched with.
type ruleMatch struct {
	resource workv1.ResourceIdentifier
	gvk      schema.GroupVersionKind
	configs  []workv1.ManifestConfigOption
}

// conditionRules are the condition types of the user's rules for the manifest: those Inputs found for the
// guessed resource, unless the agent reports another resource identifier for it (a kind whose plural is not
// the guess, a cluster-scoped object with a namespace in its metadata).
func (in ManifestInput) conditionRules() []string {
	if in.match == nil || in.Status == nil {
		return in.ConditionRules
	}
	if id, ok := reportedResource(in.Status.ResourceMeta); ok && id != in.match.resource {
		return conditionRuleTypes(id, in.match.gvk, in.match.configs)
	}
	return in.ConditionRules
}
