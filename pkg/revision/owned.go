package revision

import (
	"encoding/json"
	"errors"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// ErrUnusable is a ControllerRevision that is not the PlacementManifestWork's or whose data does not decode.
var ErrUnusable = errors.New("the ControllerRevision is not this PlacementManifestWork's or its data does not decode")

// Labels select the ControllerRevisions of pmw; a label anyone can set, so OwnedBy decides.
func Labels(pmw *workv1alpha1.PlacementManifestWork) map[string]string {
	return map[string]string{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw))}
}

// OwnedBy reports whether cr is pmw's: pmw, by UID, is its controller.
func OwnedBy(cr *appsv1.ControllerRevision, pmw *workv1alpha1.PlacementManifestWork) bool {
	ref := metav1.GetControllerOf(cr)
	return ref != nil && ref.UID == pmw.UID
}

// Owned are the ControllerRevisions of list that pmw owns, ordered by revision number (then name).
func Owned(list []appsv1.ControllerRevision, pmw *workv1alpha1.PlacementManifestWork) []*appsv1.ControllerRevision {
	var out []*appsv1.ControllerRevision
	for i := range list {
		if OwnedBy(&list[i], pmw) {
			out = append(out, &list[i])
		}
	}
	slices.SortFunc(out, func(a, b *appsv1.ControllerRevision) int {
		if a.Revision != b.Revision {
			if a.Revision < b.Revision {
				return -1
			}
			return 1
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Spec decodes the data of pmw's ControllerRevision cr (Data): ErrUnusable when cr is not pmw's or its data
// does not decode into a spec the manager can use.
func Spec(cr *appsv1.ControllerRevision, pmw *workv1alpha1.PlacementManifestWork) (*workv1alpha1.PlacementManifestWorkSpec, error) {
	if !OwnedBy(cr, pmw) {
		return nil, ErrUnusable
	}
	spec := &workv1alpha1.PlacementManifestWorkSpec{}
	if err := json.Unmarshal(cr.Data.Raw, spec); err != nil || len(spec.DecodeProblems()) > 0 {
		return nil, ErrUnusable
	}
	return spec, nil
}
