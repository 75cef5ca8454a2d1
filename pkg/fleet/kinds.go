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
