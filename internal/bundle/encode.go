package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// sortManifests orders manifests as Helm installs them (Namespaces, then ServiceAccounts, Secrets, ConfigMaps,
// CRDs, RBAC, Services, workloads, ...; kinds Helm does not list last, by kind), then by group, namespace, name
// and apiVersion, so the same objects give the same order whatever order they came in.
func sortManifests(ms []*unstructured.Unstructured) {
	slices.SortStableFunc(ms, func(a, b *unstructured.Unstructured) int {
		return template.CompareInstallOrder(template.RefOf(a), template.RefOf(b))
	})
}

// Encode writes pmw as YAML (format "yaml" or "") or JSON ("json"), deterministically: object keys sorted,
// apiVersion and kind set, no status and no creationTimestamp. It does not reorder the manifests (Wrap sorted
// them).
func Encode(w io.Writer, pmw *workv1alpha1.PlacementManifestWork, format string) error {
	raw, err := json.Marshal(pmw)
	if err != nil {
		return fmt.Errorf("encoding the PlacementManifestWork: %v", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("encoding the PlacementManifestWork: %v", err)
	}
	obj["apiVersion"] = workv1alpha1.GroupVersion.String()
	obj["kind"] = "PlacementManifestWork"
	delete(obj, "status")
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	// encoding/json sorts map keys, the manifests' too, as they were decoded into maps above.
	j, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding the PlacementManifestWork: %v", err)
	}
	var out []byte
	switch strings.ToLower(format) {
	case "", "yaml", "yml":
		if out, err = yaml.JSONToYAML(j); err != nil {
			return fmt.Errorf("encoding the PlacementManifestWork as YAML: %v", err)
		}
	case "json":
		var buf bytes.Buffer
		if err := json.Indent(&buf, j, "", "  "); err != nil {
			return fmt.Errorf("encoding the PlacementManifestWork as JSON: %v", err)
		}
		buf.WriteByte('\n')
		out = buf.Bytes()
	default:
		return fmt.Errorf("output format %q: use yaml or json", format)
	}
	_, err = w.Write(out)
	return err
}
