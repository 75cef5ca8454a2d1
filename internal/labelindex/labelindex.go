// Package labelindex finds the hub's objects by a label through a field index that mirrors the label. The cache
// of controller-runtime answers a label selector by matching it against every cached object of the type: with
// 2,500 PlacementManifestWorks of 20 works each, every reconcile that selected its works by label read all
// 50,000 works on the hub. An index looks them up.
package labelindex

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// Field index keys, one per label the manager finds objects by.
const (
	// Owner indexes ManifestWorks and ControllerRevisions by their LabelPlacementManifestWork value.
	Owner = "placementManifestWork.ownerLabel"
	// Placement indexes PlacementDecisions by their Placement's label.
	Placement = "placementDecision.placement"
)

// indexOf is the field index that mirrors each label.
var indexOf = map[string]string{
	workv1alpha1.LabelPlacementManifestWork: Owner,
	clusterv1beta1.PlacementLabel:           Placement,
}

// An Index mirrors Label on objects of Obj's type.
type Index struct {
	Obj   client.Object
	Label string
}

// Name is the index's field key.
func (i Index) Name() string { return indexOf[i.Label] }

// Indexes are the types listed by label, and the label of each.
var Indexes = []Index{
	{&workv1.ManifestWork{}, workv1alpha1.LabelPlacementManifestWork},
	{&appsv1.ControllerRevision{}, workv1alpha1.LabelPlacementManifestWork},
	{&clusterv1beta1.PlacementDecision{}, clusterv1beta1.PlacementLabel},
}

// ByLabel indexes an object by the value of its label key.
func ByLabel(key string) client.IndexerFunc {
	return func(o client.Object) []string {
		if v, ok := o.GetLabels()[key]; ok {
			return []string{v}
		}
		return nil
	}
}

// registered are the field indexers Setup has registered the indexes on.
var registered sync.Map

// Setup registers the indexes on idx, once: the PlacementManifestWork and the fleet controllers both list by
// label and share the manager's cache, which refuses an index registered twice.
func Setup(ctx context.Context, idx client.FieldIndexer) error {
	if _, done := registered.LoadOrStore(idx, true); done {
		return nil
	}
	for _, i := range Indexes {
		if err := idx.IndexField(ctx, i.Obj, i.Name(), ByLabel(i.Label)); err != nil {
			return fmt.Errorf("indexing %T by label %s: %w", i.Obj, i.Label, err)
		}
	}
	return nil
}

// List lists into list the objects whose label has value, through the index that mirrors the label (Setup
// registers it on the cache the reader reads).
func List(ctx context.Context, reader client.Reader, list client.ObjectList, label, value string, opts ...client.ListOption) error {
	index, ok := indexOf[label]
	if !ok {
		return fmt.Errorf("no field index mirrors label %s", label)
	}
	return reader.List(ctx, list, append(opts, client.MatchingFields{index: value})...)
}
