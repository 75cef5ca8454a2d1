// Package v1alpha1 contains the AddOnPlacementScoreGenerator API: what a score-producing addon measures on
// each managed cluster to fill that cluster's AddOnPlacementScore. Its kind joins OCM's
// cluster.open-cluster-management.io group, beside AddOnPlacementScore, as the design seed proposes; this
// project defines it, OCM does not ship it. It imports only apimachinery so that agents can vendor it cheaply.
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the AddOnPlacementScoreGenerator API: OCM's cluster group, in
	// which AddOnPlacementScore lives too.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1alpha1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a scheme. A scheme may hold OCM's cluster/v1alpha1 types as well:
	// the kinds differ.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &AddOnPlacementScoreGenerator{}, &AddOnPlacementScoreGeneratorList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
