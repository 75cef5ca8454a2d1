package fleet

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// OptInSpec is where the workloads of an opted-in namespace go.
type OptInSpec struct {
	// Placement names the Placement the namespace's PlacementManifestWork refers to, in the hub namespace named
	// like the fleet namespace: the one workv1alpha1.LabelFleetPlacement names, or workv1alpha1.FleetGeneratedName. Empty: not opted in.
	Placement string
	// Generated is the spec of the Placement to generate, named workv1alpha1.FleetGeneratedName and labelled workv1alpha1.LabelFleetGenerated, from
	// workv1alpha1.AnnotationFleetClusterSelector (and workv1alpha1.AnnotationFleetNumberOfClusters); nil when the namespace names a Placement of its
	// own.
	Generated *clusterv1beta1.PlacementSpec
}

// OptedIn reports whether the namespace's workloads go to the fleet.
func (s OptInSpec) OptedIn() bool { return s.Placement != "" }

// OptIn reads where a fleet API server's namespace sends its workloads: a Placement it names with
// workv1alpha1.LabelFleetPlacement, or one generated from the label selector of ManagedClusters in workv1alpha1.AnnotationFleetClusterSelector
// (requiredClusterSelector.labelSelector, and numberOfClusters from workv1alpha1.AnnotationFleetNumberOfClusters). Neither: not
// opted in, no error. Both, a value that is not a Placement name, a selector that does not parse, or a number
// of clusters without a selector or out of range: an error that says what to fix; the caller should leave what
// it already delivered as it is rather than take it for an opt-out.
func OptIn(ns *corev1.Namespace) (OptInSpec, error) {
	if ns == nil {
		return OptInSpec{}, nil
	}
	name, named := ns.Labels[workv1alpha1.LabelFleetPlacement]
	selector, selects := ns.Annotations[workv1alpha1.AnnotationFleetClusterSelector]
	number, numbered := ns.Annotations[workv1alpha1.AnnotationFleetNumberOfClusters]
	switch {
	case named && selects:
		return OptInSpec{}, fmt.Errorf("namespace %q has both the %s label and the %s annotation: keep one, the Placement to use or the "+
			"clusters to select", ns.Name, workv1alpha1.LabelFleetPlacement, workv1alpha1.AnnotationFleetClusterSelector)
	case numbered && !selects:
		return OptInSpec{}, fmt.Errorf("namespace %q: the %s annotation only applies with %s (a Placement's own spec.numberOfClusters "+
			"applies to it); remove it, or give a cluster selector", ns.Name, workv1alpha1.AnnotationFleetNumberOfClusters, workv1alpha1.AnnotationFleetClusterSelector)
	case named:
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || len(name) > 63 {
			return OptInSpec{}, fmt.Errorf("namespace %q: the %s label is %q, not the name of a Placement (lower case letters, digits, '-' "+
				"and '.', at most 63 characters)", ns.Name, workv1alpha1.LabelFleetPlacement, name)
		}
		return OptInSpec{Placement: name}, nil
	case !selects:
		return OptInSpec{}, nil
	}
	sel, err := metav1.ParseToLabelSelector(selector)
	if err != nil {
		return OptInSpec{}, fmt.Errorf("namespace %q: the %s annotation %q is not a label selector: %v; write one as kubectl -l takes it, "+
			"such as \"env=prod,region in (eu-1,eu-2)\"", ns.Name, workv1alpha1.AnnotationFleetClusterSelector, selector, err)
	}
	// Empty lists and maps as nil, as the API server would return them.
	if len(sel.MatchLabels) == 0 {
		sel.MatchLabels = nil
	}
	if len(sel.MatchExpressions) == 0 {
		sel.MatchExpressions = nil
	}
	for i := range sel.MatchExpressions {
		if len(sel.MatchExpressions[i].Values) == 0 {
			sel.MatchExpressions[i].Values = nil
		}
	}
	spec := &clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: *sel}},
	}}
	if numbered {
		n, err := strconv.ParseInt(strings.TrimSpace(number), 10, 32)
		if err != nil || n < 0 {
			return OptInSpec{}, fmt.Errorf("namespace %q: the %s annotation %q is not a number of clusters: give a whole number from 0 "+
				"to 2147483647", ns.Name, workv1alpha1.AnnotationFleetNumberOfClusters, number)
		}
		n32 := int32(n)
		spec.NumberOfClusters = &n32
	}
	return OptInSpec{Placement: workv1alpha1.FleetGeneratedName, Generated: spec}, nil
}
