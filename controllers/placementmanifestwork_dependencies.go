package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The dependencies a PlacementManifestWork carries along (spec.propagateDependencies) are read with the
// APIReader, one Get each, and watched as metadata only (setup.go, cache.go), so the manager never caches the
// contents of the hub's ConfigMaps and Secrets.
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;serviceaccounts,verbs=get;list;watch

// lastAppliedAnnotation is kubectl's copy of the object as last applied: for a Secret, its data in clear.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// dependencyNamer is an interpreter that may name the hub objects a manifest needs (a user's
// ResourceInterpreter, *interpreter.Interpreter).
type dependencyNamer interface {
	HasDependencies() bool
	Dependencies(obj map[string]any) ([]interpreter.Dependency, error)
}

// dependencyRef is one object to deliver: a ConfigMap, Secret or ServiceAccount of the PlacementManifestWork's
// namespace, into the namespace of the manifest that needs it.
type dependencyRef struct {
	kind, name string
	// namespace is where it is delivered: the namespace of the manifest that names it.
	namespace string
	// neededBy is the first manifest that names it, for messages.
	neededBy string
}

// dependencies finds the template's dependencies: for each manifest whose kind's interpreter names
// dependencies, the ConfigMaps, Secrets and ServiceAccounts it names, read from the PlacementManifestWork's
// namespace on the hub (uncached), cleaned (dependencyManifest), in the manifest's namespace, once each, sorted
// by kind, namespace and name, and numbered after the template's manifests: the finder's own, which every
// cluster whose overrides change none of its manifests carries. The finder then finds, within this reconcile,
// those of the manifests as a cluster's overrides leave them (dependencyFinder.Find). An expression that fails
// (InterpreterFailed), or a dependency that is missing or cannot be delivered (DependencyNotFound), is an
// InvalidError: for the template's, nothing is written and the delivered ManifestWorks are kept; for those of a
// cluster's overridden manifests (Find), that cluster alone keeps its work (planner.Plan.DependencyFailures).
// The error is the API server's, other than NotFound.
func (r *PlacementManifestWorkReconciler) dependencies(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, kinds *health.Interpreters, manifests []template.Manifest) (*dependencyFinder, *planner.InvalidError, error) {
	f := &dependencyFinder{
		reader:   dependencyReader{ctx: ctx, r: r, namespace: pmw.Namespace, read: map[dependencyRef]client.Object{}},
		kinds:    kinds,
		template: manifests,
		byRef:    map[dependencyRef]template.Manifest{},
		found:    map[string]foundDependencies{},
		next:     len(manifests),
	}
	refs, invalid := dependencyRefs(kinds, manifests)
	if invalid != nil {
		return nil, invalid, nil
	}
	own, invalid, err := f.deliver(refs, "")
	if invalid != nil || err != nil {
		return nil, invalid, err
	}
	f.own, f.ownRefs = own, refs
	return f, nil, nil
}

// dependencyFinder finds, within one reconcile of one template, the dependencies a cluster's manifests
// reference: the template's own, found once (dependencies), for every cluster whose overrides change none of
// the manifests that name dependencies, and, for a cluster whose overrides do, those of its manifests as
// overridden. Manifests overridden alike (the same content) are asked about once, and each hub object is read
// once, however many clusters and namespaces it goes to. It is planner.DependencyFinder; not safe for
// concurrent use.
type dependencyFinder struct {
	reader dependencyReader
	kinds  *health.Interpreters
	// template are the template's own manifests; own and ownRefs its dependencies, which follow them.
	template []template.Manifest
	own      []template.Manifest
	ownRefs  []dependencyRef
	// byRef holds every dependency made, by kind, name and target namespace (neededBy unset), so that the
	// clusters that carry one share its manifest; next is the index the next one gets.
	byRef map[dependencyRef]template.Manifest
	next  int
	// found holds what Find answered, by the content of the overridden manifests that name dependencies;
	// byResult what findFor answered, by its key.
	found    map[string]foundDependencies
	byResult map[string]foundDependencies
}

type foundDependencies struct {
	deps    []template.Manifest
	same    bool
	invalid *planner.InvalidError
}

// dependencyReader reads a PlacementManifestWork's dependencies from the hub, each once per reconcile.
type dependencyReader struct {
	ctx       context.Context
	r         *PlacementManifestWorkReconciler
	namespace string
	// read holds what was read by kind and name (nil: not found).
	read map[dependencyRef]client.Object
}

func (d *dependencyReader) get(kind, name string) (client.Object, error) {
	key := dependencyRef{kind: kind, name: name}
	if obj, ok := d.read[key]; ok {
		return obj, nil
	}
	obj, err := d.r.readDependency(d.ctx, d.namespace, kind, name)
	if err != nil {
		return nil, err
	}
	d.read[key] = obj
	return obj, nil
}

// Find returns the dependencies of manifests, the template's manifests as a cluster's overrides leave them
// (planner.DependencyFinder): same when no manifest whose kind names dependencies changed, or when the changed
// ones name the template's dependencies. Otherwise the dependencies they name, read from the hub as the
// template's are, those the template's share being the template's own manifests. A dependency that is missing
// or cannot be delivered is DependencyNotFound, an interpreter that fails InterpreterFailed, as for the
// template's: the messages name the cluster, and the planner keeps the works of the clusters whose manifests
// come to these alone (the answer, the error too, is remembered by content: clusters alike are asked once).
func (f *dependencyFinder) Find(cluster string, manifests []template.Manifest) ([]template.Manifest, bool, error) {
	key, err := f.contentKey(manifests)
	if err != nil {
		return nil, false, err
	}
	if key == "" {
		return nil, true, nil
	}
	if got, ok := f.found[key]; ok {
		return got.answer()
	}
	got := foundDependencies{}
	refs, invalid := dependencyRefsFor(f.kinds, manifests, cluster)
	switch {
	case invalid != nil:
		got.invalid = invalid
	case sameRefs(refs, f.ownRefs):
		got.same = true
	default:
		deps, invalid, err := f.deliver(refs, cluster)
		if err != nil {
			return nil, false, err // the API server's: asked again
		}
		got.deps, got.invalid = deps, invalid
	}
	f.found[key] = got
	return got.answer()
}

// findFor is Find for a cluster whose manifests (made by manifests when needed) are known to be those of
// every cluster with the same key (what the overrides come to and the split shares): such clusters are
// answered without encoding their manifests again.
func (f *dependencyFinder) findFor(key, cluster string, manifests func() []template.Manifest) ([]template.Manifest, bool, error) {
	if got, ok := f.byResult[key]; ok {
		return got.answer()
	}
	deps, same, err := f.Find(cluster, manifests())
	var invalid *planner.InvalidError
	if err != nil && !errors.As(err, &invalid) {
		return nil, false, err // the API server's: asked again
	}
	if f.byResult == nil {
		f.byResult = map[string]foundDependencies{}
	}
	f.byResult[key] = foundDependencies{deps: deps, same: same, invalid: invalid}
	return deps, same, err
}

func (got foundDependencies) answer() ([]template.Manifest, bool, error) {
	if got.invalid != nil {
		return nil, false, got.invalid
	}
	return got.deps, got.same, nil
}

// contentKey identifies the manifests whose kind names dependencies and that differ from the template's (the
// overrides changed them) by their position and content; "" when there are none.
func (f *dependencyFinder) contentKey(manifests []template.Manifest) (string, error) {
	var h hash.Hash
	for i, m := range manifests {
		if i < len(f.template) && m.Object == f.template[i].Object {
			continue
		}
		if namer, ok := f.kinds.For(m.GVK).(dependencyNamer); !ok || !namer.HasDependencies() {
			continue
		}
		raw, err := json.Marshal(m.Object.Object)
		if err != nil {
			return "", fmt.Errorf("encoding %s: %w", m.ID(), err)
		}
		if h == nil {
			h = sha256.New()
		}
		fmt.Fprintf(h, "%d:%d:", i, len(raw))
		h.Write(raw)
	}
	if h == nil {
		return "", nil
	}
	return string(h.Sum(nil)), nil
}

// sameRefs reports whether two lists name the same dependencies into the same namespaces.
func sameRefs(a, b []dependencyRef) bool {
	return slices.EqualFunc(a, b, func(x, y dependencyRef) bool {
		return x.kind == y.kind && x.name == y.name && x.namespace == y.namespace
	})
}

// deliver makes the manifests that deliver refs, in their order, reading each hub object once and making each
// manifest once (byRef), numbered from next and marked Dependency. cluster, when set, is the cluster whose
// overridden manifests name them, for the message.
func (f *dependencyFinder) deliver(refs []dependencyRef, cluster string) ([]template.Manifest, *planner.InvalidError, error) {
	var missing []string
	out := make([]template.Manifest, 0, len(refs))
	for _, ref := range refs {
		key := dependencyRef{kind: ref.kind, name: ref.name, namespace: ref.namespace}
		if m, ok := f.byRef[key]; ok {
			out = append(out, m)
			continue
		}
		obj, err := f.reader.get(ref.kind, ref.name)
		if err != nil {
			return nil, nil, err
		}
		if obj == nil {
			missing = append(missing, fmt.Sprintf("%s %s (needed by %s)", ref.kind, ref.name, ref.neededBy))
			continue
		}
		m, err := dependencyManifest(obj, ref.namespace)
		if err != nil {
			return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
				"%s %s (needed by %s) cannot be delivered: %v%s", ref.kind, ref.name, ref.neededBy, err, keptWorks(cluster, "; the ManifestWorks already delivered are kept"))}, nil
		}
		m.Index, m.Dependency = f.next, true
		f.next++
		f.byRef[key] = m
		out = append(out, m)
	}
	if len(missing) > 0 {
		fix := "fix the interpreter or the manifest that names them"
		if cluster != "" {
			fix = "fix the override, the interpreter or the manifest that names them"
		}
		return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
			"Not in namespace %s on the hub: %s; create them there, or %s%s",
			f.reader.namespace, names(missing), fix, keptWorks(cluster, ". Nothing is written and the ManifestWorks already delivered are kept"))}, nil
	}
	return out, nil, nil
}

// keptWorks ends the message of a dependency failure: for the template's dependencies (cluster unset) what
// becomes of every work (all, which follows a message); for those of the manifests as a cluster's overrides
// leave them, nothing: that cluster alone, and those whose overrides leave them alike, keep their works as they
// are (planner.Plan.DependencyFailures), which the conditions say.
func keptWorks(cluster, all string) string {
	if cluster != "" {
		return ""
	}
	return all
}

// readDependency reads a ConfigMap, Secret or ServiceAccount from the API server, nil when it does not exist.
func (r *PlacementManifestWorkReconciler) readDependency(ctx context.Context, namespace, kind, name string) (client.Object, error) {
	var obj client.Object
	switch kind {
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	case "Secret":
		obj = &corev1.Secret{}
	case "ServiceAccount":
		obj = &corev1.ServiceAccount{}
	default: // the interpreter admits no other kind
		return nil, fmt.Errorf("dependency %s %s: unknown kind", kind, name)
	}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s/%s: %w", kind, namespace, name, err)
	}
	return obj, nil
}

// dependencyRefs evaluates the dependencies of every manifest whose kind's interpreter names them, and returns
// what to deliver: once per kind, name and target namespace, sorted by kind, namespace and name, without those
// the template delivers itself. A manifest without a namespace has nowhere to put its dependencies.
func dependencyRefs(kinds *health.Interpreters, manifests []template.Manifest) ([]dependencyRef, *planner.InvalidError) {
	return dependencyRefsFor(kinds, manifests, "")
}

// dependencyRefsFor is dependencyRefs of the manifests as the overrides leave them for a cluster, when cluster
// is set: the messages, and neededBy, say so.
func dependencyRefsFor(kinds *health.Interpreters, manifests []template.Manifest, cluster string) ([]dependencyRef, *planner.InvalidError) {
	inTemplate := map[dependencyRef]bool{}
	for _, m := range manifests {
		if m.GVK.Group == "" && m.GVK.Version == "v1" {
			inTemplate[dependencyRef{kind: m.GVK.Kind, name: m.Object.GetName(), namespace: m.Object.GetNamespace()}] = true
		}
	}
	seen := map[dependencyRef]bool{}
	var out []dependencyRef
	for _, m := range manifests {
		namer, ok := kinds.For(m.GVK).(dependencyNamer)
		if !ok || !namer.HasDependencies() {
			continue
		}
		id := m.ID()
		if cluster != "" {
			// Not naming the cluster: the answer is shared by every cluster whose overrides leave the manifests
			// alike, and the conditions list those clusters.
			id += " as the overrides leave it"
		}
		deps, err := namer.Dependencies(m.Object.Object)
		if err != nil {
			reason := workv1alpha1.ReasonInterpreterFailed
			var p *interpreter.Problem
			if errors.As(err, &p) && p.Reason != "" {
				reason = p.Reason
			}
			return nil, &planner.InvalidError{Reason: reason, Message: fmt.Sprintf(
				"The dependencies of %s: %v%s", id, err, keptWorks(cluster, "; nothing is written and the ManifestWorks already delivered are kept"))}
		}
		if len(deps) == 0 {
			continue
		}
		ns := m.Object.GetNamespace()
		if ns == "" {
			return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
				"%s has no namespace to deliver its dependencies (%s %s, ...) into: set metadata.namespace, or turn spec.propagateDependencies off%s",
				id, deps[0].Kind, deps[0].Name, keptWorks(cluster, "; the ManifestWorks already delivered are kept"))}
		}
		for _, d := range deps {
			key := dependencyRef{kind: d.Kind, name: d.Name, namespace: ns}
			if seen[key] || inTemplate[key] {
				continue
			}
			seen[key] = true
			key.neededBy = id
			out = append(out, key)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	return out, nil
}

// dependencyManifest is the manifest that delivers a hub ConfigMap, Secret or ServiceAccount into namespace:
// its name, labels and annotations (without kubectl's last-applied copy), and its content: data, binaryData
// for a ConfigMap; type, data for a Secret; imagePullSecrets and automountServiceAccountToken for a
// ServiceAccount. Nothing the hub's API server or controllers set (uid, resourceVersion, ownerReferences,
// managedFields, a ServiceAccount's token secrets) is carried. A hub ServiceAccount's token Secret is refused:
// it is a credential for the hub.
func dependencyManifest(obj client.Object, namespace string) (template.Manifest, error) {
	meta := map[string]any{"name": obj.GetName(), "namespace": namespace}
	if labels := obj.GetLabels(); len(labels) > 0 {
		meta["labels"] = labels
	}
	annotations := make(map[string]string, len(obj.GetAnnotations()))
	for k, v := range obj.GetAnnotations() {
		if k != lastAppliedAnnotation {
			annotations[k] = v
		}
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	out := map[string]any{"apiVersion": "v1", "metadata": meta}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		out["kind"] = "ConfigMap"
		if len(o.Data) > 0 {
			out["data"] = o.Data
		}
		if len(o.BinaryData) > 0 {
			out["binaryData"] = o.BinaryData
		}
	case *corev1.Secret:
		if o.Type == corev1.SecretTypeServiceAccountToken {
			return template.Manifest{}, fmt.Errorf("it is a token of a ServiceAccount of the hub (type %s), a credential for the hub", o.Type)
		}
		out["kind"] = "Secret"
		if o.Type != "" {
			out["type"] = o.Type
		}
		if len(o.Data) > 0 {
			out["data"] = o.Data
		}
		if len(o.StringData) > 0 { // never set on a read; kept should a reader return it
			out["stringData"] = o.StringData
		}
	case *corev1.ServiceAccount:
		out["kind"] = "ServiceAccount"
		if len(o.ImagePullSecrets) > 0 {
			out["imagePullSecrets"] = o.ImagePullSecrets
		}
		if o.AutomountServiceAccountToken != nil {
			out["automountServiceAccountToken"] = *o.AutomountServiceAccountToken
		}
	default:
		return template.Manifest{}, fmt.Errorf("%T is not a ConfigMap, Secret or ServiceAccount", obj)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return template.Manifest{}, err
	}
	parsed, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
	if err != nil {
		return template.Manifest{}, err
	}
	return parsed[0], nil
}
