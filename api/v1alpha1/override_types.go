package v1alpha1

import (
	"bytes"
	"encoding/json"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of spec.overrides. The list's own markers (listType=map keyed by name, MaxItems) go on the field that
// holds it; these constants are the same numbers for the code that checks them again.
const (
	// MaxOverrides is how many overrides one PlacementManifestWork may have.
	MaxOverrides = 32
	// MaxOverridePatches is how many patches one override may have.
	MaxOverridePatches = 32
	// MaxOverrideFailedClusters is how many clusters an OverrideStatus names.
	MaxOverrideFailedClusters = 10
)

// ClusterOverride changes the manifests that some clusters get: after the split, in list order (a later
// override wins), each override that selects a cluster applies its image rewrite and then its patches to the
// manifests it selects. A cluster's overridden manifests are part of its desired ManifestWork, so a change of
// an override, or of a cluster's labels or claims, reaches the clusters it affects as a template change,
// governed by the rollout strategy. An override cannot change a manifest's apiVersion, kind, name or namespace,
// nor a split field (the split sets those). An override that fails on one cluster (a path that is not in that
// manifest, an expression that fails for that cluster) leaves that cluster's ManifestWork as it was and is
// reported in status.overrides; the other clusters are not held back.
// +kubebuilder:validation:XValidation:rule="(has(self.patches) && size(self.patches) > 0) || has(self.image)",message="an override must change something: set patches or image"
type ClusterOverride struct {
	// name identifies the override in status.overrides and in messages: lowercase letters, digits and '-',
	// unique within the list.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// clusters selects the clusters the override applies to: a cluster must match every part that is set
	// (names, labelSelector and claimSelector). Unset or empty: every decided cluster.
	// +optional
	Clusters *OverrideClusters `json:"clusters,omitempty"`

	// manifests selects the manifests of the template the override changes: a manifest is selected when it
	// matches any entry. Unset or empty: every manifest.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Manifests []OverrideManifest `json:"manifests,omitempty"`

	// image rewrites the image of every container and init container of the selected manifests' pod specs:
	// spec of a Pod, and spec.template.spec and spec.jobTemplate.spec.template.spec of any other kind
	// (Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, and custom workloads shaped like
	// them, such as Argo Rollouts and OpenKruise CloneSets). A selected manifest without containers (a
	// ConfigMap, a Service) is left as it is; the manager refuses (InvalidOverride) an image that finds no
	// container in any manifest it selects, or whose manifests entries name a manifest whose containers sit
	// elsewhere (patch those). Applied before patches.
	// +optional
	Image *ImageOverride `json:"image,omitempty"`

	// patches are RFC 6902 JSON Patch operations (add, replace and remove) applied in order to each selected
	// manifest. As in RFC 6902, the parent of the target must exist (add /metadata/annotations as an object
	// before adding to it), and replace and remove need the target to exist: a path that is missing in a
	// manifest fails the override for the clusters that get that manifest.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Patches []OverridePatch `json:"patches,omitempty"`
}

// OverrideClusters selects ManagedClusters. Every part that is set must match.
type OverrideClusters struct {
	// names are ManagedCluster names; the cluster must be one of them.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	Names []string `json:"names,omitempty"`

	// labelSelector must match the ManagedCluster's labels (for example region or cloud).
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// claimSelector must match the ManagedCluster's ClusterClaims (status.clusterClaims, by claim name), as
	// if they were labels: for example platform.open-cluster-management.io In [AWS, GCP].
	// +optional
	ClaimSelector *metav1.LabelSelector `json:"claimSelector,omitempty"`
}

// OverrideManifest selects manifests of the template. Fields left empty match any manifest.
type OverrideManifest struct {
	// name of the manifest (metadata.name).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// namespace of the manifest (metadata.namespace).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// group of the manifest's apiVersion (apps for apps/v1); empty matches any group, the core group too.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// kind of the manifest, such as Deployment.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`
}

// OverridePatchOp is the operation of a patch.
// +kubebuilder:validation:Enum=add;replace;remove
type OverridePatchOp string

const (
	// OverridePatchAdd adds a value: a member of an object (replacing one that is there) or an item of a list
	// (at an index, or at the end with "-").
	OverridePatchAdd OverridePatchOp = "add"
	// OverridePatchReplace replaces a value that must exist.
	OverridePatchReplace OverridePatchOp = "replace"
	// OverridePatchRemove removes a value that must exist.
	OverridePatchRemove OverridePatchOp = "remove"
)

// OverridePatch is one RFC 6902 JSON Patch operation. add and replace take a value or an expression (exactly
// one); remove takes neither.
// +kubebuilder:validation:XValidation:rule="self.op != 'remove' || !has(self.expression)",message="a remove patch takes no expression (nor value)"
type OverridePatch struct {
	// op is add, replace or remove.
	// +required
	Op OverridePatchOp `json:"op"`

	// path is the RFC 6901 JSON Pointer of the target, such as /spec/template/spec/containers/0/env/- or
	// /metadata/labels/app.kubernetes.io~1part-of ('~1' stands for '/' and '~0' for '~' inside a key). It
	// cannot touch /apiVersion, /kind, /metadata (as a whole), /metadata/name or /metadata/namespace.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(/([^/~]|~[01])*)+$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^/(apiVersion|kind)(/.*)?$') && !self.matches('^/metadata(/(name|namespace)(/.*)?)?$')",message="path cannot touch /apiVersion, /kind, /metadata, /metadata/name or /metadata/namespace: an override cannot change which object a manifest is"
	Path string `json:"path"`

	// value is the JSON value add or replace writes: a string, a number, a boolean, an object or a list. The
	// API server drops value: null (the PMW is then Stalled with InvalidOverride, no value), so write
	// expression: 'null' to write null. Exactly one of value and expression is set for add and replace (checked
	// by the manager, as the API server's CEL cannot see a field of any type).
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:XPreserveUnknownFields
	Value *JSON `json:"value,omitempty"`

	// expression is a CEL expression that computes the value for each cluster, over cluster.name,
	// cluster.labels, cluster.claims (ClusterClaims by name) and cluster.shares (the cluster's split shares,
	// keyed "<Kind>.<group> <namespace>/<name> <field path>"). It returns a JSON value: a string, a number, a
	// boolean, null, a list or a map with string keys. For example
	// "registry-" + cluster.labels["region"] + ".example.com/web:1.2".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression,omitempty"`
}

// ImageOverride rewrites parts of container images: registry, repository and tag, each a literal or a CEL
// expression (see OverrideValue). The image mirror.example.com:5000/team/web:1.2@sha256:... has the registry
// mirror.example.com:5000, the repository team/web, the tag 1.2 and a digest. Changing the registry or the
// repository keeps the tag and the digest (a mirror serves the same content); changing the tag removes the
// digest, which would otherwise still pin the old image. An image without a registry (nginx:1.25) is read as
// written: setting its registry gives mirror.example.com/nginx:1.25.
// +kubebuilder:validation:XValidation:rule="has(self.registry) || has(self.repository) || has(self.tag)",message="image must set at least one of registry, repository and tag"
// +kubebuilder:validation:XValidation:rule="!has(self.registry) || !has(self.registry.value) || self.registry.value.matches('^(localhost|[a-zA-Z0-9-]+([.][a-zA-Z0-9-]+)+|[a-zA-Z0-9-]+([.][a-zA-Z0-9-]+)*:[0-9]+)(/[a-z0-9]+(([._]|__|[-]+)[a-z0-9]+)*)*$')",message="image.registry.value must be a registry host with a dot or a port, or localhost (mirror.example.com, registry:5000), optionally followed by a path (mirror.example.com/docker-hub)",fieldPath=".registry.value"
// +kubebuilder:validation:XValidation:rule="!has(self.repository) || !has(self.repository.value) || self.repository.value.matches('^[a-z0-9]+(([._]|__|[-]+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|[-]+)[a-z0-9]+)*)*$')",message="image.repository.value must be a repository path such as team/web (lowercase letters, digits, '.', '_', '-' and '/')",fieldPath=".repository.value"
// +kubebuilder:validation:XValidation:rule="!has(self.tag) || !has(self.tag.value) || self.tag.value.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$')",message="image.tag.value must be a tag such as 1.2.3 (letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-')",fieldPath=".tag.value"
type ImageOverride struct {
	// registry replaces the registry host (and port), for example with a regional mirror. It may carry a path
	// that is put in front of the repository: mirror.example.com/docker-hub turns nginx:1.25 into
	// mirror.example.com/docker-hub/nginx:1.25.
	// +optional
	Registry *OverrideValue `json:"registry,omitempty"`

	// repository replaces the repository path (the image's name without registry, tag and digest).
	// +optional
	Repository *OverrideValue `json:"repository,omitempty"`

	// tag replaces the tag, and removes the digest.
	// +optional
	Tag *OverrideValue `json:"tag,omitempty"`
}

// OverrideValue is a string given literally or computed per cluster by a CEL expression. Set exactly one.
// +kubebuilder:validation:XValidation:rule="has(self.value) != has(self.expression)",message="set exactly one of value and expression"
type OverrideValue struct {
	// value is the string itself.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Value string `json:"value,omitempty"`

	// expression is a CEL expression over cluster.name, cluster.labels, cluster.claims and cluster.shares
	// that returns the string, for example cluster.labels["region"] + ".mirror.example.com".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Expression string `json:"expression,omitempty"`
}

// JSON is any JSON value (a string, a number, a boolean, null, an object or a list), kept as its encoding. It
// is apiextensions.k8s.io's JSON, without importing the apiextensions API into this package. A field of this
// type needs the markers +kubebuilder:validation:Schemaless and +kubebuilder:validation:XPreserveUnknownFields
// so that its schema is x-kubernetes-preserve-unknown-fields without a type.
type JSON struct {
	// Raw is the value's JSON encoding.
	Raw []byte `json:"-"`
}

// MarshalJSON writes the value as it was read; an empty value is null.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) > 0 {
		return j.Raw, nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON keeps the value's encoding.
func (j *JSON) UnmarshalJSON(data []byte) error {
	if j == nil {
		return errors.New("v1alpha1.JSON: UnmarshalJSON on a nil pointer")
	}
	if !json.Valid(data) {
		return errors.New("v1alpha1.JSON: not JSON")
	}
	j.Raw = append(j.Raw[:0], bytes.TrimSpace(data)...)
	return nil
}

// OverrideStatus counts, for one override, the decided clusters it selects by outcome.
type OverrideStatus struct {
	// name of the override.
	Name string `json:"name"`
	// clusters is the number of clusters whose desired ManifestWork carries the override.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	Clusters int32 `json:"clusters"`
	// failed is the number of clusters where the override cannot be applied (a path missing in a manifest, an
	// expression that fails for the cluster, a result that would change a manifest's identity or split field):
	// their ManifestWorks are kept as they were.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	Failed int32 `json:"failed,omitempty"`
	// failedClusters names, sorted, at most 10 of the clusters where the override failed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	FailedClusters []string `json:"failedClusters,omitempty"`
	// message says why the override failed on the first of failedClusters, and what to fix.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}
