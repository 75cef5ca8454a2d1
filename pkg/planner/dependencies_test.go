package planner

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// imageFinder is a DependencyFinder that answers by the image of the Deployment as the overrides leave it:
// byImage's error, or the template's dependencies (same). It counts the questions.
type imageFinder struct {
	byImage map[string]error
	asked   []string
}

func (f *imageFinder) Find(cluster string, manifests []template.Manifest) ([]template.Manifest, bool, error) {
	f.asked = append(f.asked, cluster)
	if err := f.byImage[imageIn(manifests[0].Object.Object)]; err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// imageIn is the image of a Deployment's first container.
func imageIn(obj map[string]any) string {
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	return spec["containers"].([]any)[0].(map[string]any)["image"].(string)
}

// TestDependencyFailuresArePerCluster: when the finder cannot find the dependencies of the manifests as a
// cluster's overrides leave them (*InvalidError), that cluster alone fails (Plan.DependencyFailures, no
// manifests, no override outcomes: its work is kept) and the others are planned; clusters alike are asked once;
// an override that fails is the cluster's failure first; another error fails the plan.
func TestDependencyFailuresArePerCluster(t *testing.T) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},` +
		`"spec":{"replicas":6,"template":{"spec":{"containers":[{"name":"app","image":"web:1"}]}}}}`
	pmw := &workv1alpha1.PlacementManifestWork{Spec: workv1alpha1.PlacementManifestWorkSpec{
		ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(deployment)}},
			{RawExtension: runtime.RawExtension{Raw: []byte(configMap)}},
		}}},
		DistributionStrategy: []workv1alpha1.DistributionStrategy{{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}},
	}}
	missing := &InvalidError{Reason: workv1alpha1.ReasonDependencyNotFound,
		Message: "Not in namespace default on the hub: ConfigMap settings-eu (needed by Deployment.apps default/web as the overrides leave it for cluster eu-1)"}
	eu := &workv1alpha1.OverrideClusters{Names: []string{"eu-1", "eu-2"}}
	image := func(name string, clusters *workv1alpha1.OverrideClusters, img string) workv1alpha1.ClusterOverride {
		return workv1alpha1.ClusterOverride{Name: name, Clusters: clusters, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
			Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/template/spec/containers/0/image", Value: &workv1alpha1.JSON{Raw: []byte(`"` + img + `"`)}}}}
	}
	cases := map[string]struct {
		overrides []workv1alpha1.ClusterOverride
		byImage   map[string]error
		// planned are the clusters with manifests, failed those in DependencyFailures, overrideFailed those
		// in OverrideFailures; asked how many times the finder is asked; wantErr the plan's error.
		planned, failed, overrideFailed []string
		asked                           int
		wantErr                         string
	}{
		"a dependency of eu's overridden Deployment is missing: eu alone fails, asked once": {
			overrides: []workv1alpha1.ClusterOverride{image("eu", eu, "web:eu")},
			byImage:   map[string]error{"web:eu": missing},
			planned:   []string{"us-1"}, failed: []string{"eu-1", "eu-2"}, asked: 1,
		},
		"an interpreter that fails on eu-2's overridden Deployment: eu-2 alone fails": {
			overrides: []workv1alpha1.ClusterOverride{image("eu-2", &workv1alpha1.OverrideClusters{Names: []string{"eu-2"}}, "web:broken")},
			byImage:   map[string]error{"web:broken": &InvalidError{Reason: workv1alpha1.ReasonInterpreterFailed, Message: "boom"}},
			planned:   []string{"eu-1", "us-1"}, failed: []string{"eu-2"}, asked: 1,
		},
		"found: every cluster planned": {
			overrides: []workv1alpha1.ClusterOverride{image("eu", eu, "web:eu")},
			planned:   []string{"eu-1", "eu-2", "us-1"}, asked: 1,
		},
		"an override that fails is the cluster's failure first: the finder is not asked": {
			overrides: []workv1alpha1.ClusterOverride{{Name: "broken", Clusters: eu, Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/nothing/here", Value: &workv1alpha1.JSON{Raw: []byte(`1`)}}}}},
			planned: []string{"us-1"}, overrideFailed: []string{"eu-1", "eu-2"},
		},
		"an error of the API server fails the plan": {
			overrides: []workv1alpha1.ClusterOverride{image("eu", eu, "web:eu")},
			byImage:   map[string]error{"web:eu": errors.New("reading ConfigMap default/settings-eu: timeout")},
			asked:     1, wantErr: "timeout",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, err := override.Compile(tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			f := &imageFinder{byImage: tc.byImage}
			in := Input{Clusters: []string{"eu-1", "eu-2", "us-1"}, Overrides: set, ClusterFacts: map[string]override.Cluster{}, Dependencies: f}
			manifests, err := ParseTemplate(pmw)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Compute(pmw, manifests, in)
			if len(f.asked) != tc.asked {
				t.Errorf("the finder was asked %d times (%v), want %d", len(f.asked), f.asked, tc.asked)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(plan.Manifests)); !slices.Equal(got, tc.planned) {
				t.Errorf("planned %v, want %v", got, tc.planned)
			}
			if got := slices.Sorted(maps.Keys(plan.DependencyFailures)); !slices.Equal(got, tc.failed) {
				t.Errorf("dependency failures %v, want %v", got, tc.failed)
			}
			if got := slices.Sorted(maps.Keys(plan.OverrideFailures)); !slices.Equal(got, tc.overrideFailed) {
				t.Errorf("override failures %v, want %v", got, tc.overrideFailed)
			}
			for _, c := range tc.failed {
				if e := plan.DependencyFailures[c]; e == nil || !errors.Is(e, tc.byImage[imageOf(tc.overrides, c)]) {
					t.Errorf("%s: %v, want the finder's error", c, e)
				}
				if !plan.Kept(c) || plan.OverrideOutcomes[c] != nil || plan.Shares[c] == nil {
					t.Errorf("%s: kept %v, outcomes %v, shares %v: want kept, no outcomes, its shares planned", c, plan.Kept(c), plan.OverrideOutcomes[c], plan.Shares[c])
				}
			}
			for _, c := range tc.planned {
				if plan.Kept(c) {
					t.Errorf("%s is planned and kept", c)
				}
			}
		})
	}
}

// imageOf is the image the overrides give cluster c (the first that names it).
func imageOf(overrides []workv1alpha1.ClusterOverride, c string) string {
	for _, o := range overrides {
		if o.Clusters != nil && slices.Contains(o.Clusters.Names, c) && len(o.Patches) > 0 {
			return strings.Trim(string(o.Patches[0].Value.Raw), `"`)
		}
	}
	return ""
}
