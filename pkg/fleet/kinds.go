package fleet

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// splitKinds are split by default: "the user asked for 6 replicas, the fleet runs 6". Their replica field is
// .spec.replicas, which the API server defaults to 1.
var splitKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
}

// unsupportedKinds are namespaced kinds whose objects cannot work unchanged on the clusters, with why and
// what to do instead. The list is short on purpose: everything else is delivered, and its limits (a
// PersistentVolumeClaim's data does not move, a Service's load balancer is per cluster) are documented rather
// than refused.
var unsupportedKinds = map[schema.GroupKind]string{
	{Kind: "Pod"}: "a bare Pod has no controller on the clusters to split, move or replace it; " +
		"run it from a Deployment (or a Job for a task that ends)",
	{Kind: "Event"}:                         eventReason,
	{Group: "events.k8s.io", Kind: "Event"}: eventReason,
	{Group: "coordination.k8s.io", Kind: "Lease"}: "a Lease coordinates the processes of one cluster (leader election); " +
		"a copy on every cluster would be a stale claim that no one renews",
	{Kind: "Endpoints"}: endpointsReason,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointsReason,
	{Group: "apps", Kind: "ControllerRevision"}: "a ControllerRevision is a controller's record of a workload's history; " +
		"each cluster's controllers keep their own",
}

const (
	eventReason     = "an Event records what happened on the fleet API server; each cluster records its own"
	endpointsReason = "endpoints are made on each cluster from its own pods by its controllers, which a copy would fight; " +
		"for addresses outside the clusters use a Service of type ExternalName"
	tokenReason = "a service-account-token Secret holds a token that only the API server that minted it accepts; " +
		"each cluster mints its own: mount a projected token (the default) or request one with kubectl create token"
)

// unsupportedReason says why o cannot work unchanged on the clusters, "" when it can.
func unsupportedReason(o *unstructured.Unstructured) string {
	gk := o.GroupVersionKind().GroupKind()
	if why, ok := unsupportedKinds[gk]; ok {
		return why
	}
	if gk == (schema.GroupKind{Kind: "Secret"}) {
		if t, _, _ := unstructured.NestedString(o.Object, "type"); t == "kubernetes.io/service-account-token" {
			return tokenReason
		}
	}
	return ""
}

// clusterScopedKinds are Kubernetes' own cluster-scoped kinds: a namespace cannot own them, and delivering
// one from a namespace would let the namespace's users change every cluster (a StorageClass, a ClusterRole).
// Objects of a namespace are never of these kinds; the list catches a caller that passes them anyway.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
}
