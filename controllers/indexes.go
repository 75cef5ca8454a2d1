package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// Field index keys on PlacementManifestWorks and ManagedClusters; those that mirror a label are labelindex's.
const (
	// IndexPlacement indexes a PlacementManifestWork by the name of the Placement it uses.
	IndexPlacement = "placementManifestWork.placement"
	// IndexScoreResource indexes a PlacementManifestWork by the AddOnPlacementScore names its Score splits read.
	IndexScoreResource = "placementManifestWork.scoreResource"
	// IndexClusterLabels indexes, under "true", the PlacementManifestWorks that read their clusters' labels or
	// claims (Weighted splits that select clusters by label, overrides: readsClusterFacts), so a ManagedCluster's
	// label or claim change reaches them.
	IndexClusterLabels = "placementManifestWork.clusterLabels"
	// IndexTemplateKind indexes a PlacementManifestWork by the group/kind of each manifest of its template, so a
	// ResourceInterpreter's change reaches the PlacementManifestWorks with manifests of its kind.
	IndexTemplateKind = "placementManifestWork.templateKind"
	// IndexPropagatesDependencies indexes, under "true", the PlacementManifestWorks that carry their manifests'
	// dependencies along (spec.propagateDependencies), so a change of a ConfigMap, Secret or ServiceAccount
	// reaches those of its namespace.
	IndexPropagatesDependencies = "placementManifestWork.propagatesDependencies"
	// IndexUnavailable indexes, under "true", the ManagedClusters that are not available, so a reconcile reads
	// those instead of every cluster of the hub.
	IndexUnavailable = "managedCluster.unavailable"
)

func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexTemplateKind, templateKinds); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by the kinds of their manifests: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexPlacement, func(o client.Object) []string {
		return []string{o.(*workv1alpha1.PlacementManifestWork).PlacementName()}
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by placement: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexScoreResource, func(o client.Object) []string {
		var out []string
		for _, s := range o.(*workv1alpha1.PlacementManifestWork).Spec.DistributionStrategy {
			if s.Split != nil && s.Split.Type == workv1alpha1.SplitScore && s.Split.Score != nil {
				out = append(out, s.Split.Score.ResourceName)
			}
		}
		return out
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by score: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexClusterLabels, func(o client.Object) []string {
		if readsClusterFacts(o.(*workv1alpha1.PlacementManifestWork)) {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by cluster labels: %w", err)
	}
	if err := idx.IndexField(ctx, &workv1alpha1.PlacementManifestWork{}, IndexPropagatesDependencies, func(o client.Object) []string {
		if o.(*workv1alpha1.PlacementManifestWork).Spec.PropagateDependencies {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing PlacementManifestWorks by propagateDependencies: %w", err)
	}
	if err := idx.IndexField(ctx, &clusterv1.ManagedCluster{}, IndexUnavailable, func(o client.Object) []string {
		if health.ManagedClusterUnavailable(o.(*clusterv1.ManagedCluster)) != "" {
			return []string{"true"}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing ManagedClusters by availability: %w", err)
	}
	// The works, revisions and decisions by the labels a reconcile finds them by.
	return labelindex.Setup(ctx, idx)
}

// templateKinds are the group/kind keys (templateKindKey) of a PlacementManifestWork's manifests; a manifest
// that does not decode has none.
func templateKinds(o client.Object) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range o.(*workv1alpha1.PlacementManifestWork).Spec.ManifestWorkTemplate.Workload.Manifests {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(m.Raw, &head); err != nil || head.Kind == "" {
			continue
		}
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			continue
		}
		if key := templateKindKey(gv.Group, head.Kind); !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}

// templateKindKey is the IndexTemplateKind key of a group and kind.
func templateKindKey(group, kind string) string { return kind + "." + group }
