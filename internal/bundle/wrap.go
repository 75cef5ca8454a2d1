package bundle

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// DefaultMaxManifestBytes is OCM's default limit on the total size of one ManifestWork's manifests (its work
// webhook's), as the manager's --max-manifest-bytes default.
const DefaultMaxManifestBytes = 500 * 1024

// InstanceLabel names the application instance (the Helm release) on objects; Wrap takes the
// PlacementManifestWork's name from it when Options.Name is empty.
const InstanceLabel = "app.kubernetes.io/instance"

// Options say what Wrap writes around the manifests.
type Options struct {
	// Name and Namespace are the PlacementManifestWork's. Namespace is also given to the namespaced manifests
	// that have none (as Helm's release namespace is), and is required. When Name is empty it is the value of
	// the app.kubernetes.io/instance label of the manifests, when every manifest that has the label agrees.
	Name, Namespace string
	// Placement is spec.placementRef.name. Empty: no placementRef, and the manager creates a Placement named
	// like the PlacementManifestWork (every cluster of the ManagedClusterSets bound to the namespace).
	Placement string
	// Splits name manifests to split across the clusters, each as Kind/name, Kind.group/name or
	// Kind/namespace/name (Kind.group/namespace/name, too; kinds as kubectl takes them: Deployment, deployment,
	// deployments, deploy). Each becomes a distributionStrategy entry of type Split with Balance and no
	// fieldPath, so the manager divides the kind's replica field (.spec.replicas, a Job's .spec.parallelism, or
	// what the kind's ResourceInterpreter names). A hint that names no manifest, or more than one, is an error.
	Splits []string
	// SplitAllWorkloads splits every Deployment, StatefulSet, ReplicaSet and Job as Splits would, except Helm
	// hooks. A Deployment, StatefulSet or ReplicaSet whose replicas are not set (an autoscaler owns them) is
	// left replicated, with a warning; a Job without parallelism (one pod) is left replicated.
	SplitAllWorkloads bool
	// Rollout is the rolloutStrategy's type: empty (none: the manager's default, All), All, Progressive or
	// ProgressivePerGroup. MaxConcurrency (Progressive only) and MaxFailures are a number of clusters or a
	// percentage; MinSuccessTime and ProgressDeadline durations such as 5m (ProgressDeadline also None). They
	// are checked as the CRD checks them.
	Rollout, MaxConcurrency, MinSuccessTime, ProgressDeadline, MaxFailures string
	// ClusterScoped are cluster-scoped kinds (Kind or Kind.group) besides Kubernetes' own and those that the
	// CustomResourceDefinitions among the manifests define with scope Cluster. Manifests of any other kind are
	// namespaced.
	ClusterScoped []string
	// MaxManifestBytes bounds the total size of the encoded manifests; DefaultMaxManifestBytes (OCM's limit)
	// when 0.
	MaxManifestBytes int
	// Labels and Annotations are put on the PlacementManifestWork.
	Labels, Annotations map[string]string
}

// Warning is something the user should know about one manifest; the output is still written.
type Warning struct {
	// Object names the manifest: "<kind>[.<group>] [<namespace>/]<name>".
	Object string
	// Message says what happens to it and, where it matters, what to do.
	Message string
}

func (w Warning) String() string {
	if w.Object == "" {
		return w.Message
	}
	return w.Object + ": " + w.Message
}

// Wrap builds a PlacementManifestWork that delivers objs, as the package documentation says. objs are not
// modified. The warnings come in the order of the manifests.
func Wrap(objs []*unstructured.Unstructured, opts Options) (*workv1alpha1.PlacementManifestWork, []Warning, error) {
	if opts.Namespace == "" {
		return nil, nil, fmt.Errorf("no namespace: pass --namespace, the PlacementManifestWork's namespace on the hub (also given to the manifests that have none)")
	}
	if errs := validation.IsDNS1123Label(opts.Namespace); len(errs) > 0 {
		return nil, nil, fmt.Errorf("namespace %q: %s", opts.Namespace, strings.Join(errs, "; "))
	}
	rollout, err := rolloutStrategy(opts)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMeta(opts.Labels, opts.Annotations); err != nil {
		return nil, nil, err
	}
	if opts.Placement != "" {
		if errs := validation.IsDNS1123Subdomain(opts.Placement); len(errs) > 0 || len(opts.Placement) > 63 {
			return nil, nil, fmt.Errorf("placement %q: name a Placement of the namespace: lower case letters, digits, '-' and '.', at most 63 characters", opts.Placement)
		}
	}
	scope, err := newScopes(opts.ClusterScoped, objs)
	if err != nil {
		return nil, nil, err
	}

	// Copies, with the namespace settled, in a stable order.
	manifests := make([]*unstructured.Unstructured, 0, len(objs))
	for i, o := range objs {
		if o == nil {
			continue
		}
		c := o.DeepCopy()
		if err := checkManifest(c, i); err != nil {
			return nil, nil, err
		}
		if scope.clusterScoped(c.GroupVersionKind().GroupKind()) {
			c.SetNamespace("")
		} else if c.GetNamespace() == "" {
			c.SetNamespace(opts.Namespace)
		}
		cleanMeta(c)
		manifests = append(manifests, c)
	}
	sortManifests(manifests)
	manifests, warnings := applyHookPolicy(manifests)
	if len(manifests) == 0 {
		return nil, warnings, fmt.Errorf("no manifests to wrap: the input has no Kubernetes objects (or only Helm tests and delete hooks)")
	}
	if err := checkDuplicates(manifests); err != nil {
		return nil, warnings, err
	}
	for _, m := range manifests {
		if m.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
			warnings = append(warnings, Warning{Object: objectID(m), Message: "a Secret is stored in plain text in the " +
				"PlacementManifestWork and in every cluster's ManifestWork on the hub; anyone who can read those can read it " +
				"(deliver it another way, such as an external secrets operator, or restrict who reads them)"})
		}
	}

	strategies, splitWarnings, err := splitStrategies(manifests, opts.Splits, opts.SplitAllWorkloads)
	if err != nil {
		return nil, warnings, err
	}
	warnings = append(warnings, splitWarnings...)

	name, err := pmwName(opts, manifests)
	if err != nil {
		return nil, warnings, err
	}

	limit := opts.MaxManifestBytes
	if limit <= 0 {
		limit = DefaultMaxManifestBytes
	}
	work := workv1.ManifestWorkSpec{}
	size := 0
	for _, m := range manifests {
		raw, err := json.Marshal(m.Object)
		if err != nil {
			return nil, warnings, fmt.Errorf("%s: encoding: %v", objectID(m), err)
		}
		size += len(raw)
		work.Workload.Manifests = append(work.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	if size > limit {
		return nil, warnings, fmt.Errorf("the manifests take %d bytes, more than the limit of %d bytes on one ManifestWork's manifests (OCM's is 500 KiB): "+
			"split them into several PlacementManifestWorks, or raise --max-manifest-bytes if your hub allows more", size, limit)
	}
	work.DeleteOption = orphanCRDs(manifests)

	pmw := &workv1alpha1.PlacementManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "PlacementManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: opts.Namespace,
			Labels: maps.Clone(opts.Labels), Annotations: maps.Clone(opts.Annotations)},
		Spec: workv1alpha1.PlacementManifestWorkSpec{
			ManifestWorkTemplate: work,
			DistributionStrategy: strategies,
			RolloutStrategy:      rollout,
		},
	}
	if opts.Placement != "" {
		pmw.Spec.PlacementRef = &workv1alpha1.LocalPlacementReference{Name: opts.Placement}
	}
	return pmw, warnings, nil
}

// checkManifest refuses what OCM's work webhook would refuse in a manifest.
func checkManifest(o *unstructured.Unstructured, i int) error {
	id := fmt.Sprintf("object %d (%s)", i+1, o.GetKind())
	switch {
	case o.GetAPIVersion() == "" || o.GetKind() == "":
		return fmt.Errorf("object %d has no apiVersion or kind; every manifest needs both", i+1)
	case o.GetGenerateName() != "" && o.GetName() == "":
		return fmt.Errorf("%s has generateName %q and no name: a ManifestWork needs fixed names, so set metadata.name", id, o.GetGenerateName())
	case o.GetName() == "":
		return fmt.Errorf("%s has no metadata.name; every manifest needs one", id)
	}
	if _, err := schema.ParseGroupVersion(o.GetAPIVersion()); err != nil {
		return fmt.Errorf("%s: apiVersion %q: %v", objectID(o), o.GetAPIVersion(), err)
	}
	return nil
}

// cleanMeta drops what the API server sets and that only adds noise, or conflicts, in a template:
// creationTimestamp (null in what kubectl --dry-run and many generators print), resourceVersion, uid,
// generation and managedFields, generateName beside a name, and an empty status.
func cleanMeta(o *unstructured.Unstructured) {
	for _, f := range []string{"creationTimestamp", "resourceVersion", "uid", "managedFields", "generation", "selfLink"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	if o.GetGenerateName() != "" {
		o.SetGenerateName("")
	}
	if md, ok := o.Object["metadata"].(map[string]any); ok && len(md) == 0 {
		delete(o.Object, "metadata")
	}
	if st, ok := o.Object["status"].(map[string]any); ok && len(st) == 0 {
		delete(o.Object, "status")
	}
}

func checkDuplicates(ms []*unstructured.Unstructured) error {
	seen := map[string]bool{}
	for _, m := range ms {
		id := objectID(m)
		if seen[id] {
			return fmt.Errorf("%s is in the input twice: a ManifestWork can hold one object of a name; remove one", id)
		}
		seen[id] = true
	}
	return nil
}

// pmwName is Options.Name, else the instance label the manifests agree on.
func pmwName(opts Options, ms []*unstructured.Unstructured) (string, error) {
	name := opts.Name
	if name == "" {
		values := map[string]bool{}
		for _, m := range ms {
			if v, ok := m.GetLabels()[InstanceLabel]; ok {
				values[v] = true
			}
		}
		switch len(values) {
		case 0:
			return "", fmt.Errorf("no name for the PlacementManifestWork: pass --name (no manifest has the %s label to take it from)", InstanceLabel)
		case 1:
			for v := range values {
				name = v
			}
		default:
			return "", fmt.Errorf("no name for the PlacementManifestWork: the manifests' %s labels differ (%s); pass --name",
				InstanceLabel, strings.Join(slices.Sorted(maps.Keys(values)), ", "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("name %q: %s; pass another --name", name, strings.Join(errs, "; "))
	}
	if opts.Placement == "" && len(name) > 63 {
		return "", fmt.Errorf("name %q has %d characters: without --placement the generated Placement takes this name, which OCM puts in a label value (at most 63); pass a shorter --name or --placement", name, len(name))
	}
	return name, nil
}

func checkMeta(labels, annotations map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return fmt.Errorf("label %s=%q: %s", k, labels[k], strings.Join(errs, "; "))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if errs := validation.IsQualifiedName(strings.ToLower(k)); len(errs) > 0 {
			return fmt.Errorf("annotation key %q: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// orphanCRDs keeps the CustomResourceDefinitions among ms on the clusters when the PlacementManifestWork, or
// the CRD, goes: removing a CRD removes every custom resource of its kind on the cluster, whoever made them.
func orphanCRDs(ms []*unstructured.Unstructured) *workv1.DeleteOption {
	var rules []workv1.OrphaningRule
	for _, m := range ms {
		if m.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			rules = append(rules, workv1.OrphaningRule{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: m.GetName()})
		}
	}
	if rules == nil {
		return nil
	}
	return &workv1.DeleteOption{
		PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: rules},
	}
}

// objectID names a manifest as the manager's messages do: "<kind>[.<group>] [<namespace>/]<name>".
func objectID(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	if ns := o.GetNamespace(); ns != "" {
		return kind + " " + ns + "/" + o.GetName()
	}
	return kind + " " + o.GetName()
}
