package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// dependencies returns the manifests that carry the template's dependencies along: for each manifest whose
// kind's interpreter names dependencies, the ConfigMaps, Secrets and ServiceAccounts it names, read from the
// PlacementManifestWork's namespace on the hub (uncached), cleaned (dependencyManifest), in the manifest's
// namespace, once each, sorted by kind, namespace and name, and numbered after the template's manifests. An
// expression that fails (InterpreterFailed), or a dependency that is missing or cannot be delivered
// (DependencyNotFound), is an InvalidError: nothing is written and the delivered ManifestWorks are kept. The
// error is the API server's, other than NotFound.
func (r *PlacementManifestWorkReconciler) dependencies(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, kinds *health.Interpreters, manifests []template.Manifest) ([]template.Manifest, *planner.InvalidError, error) {
	refs, invalid := dependencyRefs(kinds, manifests)
	if invalid != nil || len(refs) == 0 {
		return nil, invalid, nil
	}
	// One read per hub object, however many namespaces it is delivered into.
	read := map[dependencyRef]client.Object{}
	var missing []string
	out := make([]template.Manifest, 0, len(refs))
	for _, ref := range refs {
		key := dependencyRef{kind: ref.kind, name: ref.name}
		obj, seen := read[key]
		if !seen {
			var err error
			if obj, err = r.readDependency(ctx, pmw.Namespace, ref.kind, ref.name); err != nil {
				return nil, nil, err
			}
			read[key] = obj
		}
		if obj == nil {
			missing = append(missing, fmt.Sprintf("%s %s (needed by %s)", ref.kind, ref.name, ref.neededBy))
			continue
		}
		m, err := dependencyManifest(obj, ref.namespace)
		if err != nil {
			return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
				"%s %s (needed by %s) cannot be delivered: %v; the ManifestWorks already delivered are kept", ref.kind, ref.name, ref.neededBy, err)}, nil
		}
		m.Index, m.Dependency = len(manifests)+len(out), true
		out = append(out, m)
	}
	if len(missing) > 0 {
		return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
			"Not in namespace %s on the hub: %s; create them there, or fix the interpreter or the manifest that names them. Nothing is written and the ManifestWorks already delivered are kept",
			pmw.Namespace, names(missing))}, nil
	}
	return out, nil, nil
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
		deps, err := namer.Dependencies(m.Object.Object)
		if err != nil {
			reason := workv1alpha1.ReasonInterpreterFailed
			var p *interpreter.Problem
			if errors.As(err, &p) && p.Reason != "" {
				reason = p.Reason
			}
			return nil, &planner.InvalidError{Reason: reason, Message: fmt.Sprintf(
				"The dependencies of %s: %v; nothing is written and the ManifestWorks already delivered are kept", m.ID(), err)}
		}
		if len(deps) == 0 {
			continue
		}
		ns := m.Object.GetNamespace()
		if ns == "" {
			return nil, &planner.InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound, Message: fmt.Sprintf(
				"%s has no namespace to deliver its dependencies (%s %s, ...) into: set metadata.namespace, or turn spec.propagateDependencies off; the ManifestWorks already delivered are kept",
				m.ID(), deps[0].Kind, deps[0].Name)}
		}
		for _, d := range deps {
			key := dependencyRef{kind: d.Kind, name: d.Name, namespace: ns}
			if seen[key] || inTemplate[key] {
				continue
			}
			seen[key] = true
			key.neededBy = m.ID()
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
