package planner

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
)

// Clusters with the same shares and the same override result share one encoding: the number of encodings
// follows the distinct results (regions × share combinations), not the clusters or the overrides.
func TestOverridesEncodeEachDistinctResultOnce(t *testing.T) {
	const clusters, regions = 1000, 10
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},` +
		`"spec":{"replicas":3000,"template":{"spec":{"containers":[{"name":"app","image":"web:1"}]}}}}`
	pmw := &workv1alpha1.PlacementManifestWork{Spec: workv1alpha1.PlacementManifestWorkSpec{
		ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(deployment)}},
			{RawExtension: runtime.RawExtension{Raw: []byte(configMap)}},
		}}},
		DistributionStrategy: []workv1alpha1.DistributionStrategy{{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}},
	}}
	// Five overrides, every one selecting every cluster: a regional registry, and four literal patches.
	overrides := []workv1alpha1.ClusterOverride{{Name: "mirror", Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
		Image: &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Expression: `cluster.labels["region"] + ".example.com"`}}}}
	for i := range 4 {
		overrides = append(overrides, workv1alpha1.ClusterOverride{Name: fmt.Sprintf("label-%d", i), Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}},
			Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchAdd, Path: fmt.Sprintf("/data/k%d", i), Value: &workv1alpha1.JSON{Raw: []byte(`"v"`)}}}})
	}
	set, err := override.Compile(overrides)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Overrides: set, ClusterFacts: map[string]override.Cluster{}}
	for i := range clusters {
		c := fmt.Sprintf("c%04d", i)
		in.Clusters = append(in.Clusters, c)
		in.ClusterFacts[c] = override.Cluster{Labels: map[string]string{"region": fmt.Sprintf("r%d", i%regions)}}
	}
	manifests, err := ParseTemplate(pmw)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compute(pmw, manifests, in)
	if err != nil {
		t.Fatal(err)
	}
	encodings := map[string]map[*byte]bool{"Deployment": {}, "ConfigMap": {}}
	for _, c := range in.Clusters {
		ms := plan.Manifests[c]
		if len(ms) != 2 {
			t.Fatalf("%s has %d manifests", c, len(ms))
		}
		encodings["Deployment"][&ms[0].Raw[0]] = true
		encodings["ConfigMap"][&ms[1].Raw[0]] = true
	}
	// Balance gives every cluster 3: one share combination.
	if n := len(encodings["Deployment"]); n != regions {
		t.Errorf("%d encodings of the Deployment, want one per region (%d)", n, regions)
	}
	if n := len(encodings["ConfigMap"]); n > regions {
		t.Errorf("%d encodings of the ConfigMap, want at most %d", n, regions)
	}
	if len(plan.OverrideFailures) != 0 {
		t.Errorf("failures: %v", plan.OverrideFailures)
	}
}
