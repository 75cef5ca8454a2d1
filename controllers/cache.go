package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// CacheOptions restricts the manager's ManifestWork and ControllerRevision caches to the objects
// PlacementManifestWorks own, so memory follows this manager's works, not every ManifestWork on the hub, and drops what the manager never reads from
// a cached object: managedFields (about a tenth of the cache at thousands of clusters), a work's manifests,
// which can reach hundreds of KiB per work (whether a work needs writing is decided by its spec-hash
// annotation, and a write always carries the whole desired spec), and all of a ManagedCluster but its labels,
// conditions and ClusterClaims. Updates of cached objects keep the API server's managedFields: an object without them
// leaves them as they are.
func CacheOptions() cache.Options {
	owned, err := labels.NewRequirement(workv1alpha1.LabelPlacementManifestWork, selection.Exists, nil)
	if err != nil {
		panic(err) // the key is a constant; an error here is a programming error
	}
	stripManagedFields := cache.TransformStripManagedFields()
	byObject := map[client.Object]cache.ByObject{
		// The manager reads a ManagedCluster's labels, its Available condition and its ClusterClaims (which
		// overrides select by and read: a few short name/value pairs), nothing of its spec (client configs with
		// CA bundles) or the rest of its status (capacity, allocatable, versions).
		&clusterv1.ManagedCluster{}: {
			Transform: func(o any) (any, error) {
				if mc, ok := o.(*clusterv1.ManagedCluster); ok {
					mc.Spec = clusterv1.ManagedClusterSpec{}
					mc.Status = clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions, ClusterClaims: mc.Status.ClusterClaims}
				}
				return stripManagedFields(o)
			},
		},
		// The PlacementManifestWorks' own ControllerRevisions, not the StatefulSets' and DaemonSets' of the hub,
		// without their data (a copy of the template each): the manager compares names and numbers only, and
		// patches what it changes (the data is immutable).
		&appsv1.ControllerRevision{}: {
			Label: labels.NewSelector().Add(*owned),
			Transform: func(o any) (any, error) {
				if cr, ok := o.(*appsv1.ControllerRevision); ok {
					cr.Data = runtime.RawExtension{}
				}
				return stripManagedFields(o)
			},
		},
		&workv1.ManifestWork{}: {
			Label: labels.NewSelector().Add(*owned),
			Transform: func(o any) (any, error) {
				if w, ok := o.(*workv1.ManifestWork); ok {
					w.Spec.Workload.Manifests = nil
				}
				return stripManagedFields(o)
			},
		},
	}
	// The ConfigMaps, Secrets and ServiceAccounts PMWs may carry along are watched as metadata only
	// (setup.go), which is still a list of every one of them on the hub: only what maps an event to its
	// PlacementManifestWorks is kept.
	for _, kind := range webhook.DependencyKinds { // the kinds a ResourceInterpreter's dependencies may name
		byObject[&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}] = cache.ByObject{
			Transform: keepIdentity(stripManagedFields),
		}
	}
	return cache.Options{DefaultTransform: stripManagedFields, ByObject: byObject}
}

// keepIdentity keeps of an object's metadata its name, namespace, UID and resourceVersion: not its labels and
// annotations, which for an object written with kubectl apply hold a copy of all of it (a Secret's data
// included), nor managedFields. Other objects of the same kind (none: the manager reads them from the API
// server) only lose their managedFields.
func keepIdentity(other toolscache.TransformFunc) toolscache.TransformFunc {
	return func(o any) (any, error) {
		m, ok := o.(*metav1.PartialObjectMetadata)
		if !ok {
			return other(o)
		}
		m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
		return m, nil
	}
}
