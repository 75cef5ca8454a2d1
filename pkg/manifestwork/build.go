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
)

// stateAnnotations are the manager's annotations that come and go with the desired state: one that the
// desired work lacks must be removed from the existing one.
var stateAnnotations = []string{workv1alpha1.AnnotationShares}

// legacyAnnotations were written by earlier versions and are no longer read; a write drops them.
var legacyAnnotations = []string{
	"work.open-cluster-management.io/placementmanifestwork-unhealthy-since",
	"work.open-cluster-management.io/placementmanifestwork-healthy-since",
}

// Owner is the namespaced name of a PlacementManifestWork.
func Owner(pmw *workv1alpha1.PlacementManifestWork) types.NamespacedName {
	return types.NamespacedName{Namespace: pmw.Namespace, Name: pmw.Name}
}

// Builder builds the ManifestWorks of one PlacementManifestWork. What every cluster's work shares (the
// template's deleteOption, executor and the manifestConfigs) is encoded once, so building thousands of works
// costs little more than hashing their manifests.
type Builder struct {
	pmw     *workv1alpha1.PlacementManifestWork
	configs []workv1.ManifestConfigOption
	// name, label and ownerKey are the works' name, owner label value and owner annotation, the same on every
	// cluster (WorkName hashes the owner: once per builder, not per work).
	name, label, ownerKey string
	// common is the JSON of the spec without its manifests: the first part of every spec hash.
	common []byte
	// templateHash is the hash of common and the template's own manifests, before any split.
	templateHash string
}

// NewBuilder prepares the works of pmw, which all carry the given manifestConfigs.
func NewBuilder(pmw *workv1alpha1.PlacementManifestWork, configs []workv1.ManifestConfigOption) (*Builder, error) {
	common, err := json.Marshal(workv1.ManifestWorkSpec{
		DeleteOption:    pmw.Spec.ManifestWorkTemplate.DeleteOption,
		ManifestConfigs: configs,
		Executor:        pmw.Spec.ManifestWorkTemplate.Executor,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the ManifestWork spec: %w", err)
	}
	owner := Owner(pmw)
	b := &Builder{pmw: pmw, configs: configs, common: common,
		name: WorkName(owner), label: OwnerLabelValue(owner), ownerKey: owner.String()}
	b.templateHash = b.hash(pmw.Spec.ManifestWorkTemplate.Workload.Manifests)
	return b, nil
}

// TemplateHash is the value of workv1alpha1.AnnotationTemplateHash on every work that carries the current template.
func (b *Builder) TemplateHash() string { return b.templateHash }

// ClusterTemplateHash is the template hash of a cluster whose manifests differ from the template's by more than
// the split shares (overrides): base, the PlacementManifestWork's template hash, combined with parts that say
// how the cluster's manifests differ.
func ClusterTemplateHash(base string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(base))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// CarriesTemplate reports whether a work carries the template whose hash is given.
func CarriesTemplate(w *workv1.ManifestWork, templateHash string) bool {
	return w != nil && w.Annotations[workv1alpha1.AnnotationTemplateHash] == templateHash
}

// Build returns the ManifestWork wanted in cluster's namespace: the template's spec with the given manifests,
// labelled and annotated as the PlacementManifestWork's.
func (b *Builder) Build(cluster string, manifests []workv1.Manifest, shares map[string]int32) (*workv1.ManifestWork, error) {
	annotations := map[string]string{
		workv1alpha1.AnnotationOwner:        b.ownerKey,
		workv1alpha1.AnnotationOwnerUID:     string(b.pmw.UID),
		workv1alpha1.AnnotationSpecHash:     b.hash(manifests),
		workv1alpha1.AnnotationTemplateHash: b.templateHash,
	}
	if len(shares) > 0 {
		enc, err := json.Marshal(shares)
		if err != nil {
			return nil, fmt.Errorf("encoding shares: %w", err)
		}
		annotations[workv1alpha1.AnnotationShares] = string(enc)
	}
	return &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        b.name,
			Namespace:   cluster,
			Labels:      map[string]string{workv1alpha1.LabelPlacementManifestWork: b.label},
			Annotations: annotations,
		},
		Spec: workv1.ManifestWorkSpec{
			Workload:        workv1.ManifestsTemplate{Manifests: manifests},
			DeleteOption:    b.pmw.Spec.ManifestWorkTemplate.DeleteOption.DeepCopy(),
			ManifestConfigs: b.configs,
			Executor:        b.pmw.Spec.ManifestWorkTemplate.Executor.DeepCopy(),
		},
	}, nil
}

// hash is the spec hash of a work with these manifests. Comparing hashes, not specs, keeps the API server's
// defaulting of the spec from looking like a difference.
func (b *Builder) hash(manifests []workv1.Manifest) string {
	h := sha256.New()
	h.Write(b.common)
	for _, m := range manifests {
		h.Write([]byte{0})
		h.Write(m.Raw)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Shares decodes the shares annotation of a ManifestWork; a missing or unreadable one is empty.
func Shares(work *workv1.ManifestWork) map[string]int32 {
	v, ok := work.Annotations[workv1alpha1.AnnotationShares]
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
	return OwnershipOf(pmw).Owns(work)
}

// Ownership is what a work of one PlacementManifestWork carries to be its own, computed once for many works
// (the label value is hashed when long).
type Ownership struct {
	label, owner, uid string
}

// OwnershipOf returns pmw's Ownership.
func OwnershipOf(pmw *workv1alpha1.PlacementManifestWork) Ownership {
	owner := Owner(pmw)
	return Ownership{label: OwnerLabelValue(owner), owner: owner.String(), uid: string(pmw.UID)}
}

// Labels select the works of o's PlacementManifestWork; a label anyone can set, so Owns decides.
func (o Ownership) Labels() map[string]string {
	return map[string]string{workv1alpha1.LabelPlacementManifestWork: o.label}
}

// LabelValue is the value of o's LabelPlacementManifestWork label.
func (o Ownership) LabelValue() string { return o.label }

// Owns reports whether work carries the label, owner annotation and UID of o's PlacementManifestWork.
func (o Ownership) Owns(work *workv1.ManifestWork) bool {
	return work.Labels[workv1alpha1.LabelPlacementManifestWork] == o.label &&
		work.Annotations[workv1alpha1.AnnotationOwner] == o.owner &&
		work.Annotations[workv1alpha1.AnnotationOwnerUID] == o.uid
}

// OwnerOf returns the PlacementManifestWork a ManifestWork names as its owner.
func OwnerOf(work metav1.Object) (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(work.GetAnnotations()[workv1alpha1.AnnotationOwner], "/")
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
	for _, k := range legacyAnnotations {
		delete(out.Annotations, k)
	}
	for k, v := range desired.Annotations {
		out.Annotations[k] = v
	}
	return out
}
