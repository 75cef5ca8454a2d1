package fleet

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex/labelindextest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// TestReadHubThroughIndexes checks that the fleet controller finds the generated PlacementManifestWork's works,
// revisions and decisions through the label indexes, not a label selector, which the cache would match against
// every work on the hub; and that it still finds exactly its own among another PMW's.
func TestReadHubThroughIndexes(t *testing.T) {
	mine, theirs := generatedPMW("mine", "uid-mine"), generatedPMW("theirs", "uid-theirs")
	var objs []client.Object
	for _, p := range []*workv1alpha1.PlacementManifestWork{mine, theirs} {
		owner := manifestwork.Owner(p)
		label := map[string]string{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(owner)}
		objs = append(objs, p,
			&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "-1",
				Labels: map[string]string{clusterv1beta1.PlacementLabel: p.Spec.PlacementRef.Name}},
				Status: clusterv1beta1.PlacementDecisionStatus{Decisions: []clusterv1beta1.ClusterDecision{{ClusterName: "c1"}}}},
			&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "-rev", Labels: label,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1alpha1", Kind: "PlacementManifestWork", Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}}})
		for _, cluster := range []string{"c1", "c2"} {
			objs = append(objs, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: manifestwork.WorkName(owner),
				Labels: label, Annotations: map[string]string{workv1alpha1.AnnotationOwner: owner.String(), workv1alpha1.AnnotationOwnerUID: string(p.UID)}}})
		}
	}
	c := labelindextest.NoLabelSelectors(controllers.Scheme(), objs...)
	r := &Reconciler{Hub: c, HubReader: c}

	v, err := r.readHub(context.Background(), mine)
	if err != nil {
		t.Fatal(err)
	}
	if v.works["c1"] == nil || v.works["c2"] == nil || len(v.works) != 2 {
		t.Errorf("works on %d clusters, want c1 and c2", len(v.works))
	}
	for cluster, w := range v.works {
		if w.Annotations[workv1alpha1.AnnotationOwnerUID] != string(mine.UID) {
			t.Errorf("the work on %s is %s's", cluster, w.Annotations[workv1alpha1.AnnotationOwner])
		}
	}
	if fmt.Sprint(v.clusters, v.leaving) != "[c1] [c2]" {
		t.Errorf("decided %v and leaving %v, want [c1] and [c2]", v.clusters, v.leaving)
	}
	if got := len(r.generations[mine.Namespace]); got != 1 {
		t.Errorf("%d revisions read, want mine-rev only", got)
	}
}

func generatedPMW(name string, uid types.UID) *workv1alpha1.PlacementManifestWork {
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: uid},
		Spec:       workv1alpha1.PlacementManifestWorkSpec{PlacementRef: &workv1alpha1.LocalPlacementReference{Name: "placement-" + name}},
	}
}
