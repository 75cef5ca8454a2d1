package fleet

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// maxStrategies is the CRD's limit on a PlacementManifestWork's distributionStrategy entries.
const maxStrategies = 100

// Key names an object of the fleet API server, whatever the version it was read in.
type Key struct {
	Group, Kind, Namespace, Name string
}

// KeyOf is o's Key.
func KeyOf(o *unstructured.Unstructured) Key {
	gvk := o.GroupVersionKind()
	return Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// String names the object as the manager's messages do: "<kind>[.<group>] [<namespace>/]<name>".
func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace != "" {
		return kind + " " + k.Namespace + "/" + k.Name
	}
	return kind + " " + k.Name
}

// Options tune Translate.
type Options struct {
	// Interpreters are the kinds the hub's ResourceInterpreters describe, besides the built-in ones: an object
	// of such a kind annotated Split divides the fields its interpreter names. Nil: the built-in kinds only
	// (and .spec.replicas for every other kind).
	Interpreters *health.Interpreters
	// IncludeNamespace puts a Namespace manifest of the namespace (labelled workv1alpha1.LabelFleetGenerated) first, so the work
	// agent creates the namespace on the clusters, and orphans it when the PlacementManifestWork or the
	// manifest goes: what else runs in that namespace on a cluster is not the fleet's to remove.
	IncludeNamespace bool
}

// Unsupported is an object that Translate leaves out, and why.
type Unsupported struct {
	Key    Key
	Reason Reason
	// Message says why in a sentence, and what to do where something can be done.
	Message string
}

// Translation is what the objects of one opted-in namespace make of a PlacementManifestWork's spec.
type Translation struct {
	// Template is spec.manifestWorkTemplate: one manifest per translated object, in a stable order (Helm's
	// install order of kinds, then kind, group, name and version) whatever the order of the input, and a
	// deleteOption when IncludeNamespace adds the Namespace.
	Template workv1.ManifestWorkSpec
	// DistributionStrategy is spec.distributionStrategy: a Balance split for every object that is split, in
	// the order of the manifests. Objects without an entry are replicated.
	DistributionStrategy []workv1alpha1.DistributionStrategy
	// Unsupported are the objects left out, ordered as the manifests are.
	Unsupported []Unsupported
	// Generation is the metadata.generation of every translated object, by its key (the namespace settled), so
	// the controller can tell which generation of an object a cluster's work carries.
	Generation map[Key]int64
}

// Spec is the PlacementManifestWork spec of the translation, with spec.placementRef naming placement.
func (t Translation) Spec(placement string) workv1alpha1.PlacementManifestWorkSpec {
	spec := workv1alpha1.PlacementManifestWorkSpec{
		ManifestWorkTemplate: *t.Template.DeepCopy(),
		PlacementRef:         &workv1alpha1.LocalPlacementReference{Name: placement},
	}
	for i := range t.DistributionStrategy {
		spec.DistributionStrategy = append(spec.DistributionStrategy, *t.DistributionStrategy[i].DeepCopy())
	}
	return spec
}

// Translate turns the objects of the fleet API server's namespace into the parts of one PlacementManifestWork
// that delivers them to the clusters:
//
//   - each object is cleaned of what the fleet API server, kubectl and the fleet set and that means nothing,
//     or conflicts, on a cluster: metadata.uid, resourceVersion, generation, creationTimestamp, managedFields,
//     selfLink, deletionTimestamp, deletionGracePeriodSeconds, ownerReferences, finalizers, generateName beside
//     a name, kubectl's last-applied-configuration and the fleet's own (workv1alpha1.FleetPrefix) annotations, and status; a
//     Service's addresses and ports that the fleet API server allocated (clusterIP and clusterIPs unless
//     headless, nodePorts, healthCheckNodePort), which each cluster allocates from its own ranges; a Job's
//     generated selector and the labels that go with it, which each cluster's API server generates from its
//     own uid (and refuses when given). Labels and other annotations stay; the namespace is set.
//   - Deployments, StatefulSets and ReplicaSets are split (Balance over .spec.replicas, 1 when unset, as the
//     API server defaults it), everything else is replicated; workv1alpha1.AnnotationFleetDistribution chooses otherwise. Split
//     on an object without an integer replica field (the kind interpreter's fields, else .spec.replicas) is
//     ReasonInvalidDistribution for that object.
//   - objects with ownerReferences, of an unsupported or cluster-scoped kind, or of another namespace are left
//     out and reported in Unsupported: only the roots are delivered.
//
// The objects are not modified. The error is for input no namespace can hold (no kind or name, the same object
// twice, more split objects than a PlacementManifestWork takes): a single object that cannot be translated is
// reported, never fatal.
func Translate(namespace string, objects []*unstructured.Unstructured, opts Options) (Translation, error) {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return Translation{}, fmt.Errorf("namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	out := Translation{Generation: map[Key]int64{}}
	var manifests []*unstructured.Unstructured
	var split []bool
	seen := map[Key]bool{}
	for i, o := range objects {
		if err := checkObject(o, i); err != nil {
			return Translation{}, err
		}
		c := o.DeepCopy()
		if c.GetNamespace() == "" && !template.BuiltinClusterScoped(c.GroupVersionKind().GroupKind()) {
			c.SetNamespace(namespace)
		}
		key := KeyOf(c)
		if seen[key] {
			return Translation{}, fmt.Errorf("%s is in the input twice (an API server holds one object of a kind and name in a namespace)", key)
		}
		seen[key] = true
		if reason, msg := leftOut(c, namespace); reason != "" {
			out.Unsupported = append(out.Unsupported, Unsupported{Key: key, Reason: reason, Message: msg})
			continue
		}
		s, err := wantSplit(c, opts.Interpreters)
		if err != nil {
			out.Unsupported = append(out.Unsupported, Unsupported{Key: key, Reason: ReasonInvalidDistribution, Message: err.Error()})
			continue
		}
		out.Generation[key] = c.GetGeneration()
		clean(c)
		stampGeneration(c, out.Generation[key])
		if s && splitKinds[c.GroupVersionKind().GroupKind()] {
			if _, found, _ := unstructured.NestedFieldNoCopy(c.Object, "spec", "replicas"); !found {
				_ = unstructured.SetNestedField(c.Object, int64(1), "spec", "replicas")
			}
		}
		manifests = append(manifests, c)
		split = append(split, s)
	}

	order := make([]int, len(manifests))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareObjects(manifests[a], manifests[b]) })
	slices.SortFunc(out.Unsupported, func(a, b Unsupported) int { return compareKeys(a.Key, "", b.Key, "") })

	if opts.IncludeNamespace {
		out.Template.Workload.Manifests = append(out.Template.Workload.Manifests, namespaceManifest(namespace))
		out.Template.DeleteOption = &workv1.DeleteOption{
			PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{
				{Resource: "namespaces", Name: namespace},
			}},
		}
	}
	for _, i := range order {
		m := manifests[i]
		raw, err := json.Marshal(m.Object)
		if err != nil {
			return Translation{}, fmt.Errorf("%s: encoding: %w", KeyOf(m), err)
		}
		out.Template.Workload.Manifests = append(out.Template.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		if !split[i] {
			continue
		}
		gvk := m.GroupVersionKind()
		out.DistributionStrategy = append(out.DistributionStrategy, workv1alpha1.DistributionStrategy{
			Name: m.GetName(), Namespace: m.GetNamespace(), Group: gvk.Group, Kind: gvk.Kind,
			Type:  workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
		})
	}
	if len(out.DistributionStrategy) > maxStrategies {
		return Translation{}, fmt.Errorf("namespace %q has %d objects to split, more than the %d a PlacementManifestWork takes; "+
			"annotate some %s: Replicate, or move some to another namespace", namespace, len(out.DistributionStrategy), maxStrategies, workv1alpha1.AnnotationFleetDistribution)
	}
	return out, nil
}

// stampGeneration records the fleet object's generation on its manifest (workv1alpha1.AnnotationFleetGeneration),
// so a cluster's ManifestWork says which generation it carries. Kinds without a generation get none.
func stampGeneration(o *unstructured.Unstructured, generation int64) {
	if generation <= 0 {
		return
	}
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[workv1alpha1.AnnotationFleetGeneration] = strconv.FormatInt(generation, 10)
	o.SetAnnotations(a)
}

// CarriedGenerations reads, from the manifests of a cluster's ManifestWork, the generation of each fleet object
// they carry (workv1alpha1.AnnotationFleetGeneration; objects without it are left out). The namespace of a
// manifest without one is namespace.
func CarriedGenerations(namespace string, manifests []workv1.Manifest) map[Key]int64 {
	out := map[Key]int64{}
	for _, m := range manifests {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name        string            `json:"name"`
				Namespace   string            `json:"namespace"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(m.Raw, &meta); err != nil {
			continue
		}
		g, err := strconv.ParseInt(meta.Metadata.Annotations[workv1alpha1.AnnotationFleetGeneration], 10, 64)
		if err != nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(meta.APIVersion)
		if err != nil {
			continue
		}
		ns := meta.Metadata.Namespace
		if ns == "" {
			ns = namespace
		}
		out[Key{Group: gv.Group, Kind: meta.Kind, Namespace: ns, Name: meta.Metadata.Name}] = g
	}
	return out
}

// checkObject refuses what no API server holds.
func checkObject(o *unstructured.Unstructured, i int) error {
	switch {
	case o == nil:
		return fmt.Errorf("object %d is nil", i+1)
	case o.GetAPIVersion() == "" || o.GetKind() == "":
		return fmt.Errorf("object %d has no apiVersion or kind", i+1)
	case o.GetName() == "":
		return fmt.Errorf("object %d (%s) has no metadata.name", i+1, o.GetKind())
	}
	if _, err := schema.ParseGroupVersion(o.GetAPIVersion()); err != nil {
		return fmt.Errorf("object %d (%s %s): apiVersion %q: %w", i+1, o.GetKind(), o.GetName(), o.GetAPIVersion(), err)
	}
	return nil
}

// leftOut says why o is not delivered, "" when it is.
func leftOut(o *unstructured.Unstructured, namespace string) (Reason, string) {
	gk := o.GroupVersionKind().GroupKind()
	switch {
	case template.BuiltinClusterScoped(gk):
		return ReasonClusterScoped, fmt.Sprintf("%s is cluster-scoped: a namespace cannot own it; install it on the clusters "+
			"with a PlacementManifestWork of its own", gk.Kind)
	case o.GetNamespace() != namespace:
		return ReasonOtherNamespace, fmt.Sprintf("of namespace %q, not %q", o.GetNamespace(), namespace)
	case len(o.GetOwnerReferences()) > 0:
		owner := o.GetOwnerReferences()[0]
		return ReasonOwned, fmt.Sprintf("owned by %s %s: made on the fleet API server by a controller; only its owner is delivered, "+
			"and the clusters' controllers make their own", owner.Kind, owner.Name)
	}
	if why := unsupportedReason(o); why != "" {
		return ReasonUnsupportedKind, why
	}
	return "", ""
}

// wantSplit says whether o is split, from workv1alpha1.AnnotationFleetDistribution or else its kind. An error says why the
// annotation cannot be honoured.
func wantSplit(o *unstructured.Unstructured, kinds *health.Interpreters) (bool, error) {
	gvk := o.GroupVersionKind()
	v, ok := o.GetAnnotations()[workv1alpha1.AnnotationFleetDistribution]
	if !ok {
		return splitKinds[gvk.GroupKind()], nil
	}
	switch workv1alpha1.DistributionType(v) {
	case workv1alpha1.DistributionReplicate:
		return false, nil
	case workv1alpha1.DistributionSplit:
	default:
		return false, fmt.Errorf("%s is %q: use %s or %s", workv1alpha1.AnnotationFleetDistribution, v, workv1alpha1.DistributionReplicate, workv1alpha1.DistributionSplit)
	}
	if splitKinds[gvk.GroupKind()] {
		return true, nil // .spec.replicas, defaulted to 1 when unset
	}
	var paths []string
	if k := kinds.For(gvk); k != nil {
		paths = k.ReplicaPaths()
	}
	if len(paths) == 0 {
		paths = []string{workv1alpha1.DefaultSplitFieldPath}
	}
	for _, p := range paths {
		if _, err := template.IntField(o, p); err != nil {
			return false, fmt.Errorf("%s is %s, but a %s has no replica field to divide (%v); set the field to the total, "+
				"or annotate it %s", workv1alpha1.AnnotationFleetDistribution, v, gvk.Kind, err, workv1alpha1.DistributionReplicate)
		}
	}
	return true, nil
}

// jobGeneratedLabels are the labels the API server adds to a Job's pod template with the selector it generates.
var jobGeneratedLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"}

// clean drops what the fleet API server, kubectl and the fleet set and that means nothing, or conflicts, on a
// cluster (see Translate).
func clean(o *unstructured.Unstructured) {
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
		"deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers"} {
		unstructured.RemoveNestedField(o.Object, "metadata", f)
	}
	if o.GetGenerateName() != "" && o.GetName() != "" {
		unstructured.RemoveNestedField(o.Object, "metadata", "generateName")
	}
	if a := o.GetAnnotations(); a != nil {
		for k := range a {
			if k == annotationLastApplied || strings.HasPrefix(k, workv1alpha1.FleetPrefix) {
				delete(a, k)
			}
		}
		if len(a) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
		} else {
			o.SetAnnotations(a)
		}
	}
	delete(o.Object, "status")

	switch o.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Kind: "Service"}:
		if ip, _, _ := unstructured.NestedString(o.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(o.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(o.Object, "spec", "clusterIPs")
		}
		unstructured.RemoveNestedField(o.Object, "spec", "healthCheckNodePort")
		if ports, ok, _ := unstructured.NestedSlice(o.Object, "spec", "ports"); ok {
			for _, p := range ports {
				if pm, ok := p.(map[string]any); ok {
					delete(pm, "nodePort")
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
		}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		if manual, _, _ := unstructured.NestedBool(o.Object, "spec", "manualSelector"); !manual {
			unstructured.RemoveNestedField(o.Object, "spec", "selector")
			labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
			for _, l := range jobGeneratedLabels {
				delete(labels, l)
			}
			if len(labels) == 0 {
				unstructured.RemoveNestedField(o.Object, "spec", "template", "metadata", "labels")
			} else {
				_ = unstructured.SetNestedStringMap(o.Object, labels, "spec", "template", "metadata", "labels")
			}
		}
	}
}

// namespaceManifest is the Namespace the work agent creates on the clusters (IncludeNamespace).
func namespaceManifest(namespace string) workv1.Manifest {
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": namespace, "labels": map[string]any{workv1alpha1.LabelFleetGenerated: "true"}},
	})
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

func compareKeys(a Key, av string, b Key, bv string) int {
	return template.CompareInstallOrder(
		template.ObjectRef{Group: a.Group, Version: av, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name},
		template.ObjectRef{Group: b.Group, Version: bv, Kind: b.Kind, Namespace: b.Namespace, Name: b.Name})
}

func compareObjects(a, b *unstructured.Unstructured) int {
	return template.CompareInstallOrder(template.RefOf(a), template.RefOf(b))
}
