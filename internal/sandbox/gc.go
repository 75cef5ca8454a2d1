package sandbox

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// garbageKinds are the kinds whose owners the hub's controllers delete while the sandbox runs: a generated
// Placement's PlacementDecisions (transparent mode deletes the Placement it generated when a namespace opts
// out; OCM's placement controller waits for the old decisions to go before it decides for a new Placement of
// the same name) and a PlacementManifestWork's ControllerRevisions.
var garbageKinds = []schema.GroupVersionKind{
	{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Kind: "PlacementDecision"},
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"},
}

// gcInterval is how often collectGarbage looks.
const gcInterval = 2 * time.Second

// collectGarbage plays, for garbageKinds, the part of kube-controller-manager's garbage collector, which the
// sandbox's hub does not run (it runs no kube-controller-manager at all, so that it can serve as a fleet API
// server): every interval, it deletes the objects whose owners are all gone, as the collector's background
// deletion would. It returns when ctx ends.
func collectGarbage(ctx context.Context, c client.Client, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, gvk := range garbageKinds {
				if err := collectKind(ctx, c, gvk); err != nil && ctx.Err() == nil {
					ctrl.LoggerFrom(ctx).Error(err, "Collecting garbage", "kind", gvk.Kind)
				}
			}
		}
	}
}

// collectKind deletes the objects of one kind whose every owner is gone (or was replaced by another object of
// the same name).
func collectKind(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		o := &list.Items[i]
		owners := o.GetOwnerReferences()
		if len(owners) == 0 || o.GetDeletionTimestamp() != nil {
			continue
		}
		orphan := true
		for _, ref := range owners {
			gone, err := ownerGone(ctx, c, o.GetNamespace(), ref)
			if err != nil {
				return err
			}
			if !gone {
				orphan = false
				break
			}
		}
		if !orphan {
			continue
		}
		uid := o.GetUID()
		err := c.Delete(ctx, o, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Garbage-collected an object whose owner is gone", "kind", gvk.Kind,
			"namespace", o.GetNamespace(), "name", o.GetName())
	}
	return nil
}

// ownerGone says whether the owner a reference names no longer exists: not found, or found with another uid.
func ownerGone(ctx context.Context, c client.Client, namespace string, ref metav1.OwnerReference) (bool, error) {
	owner := &unstructured.Unstructured{}
	owner.SetAPIVersion(ref.APIVersion)
	owner.SetKind(ref.Kind)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, owner)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil // a kind the hub does not serve: not ours to judge
	case err != nil:
		return false, err
	}
	return owner.GetUID() != ref.UID, nil
}
