package bundle

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// builtinClusterScoped are the cluster-scoped kinds of Kubernetes itself. Custom kinds are cluster-scoped when
// a CustomResourceDefinition among the manifests says so, or when Options.ClusterScoped names them.
var builtinClusterScoped = []schema.GroupKind{
	{Kind: "Namespace"},
	{Kind: "Node"},
	{Kind: "PersistentVolume"},
	{Kind: "ComponentStatus"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Group: "storage.k8s.io", Kind: "StorageClass"},
	{Group: "storage.k8s.io", Kind: "CSIDriver"},
	{Group: "storage.k8s.io", Kind: "CSINode"},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"},
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	{Group: "networking.k8s.io", Kind: "IngressClass"},
	{Group: "networking.k8s.io", Kind: "IPAddress"},
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"},
	{Group: "node.k8s.io", Kind: "RuntimeClass"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"},
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"},
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"},
	{Group: "resource.k8s.io", Kind: "DeviceClass"},
	{Group: "resource.k8s.io", Kind: "ResourceSlice"},
}

// scopes tells cluster-scoped kinds from namespaced ones.
type scopes struct {
	groupKinds map[schema.GroupKind]bool
	// kinds holds the kinds of Options.ClusterScoped given without a group: any group matches.
	kinds map[string]bool
}

// newScopes gathers the built-in cluster-scoped kinds, the extra ones given (Kind or Kind.group) and those that
// the CustomResourceDefinitions among objs define with scope Cluster.
func newScopes(extra []string, objs []*unstructured.Unstructured) (scopes, error) {
	s := scopes{groupKinds: map[schema.GroupKind]bool{}, kinds: map[string]bool{}}
	for _, gk := range builtinClusterScoped {
		s.groupKinds[gk] = true
	}
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
	return s.groupKinds[gk] || s.kinds[gk.Kind]
}
