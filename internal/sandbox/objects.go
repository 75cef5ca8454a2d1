package sandbox

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
)

const (
	// ClusterSetName is the ManagedClusterSet every sandbox cluster joins.
	ClusterSetName = "sandbox"
	// SampleNamespace is the namespace of the samples; the clusterset is bound to it.
	SampleNamespace = "default"
	// HubNamespace is where the placement controller records its events, as on a real hub.
	HubNamespace = "open-cluster-management-hub"

	// LabelRegion and LabelEnvironment give Placements something to select on.
	LabelRegion      = "region"
	LabelEnvironment = "environment"
	// labelClusterName is the label OCM's registration controller puts on every ManagedCluster.
	labelClusterName = "name"
)

var (
	regions      = []string{"us-east", "eu-west", "ap-south"}
	environments = []string{"production", "staging"}
)

// ClusterNames are the names of n sandbox clusters: cluster1..clusterN.
func ClusterNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cluster%d", i+1)
	}
	return out
}

// ClusterLabels are the labels of the i-th (0-based) sandbox cluster: regions and environments round-robin, so
// any number of clusters spreads over all of them.
func ClusterLabels(name string, i int) map[string]string {
	return map[string]string{
		clusterv1beta2.ClusterSetLabel: ClusterSetName,
		labelClusterName:               name,
		LabelRegion:                    regions[i%len(regions)],
		LabelEnvironment:               environments[i%len(environments)],
	}
}

// ManagedCluster is a ManagedCluster as it stands once the registration agent has joined it and the hub has
// accepted it. Its status is written separately (the status subresource ignores it on create).
func ManagedCluster(name string, i int) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: ClusterLabels(name, i)},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
}

// ManagedClusterStatus is what the registration agent and controller report for a healthy cluster: joined,
// accepted and available (the placement controller only schedules onto available clusters), with some
// capacity so the resource-based prioritizers have something to compare.
func ManagedClusterStatus(now metav1.Time) clusterv1.ManagedClusterStatus {
	cond := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: now}
	}
	res := clusterv1.ResourceList{
		clusterv1.ResourceCPU:    resource.MustParse("8"),
		clusterv1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return clusterv1.ManagedClusterStatus{
		Conditions: []metav1.Condition{
			cond(clusterv1.ManagedClusterConditionHubAccepted, "HubClusterAdminAccepted", "Accepted by the sandbox"),
			cond(clusterv1.ManagedClusterConditionJoined, "ManagedClusterJoined", "Simulated by the sandbox"),
			cond(clusterv1.ManagedClusterConditionAvailable, "ManagedClusterAvailable", "Simulated by the sandbox"),
		},
		Capacity:    res,
		Allocatable: res,
		Version:     clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"},
	}
}

// Namespace is a namespace; every cluster has one on the hub, named after it, for its ManifestWorks.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// ClusterSet is the ManagedClusterSet of the sandbox clusters, selected by the exclusive clusterset label.
func ClusterSet() *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterSetName},
		Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
		},
	}
}

// ClusterSetBinding binds the clusterset to namespace; OCM requires the binding's name to be the set's.
func ClusterSetBinding(namespace string) *clusterv1beta2.ManagedClusterSetBinding {
	return &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterSetName, Namespace: namespace},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: ClusterSetName},
	}
}

// BoundCondition is the status OCM's registration controller writes on a binding whose set exists; the
// placement controller ignores bindings without it.
func BoundCondition(now metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue,
		Reason: "ClusterSetBound", Message: "Bound by the sandbox", LastTransitionTime: now,
	}
}
