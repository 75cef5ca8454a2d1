// Package v1alpha1 contains the PlacementManifestWork API of the work.open-cluster-management.io group.
// It imports only apimachinery and the OCM API so that clients can vendor it cheaply.
// +kubebuilder:object:generate=true
// +groupName=work.open-cluster-management.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the PlacementManifestWork API.
	GroupVersion = schema.GroupVersion{Group: "work.open-cluster-management.io", Version: "v1alpha1"}

	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API's types to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &PlacementManifestWork{}, &PlacementManifestWorkList{},
		&ResourceInterpreter{}, &ResourceInterpreterList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
