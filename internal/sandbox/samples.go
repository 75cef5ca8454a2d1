package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/yamlobjects"
)

// The custom kind of the interpreter sample (samples/database.yaml), the one the reference interpreter webhook
// describes too (internal/interpreterwebhook/database).
const (
	DatabaseGroup = "example.open-cluster-management.io"
	DatabaseKind  = "Database"

	databasePhaseProvisioning = "Provisioning"
	databasePhaseReady        = "Ready"
	databasePhaseFailed       = "Failed"
)

// databaseSample is the interpreter sample: a ResourceInterpreter for Database, and a PlacementManifestWork
// that splits a Database across the clusters.
//
//go:embed samples/database.yaml
var databaseSample []byte

// regionalSample is the overrides sample: a PlacementManifestWork whose override gives each cluster an image
// from its region's registry.
//
//go:embed samples/regional.yaml
var regionalSample []byte

// nearestSample is the scores sample: a Placement ranked by the score agents' latency scores, and a
// PlacementManifestWork whose replicas are divided by them.
//
//go:embed samples/nearest.yaml
var nearestSample []byte

// EmbeddedSamples are every sample the sandbox applies besides config/samples: the interpreter sample
// (InterpreterSamples), the overrides sample (OverrideSamples), the scores sample (ScoreSamples) and the
// transparent-mode sample (FleetSamples).
func EmbeddedSamples() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, samples := range []func() ([]*unstructured.Unstructured, error){InterpreterSamples, OverrideSamples, ScoreSamples, FleetSamples} {
		objs, err := samples()
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ScoreSamples is the scores sample (samples/nearest.yaml): the Placement "nearest", which picks the two
// clusters with the best latency score, and the PlacementManifestWork "nearest", which divides its replicas by
// that score.
func ScoreSamples() ([]*unstructured.Unstructured, error) {
	return DecodeObjects(bytes.NewReader(nearestSample), "samples/nearest.yaml")
}

// OverrideSamples is the overrides sample (samples/regional.yaml): a Placement and the PlacementManifestWork
// "regional", whose Deployment's registry is rewritten from each cluster's region label.
func OverrideSamples() ([]*unstructured.Unstructured, error) {
	return DecodeObjects(bytes.NewReader(regionalSample), "samples/regional.yaml")
}

// InterpreterSamples are the samples the sandbox applies besides config/samples: a custom kind and its
// ResourceInterpreter (samples/database.yaml), the interpreter first.
func InterpreterSamples() ([]*unstructured.Unstructured, error) {
	return DecodeObjects(bytes.NewReader(databaseSample), "samples/database.yaml")
}

// declareSampleKinds tells the simulated clusters how the interpreter sample's kind behaves (DatabaseStatus).
func declareSampleKinds() {
	ocmsim.SimulateKind(schema.GroupKind{Group: DatabaseGroup, Kind: DatabaseKind}, DatabaseStatus)
}

// DatabaseStatus is the status a database operator on a simulated cluster writes: Provisioning with no ready
// instance until the ready delay has passed, then Ready with every instance (spec.replicas) ready; Failed on a
// never-ready cluster once the delay has passed.
func DatabaseStatus(obj *unstructured.Unstructured, r ocmsim.Rollout) map[string]any {
	status := map[string]any{"observedGeneration": obj.GetGeneration(), "phase": databasePhaseProvisioning}
	switch {
	case r.Ready:
		status["phase"] = databasePhaseReady
		if n := DesiredReplicas(obj); n > 0 {
			status["readyInstances"] = n
		}
	case r.DeadlineExceeded:
		status["phase"] = databasePhaseFailed
	}
	return status
}

// LoadSamples reads every object of the YAML files in dir (kustomization.yaml aside), in file order.
func LoadSamples(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("listing samples: %w", err)
	}
	sort.Strings(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		objs, err := decodeFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(SamplePMWs(out)) == 0 {
		return nil, fmt.Errorf("no PlacementManifestWork in %s", dir)
	}
	return out, nil
}

func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading sample: %w", err)
	}
	defer f.Close()
	return DecodeObjects(f, path)
}

// DecodeObjects decodes a multi-document YAML or JSON stream; empty documents are skipped.
func DecodeObjects(r io.Reader, name string) ([]*unstructured.Unstructured, error) {
	objs, err := yamlobjects.Decode(r, name)
	if err != nil {
		return nil, err
	}
	for _, obj := range objs {
		if obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("decoding %s: an object without kind or metadata.name", name)
		}
	}
	return objs, nil
}

// SamplePMWs names the PlacementManifestWorks among objs; the namespace defaults to SampleNamespace, as
// kubectl apply without -n would place it.
func SamplePMWs(objs []*unstructured.Unstructured) []types.NamespacedName {
	var out []types.NamespacedName
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != workv1alpha1.GroupVersion.Group || gvk.Kind != "PlacementManifestWork" {
			continue
		}
		ns := o.GetNamespace()
		if ns == "" {
			ns = SampleNamespace
		}
		out = append(out, types.NamespacedName{Namespace: ns, Name: o.GetName()})
	}
	return out
}

// applySamples creates the sample objects; ones that exist already are left as they are.
func applySamples(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			if namespaced, err := c.IsObjectNamespaced(o); err == nil && namespaced {
				o.SetNamespace(SampleNamespace)
			}
		}
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating sample %s %s: %w", o.GetKind(), strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/"), err)
		}
	}
	return nil
}
