package bundle

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// scopes tells cluster-scoped kinds from namespaced ones.
type scopes struct {
	groupKinds map[schema.GroupKind]bool
	// kinds holds the kinds of Options.ClusterScoped given without a group: any group matches.
	kinds map[string]bool
}

// newScopes gathers, beside Kubernetes' own cluster-scoped kinds (template.BuiltinClusterScoped), the extra ones given (Kind or Kind.group) and those that
// the CustomResourceDefinitions among objs define with scope Cluster.
func newScopes(extra []string, objs []*unstructured.Unstructured) (scopes, error) {
	s := scopes{groupKinds: map[schema.GroupKind]bool{}, kinds: map[string]bool{}}
	for _, e := range extra {
		e = strings.TrimSpace(e)
		kind, group, _ := strings.Cut(e, ".")
		if kind == "" || strings.ContainsAny(e, "/ ") {
			return scopes{}, fmt.Errorf("cluster-scoped kind %q: give a kind, as Kind or Kind.group (ClusterIssuer.cert-manager.io)", e)
		}
		if group == "" {
			s.kinds[kind] = true
		} else {
			s.groupKinds[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			continue
		}
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		if scope == "Cluster" && kind != "" {
			s.groupKinds[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return s, nil
}

func (s scopes) clusterScoped(gk schema.GroupKind) bool {
	return template.BuiltinClusterScoped(gk) || s.groupKinds[gk] || s.kinds[gk.Kind]
}
