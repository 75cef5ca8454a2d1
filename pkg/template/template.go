// Package template reads the manifests of a PlacementManifestWork's template: it identifies each manifest,
// matches distributionStrategy entries to them, and reads and writes the integer field a Split divides.
package template

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// Manifest is one manifest of the template, decoded.
type Manifest struct {
	// Index is the manifest's position in the template.
	Index int
	// Object is the decoded manifest.
	Object *unstructured.Unstructured
	// GVK is the manifest's group, version and kind.
	GVK schema.GroupVersionKind
	// Dependency is true for a ConfigMap, Secret or ServiceAccount the manager delivers because a manifest
	// references it (spec.propagateDependencies), after the template's manifests; false for the template's.
	Dependency bool
}

// ID names the manifest for messages: "<kind>.<group> <namespace>/<name>".
func (m Manifest) ID() string {
	kind := m.GVK.Kind
	if m.GVK.Group != "" {
		kind += "." + m.GVK.Group
	}
	if ns := m.Object.GetNamespace(); ns != "" {
		return kind + " " + ns + "/" + m.Object.GetName()
	}
	return kind + " " + m.Object.GetName()
}

// Parse decodes every manifest of the template. A manifest that is not a Kubernetes object with apiVersion,
// kind and metadata.name is an error that names its position.
func Parse(manifests []workv1.Manifest) ([]Manifest, error) {
	out := make([]Manifest, 0, len(manifests))
	for i, m := range manifests {
		raw := m.Raw
		if len(raw) == 0 && m.Object != nil {
			var err error
			if raw, err = json.Marshal(m.Object); err != nil {
				return nil, fmt.Errorf("manifest %d: %w", i, err)
			}
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("manifest %d is not a Kubernetes object: %w", i, err)
		}
		gvk := obj.GroupVersionKind()
		if gvk.Version == "" || gvk.Kind == "" {
			return nil, fmt.Errorf("manifest %d has no apiVersion or kind", i)
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("manifest %d (%s) has no metadata.name", i, gvk.Kind)
		}
		out = append(out, Manifest{Index: i, Object: obj, GVK: gvk})
	}
	return out, nil
}

// Matches reports whether a distributionStrategy entry picks the manifest: name and namespace equal, and group
// and kind equal where the entry sets them.
func Matches(s workv1alpha1.DistributionStrategy, m Manifest) bool {
	return s.Name == m.Object.GetName() &&
		s.Namespace == m.Object.GetNamespace() &&
		(s.Kind == "" || s.Kind == m.GVK.Kind) &&
		(s.Group == "" || s.Group == m.GVK.Group)
}

// StrategyProblem is a distributionStrategy entry that matches no manifest, or more than one.
type StrategyProblem struct {
	Entry   int
	Reason  string
	Message string
}

// MatchStrategies returns, per manifest index, the distributionStrategy entry that applies to it, and the
// entries that match no manifest or several. An ambiguous entry applies to none of the manifests it matches,
// so they stay replicated, the safe default.
func MatchStrategies(manifests []Manifest, strategies []workv1alpha1.DistributionStrategy) (map[int]*workv1alpha1.DistributionStrategy, []StrategyProblem) {
	byManifest := map[int]*workv1alpha1.DistributionStrategy{}
	var problems []StrategyProblem
	for i := range strategies {
		s := &strategies[i]
		var matched []Manifest
		for _, m := range manifests {
			if Matches(*s, m) {
				matched = append(matched, m)
			}
		}
		switch len(matched) {
		case 0:
			problems = append(problems, StrategyProblem{Entry: i, Reason: workv1alpha1.ReasonStrategyMatchesNoManifest,
				Message: fmt.Sprintf("distributionStrategy[%d] (%s) matches no manifest of the template", i, describe(*s))})
		case 1:
			byManifest[matched[0].Index] = s
		default:
			ids := make([]string, 0, len(matched))
			for _, m := range matched {
				ids = append(ids, m.ID())
			}
			problems = append(problems, StrategyProblem{Entry: i, Reason: workv1alpha1.ReasonStrategyMatchesManyManifests,
				Message: fmt.Sprintf("distributionStrategy[%d] (%s) matches %d manifests (%s): set group and kind to pick one; they are replicated",
					i, describe(*s), len(matched), strings.Join(ids, ", "))})
		}
	}
	return byManifest, problems
}

func describe(s workv1alpha1.DistributionStrategy) string {
	var b strings.Builder
	if s.Kind != "" {
		b.WriteString(s.Kind)
		if s.Group != "" {
			b.WriteString("." + s.Group)
		}
		b.WriteString(" ")
	}
	if s.Namespace != "" {
		b.WriteString(s.Namespace + "/")
	}
	b.WriteString(s.Name)
	return b.String()
}
