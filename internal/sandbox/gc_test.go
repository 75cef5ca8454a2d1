package sandbox

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A PlacementDecision whose Placement was deleted goes, even when a new Placement of the same name exists (as
// after a fleet namespace opts out and in again); one whose Placement is there stays.
func TestCollectGarbage(t *testing.T) {
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "shop", UID: "new"}}
	decision := func(name string, owner types.UID) *clusterv1beta1.PlacementDecision {
		return &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement", Name: "fleet", UID: owner}}}}
	}
	c := fake.NewClientBuilder().WithScheme(Scheme()).
		WithObjects(placement, decision("current", "new"), decision("stale", "old"),
			&clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: "unowned", Namespace: "shop"}}).Build()
	ctx := context.Background()
	for _, gvk := range garbageKinds {
		if err := collectKind(ctx, c, gvk); err != nil {
			t.Fatalf("%s: %v", gvk.Kind, err)
		}
	}
	for name, want := range map[string]bool{"current": true, "stale": false, "unowned": true} {
		err := c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: name}, &clusterv1beta1.PlacementDecision{})
		if got := err == nil; got != want || (err != nil && !apierrors.IsNotFound(err)) {
			t.Errorf("decision %s: exists=%v (%v), want %v", name, got, err, want)
		}
	}
}
