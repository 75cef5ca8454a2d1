package controllers

import (
	"context"
	"fmt"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex/labelindextest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// TestReconcileReadsThroughIndexes checks that a reconcile finds its works, revisions and decisions through the
// field indexes that mirror their labels, not a label selector: the manager's cache matches a selector against
// every object of the type, so each reconcile of one of 2,500 PMWs of 20 works read all 50,000 works on the hub.
// The client refuses a label selector, as a stand-in for that cost, and the lists must still find exactly the
// PMW's own objects among another PMW's.
func TestReconcileReadsThroughIndexes(t *testing.T) {
	ctx := context.Background()
	mine, theirs := indexedPMW("mine", "uid-mine"), indexedPMW("theirs", "uid-theirs")
	var objs []client.Object
	for _, p := range []*workv1alpha1.PlacementManifestWork{mine, theirs} {
		objs = append(objs, p, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.PlacementName()}})
		for _, cluster := range []string{"c1", "c2"} {
			objs = append(objs, workOwnedBy(p, cluster))
		}
		objs = append(objs,
			&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.PlacementName() + "-1",
				Labels: map[string]string{clusterv1beta1.PlacementLabel: p.PlacementName()}}},
			&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "-rev",
				Labels:          map[string]string{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnershipOf(p).LabelValue()},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1alpha1", Kind: "PlacementManifestWork", Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}}})
	}
	// Mine's label on a work of someone else: found by the index, left out by ownership.
	foreign := workOwnedBy(mine, "c3")
	foreign.Annotations[workv1alpha1.AnnotationOwnerUID] = "someone-else"
	objs = append(objs, foreign)

	c := labelindextest.NoLabelSelectors(Scheme(), objs...)
	r := &PlacementManifestWorkReconciler{Client: c}

	owned, err := r.ownedWorks(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	var clusters []string
	for cluster := range owned {
		clusters = append(clusters, cluster)
	}
	sort.Strings(clusters)
	if fmt.Sprint(clusters) != "[c1 c2]" {
		t.Errorf("owned works on %v, want [c1 c2]", clusters)
	}

	revisions, err := r.ownedRevisions(ctx, mine)
	if err != nil {
		t.Fatal(err)
	}
	if len(revisions) != 1 || revisions[0].Name != "mine-rev" {
		t.Errorf("revisions %v, want [mine-rev]", revisions)
	}

	obs := &observation{inputs: inputs{placementName: mine.PlacementName()}}
	if err := r.resolvePlacement(ctx, mine, obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.decisions) != 1 || obs.decisions[0].Name != mine.PlacementName()+"-1" {
		t.Errorf("decisions %v, want [%s-1]", obs.decisions, mine.PlacementName())
	}
}

func indexedPMW(name string, uid types.UID) *workv1alpha1.PlacementManifestWork {
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
		Spec:       workv1alpha1.PlacementManifestWorkSpec{PlacementRef: &workv1alpha1.LocalPlacementReference{Name: "placement-" + name}},
	}
}

// workOwnedBy is a work of p on cluster, carrying p's ownership as the manager writes it.
func workOwnedBy(p *workv1alpha1.PlacementManifestWork, cluster string) *workv1.ManifestWork {
	owner := manifestwork.Owner(p)
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: manifestwork.WorkName(owner),
		Labels: map[string]string{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(owner)},
		Annotations: map[string]string{workv1alpha1.AnnotationOwner: owner.String(),
			workv1alpha1.AnnotationOwnerUID: string(p.UID)}}}
}
