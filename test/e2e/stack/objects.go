//go:build e2e

package stack

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

const (
	// ClusterSet is the ManagedClusterSet every spoke joins.
	ClusterSet = "e2e"
	// BoundNamespace is the hub namespace bound to ClusterSet at start, for poking at the stack by hand.
	BoundNamespace = "default"
	// HubNamespace is where the placement controller records events, as on a real hub.
	HubNamespace = "open-cluster-management-hub"
	// AgentNamespace is the work agents' own namespace on each spoke (events, and the readiness canary).
	AgentNamespace = "open-cluster-management-agent"
	// ScoreAddOn is the addon name the spokes' score agents answer to: they measure the
	// AddOnPlacementScoreGenerators of their cluster's namespace whose spec.addOnPlacementSelector.name is this.
	ScoreAddOn = "score-agent"

	// kwokNodeAnnotation marks the Nodes kwok manages (its --manage-nodes-with-annotation-selector).
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// canaryName names the objects Start uses to check the placement controller and every work agent.
	canaryName = "e2e-canary"
)

// HubScheme has every type the stack and the tests read on the hub: the manager's, ManagedClusterSets and
// AddOnPlacementScoreGenerators.
func HubScheme() *runtime.Scheme {
	s := ocmsim.WithClusterSets(controllers.Scheme())
	if err := scoresv1alpha1.AddToScheme(s); err != nil {
		panic(err) // adding static types cannot fail at run time
	}
	return s
}

// kwokNode is a fake Node for kwok to run pods on. kwok fills in its status (Ready, capacity) and keeps its
// lease; without a taint, the scheduler puts every pod there.
func kwokNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Annotations: map[string]string{kwokNodeAnnotation: "fake"},
		Labels:      map[string]string{"type": "kwok", corev1.LabelHostname: name, corev1.LabelOSStable: "linux"},
	}}
}

// canaryPlacement selects every cluster of the set bound to namespace.
func canaryPlacement(namespace string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: canaryName, Namespace: namespace},
		Spec:       clusterv1beta1.PlacementSpec{ClusterSets: []string{ClusterSet}},
	}
}

// canaryWork puts a ConfigMap in the agent's namespace of one spoke.
func canaryWork(cluster string) (*workv1.ManifestWork, error) {
	raw, err := json.Marshal(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: canaryName, Namespace: AgentNamespace},
		Data:       map[string]string{"cluster": cluster},
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the canary ConfigMap: %w", err)
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: canaryName, Namespace: cluster},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
			Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
		}},
	}, nil
}
