package sandbox

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// seedClusters writes what OCM's registration would have written for joined clusters: the clusterset, its
// bindings to the given namespaces, and per cluster its ManagedCluster and namespace, with the status the
// registration controller and agents would report.
func seedClusters(ctx context.Context, c client.Client, names, bound []string) error {
	now := metav1.Now()
	for _, ns := range append(append([]string{HubNamespace}, bound...), names...) {
		if err := create(ctx, c, Namespace(ns)); err != nil {
			return err
		}
	}
	if err := create(ctx, c, ClusterSet()); err != nil {
		return err
	}
	for _, ns := range bound {
		binding := ClusterSetBinding(ns)
		if err := create(ctx, c, binding); err != nil {
			return err
		}
		meta.SetStatusCondition(&binding.Status.Conditions, BoundCondition(now))
		if err := c.Status().Update(ctx, binding); err != nil {
			return fmt.Errorf("marking ManagedClusterSetBinding %s/%s bound: %w", ns, binding.Name, err)
		}
	}
	for i, name := range names {
		mc := ManagedCluster(name, i)
		if err := create(ctx, c, mc); err != nil {
			return err
		}
		mc.Status = ManagedClusterStatus(now)
		if err := c.Status().Update(ctx, mc); err != nil {
			return fmt.Errorf("marking ManagedCluster %s available: %w", name, err)
		}
	}
	return nil
}

func create(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}
