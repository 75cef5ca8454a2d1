package manifestwork

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
)

const (
	// AnnotationShares records the split shares a ManifestWork carries, as JSON keyed by the planner's split
	// key, so the next division can keep them stable without decoding the manifests.
	AnnotationShares = "work.open-cluster-management.io/placementmanifestwork-shares"
	// AnnotationUpdatedAt is when the manager last changed the work's spec: the start of that cluster's
	// rollout step, from which progressDeadline is counted.
	AnnotationUpdatedAt = "work.open-cluster-management.io/placementmanifestwork-updated-at"
	// AnnotationLeavingSince is when the work's cluster left the decisions; the work is kept until the joining
	// clusters are available or the move timeout passes (make before break).
	AnnotationLeavingSince = "work.open-cluster-management.io/placementmanifestwork-leaving-since"
)

// stateAnnotations are the manager's annotations that come and go with the desired state: one that the
// desired work lacks must be removed from the existing one.
var stateAnnotations = []string{
	AnnotationShares, AnnotationLeavingSince, failover.AnnotationUnhealthySince, failover.AnnotationHealthySince,
}

// Owner is the namespaced name of a PlacementManifestWork.
func Owner(pmw *workv1alpha1.PlacementManifestWork) types.NamespacedName {
	return types.NamespacedName{Namespace: pmw.Namespace, Name: pmw.Name}
}

// Build returns the ManifestWork pmw wants in cluster's namespace: the template's spec with the given
// manifests and manifestConfigs, labelled and annotated as pmw's.
func Build(pmw *workv1alpha1.PlacementManifestWork, cluster string, manifests []workv1.Manifest, configs []workv1.ManifestConfigOption, shares map[string]int32) (*workv1.ManifestWork, error) {
	spec := workv1.ManifestWorkSpec{
		Workload:        workv1.ManifestsTemplate{Manifests: manifests},
		DeleteOption:    pmw.Spec.ManifestWorkTemplate.DeleteOption.DeepCopy(),
		ManifestConfigs: configs,
		Executor:        pmw.Spec.ManifestWorkTemplate.Executor.DeepCopy(),
	}
	hash, err := SpecHash(&spec)
	if err != nil {
		return nil, err
	}
	owner := Owner(pmw)
	annotations := map[string]string{
		AnnotationOwner:    owner.String(),
		AnnotationOwnerUID: string(pmw.UID),
		AnnotationSpecHash: hash,
	}
	if len(shares) > 0 {
		b, err := json.Marshal(shares)
		if err != nil {
			return nil, fmt.Errorf("encoding shares: %w", err)
		}
		annotations[AnnotationShares] = string(b)
	}
	return &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        WorkName(owner),
			Namespace:   cluster,
			Labels:      map[string]string{LabelPlacementManifestWork: OwnerLabelValue(owner)},
			Annotations: annotations,
		},
		Spec: spec,
	}, nil
}

// SpecHash hashes a ManifestWork spec as the manager writes it. Comparing hashes, not specs, keeps the API
// server's defaulting of the spec from looking like a difference.
func SpecHash(spec *workv1.ManifestWorkSpec) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing ManifestWork spec: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// Shares decodes the shares annotation of a ManifestWork; a missing or unreadable one is empty.
func Shares(work *workv1.ManifestWork) map[string]int32 {
	v, ok := work.Annotations[AnnotationShares]
	if !ok {
		return nil
	}
	out := map[string]int32{}
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil
	}
	return out
}

// IsOwnedBy reports whether work belongs to pmw: it carries pmw's label, owner annotation and UID.
func IsOwnedBy(work *workv1.ManifestWork, pmw *workv1alpha1.PlacementManifestWork) bool {
	owner := Owner(pmw)
	return work.Labels[LabelPlacementManifestWork] == OwnerLabelValue(owner) &&
		work.Annotations[AnnotationOwner] == owner.String() &&
		work.Annotations[AnnotationOwnerUID] == string(pmw.UID)
}

// OwnerOf returns the PlacementManifestWork a ManifestWork names as its owner.
func OwnerOf(work metav1.Object) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(work.GetAnnotations()[AnnotationOwner], "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// UpToDate reports whether existing already carries what desired wants: the same spec hash, labels and
// state annotations.
func UpToDate(existing, desired *workv1.ManifestWork) bool {
	for k, v := range desired.Labels {
		if existing.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.Annotations {
		if existing.Annotations[k] != v {
			return false
		}
	}
	for _, k := range stateAnnotations {
		if _, want := desired.Annotations[k]; !want {
			if _, has := existing.Annotations[k]; has {
				return false
			}
		}
	}
	return true
}

// Merge returns a copy of existing that carries desired's spec, labels and annotations, keeping everything
// else (the agent's finalizers, other annotations) and dropping the state annotations desired lacks.
func Merge(existing, desired *workv1.ManifestWork) *workv1.ManifestWork {
	out := existing.DeepCopy()
	out.Spec = *desired.Spec.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for k, v := range desired.Labels {
		out.Labels[k] = v
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	for _, k := range stateAnnotations {
		delete(out.Annotations, k)
	}
	for k, v := range desired.Annotations {
		out.Annotations[k] = v
	}
	return out
}
