package argocd_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// plugin is the part of plugin.yaml the repo server runs.
type plugin struct {
	Kind string `json:"kind"`
	Spec struct {
		Generate struct {
			Command []string `json:"command"`
			Args    []string `json:"args"`
		} `json:"generate"`
		Parameters struct {
			Static []struct {
				Name string `json:"name"`
			} `json:"static"`
		} `json:"parameters"`
	} `json:"spec"`
}

// TestPluginGenerates runs the plugin's generate command as Argo CD's repo server does (in the source folder,
// with the build environment and the parameters as PARAM_* variables, kubectl-pmw on PATH) over the chart and
// the kustomize folder of test/testdata, and decodes the PlacementManifestWork it prints.
func TestPluginGenerates(t *testing.T) {
	raw, err := os.ReadFile("plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p plugin
	if err := yaml.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "ConfigManagementPlugin" || len(p.Spec.Generate.Command) == 0 {
		t.Fatalf("plugin.yaml is not a ConfigManagementPlugin with a generate command: %+v", p)
	}
	// Argo CD hands parameter foo-bar to the command as PARAM_FOO_BAR: each declared one must be read.
	script := strings.Join(p.Spec.Generate.Args, "\n")
	for _, param := range p.Spec.Parameters.Static {
		if env := "PARAM_" + strings.ToUpper(strings.ReplaceAll(param.Name, "-", "_")); !strings.Contains(script, env) {
			t.Errorf("parameter %s is declared but the command does not read %s", param.Name, env)
		}
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-pmw"), "../../cmd/kubectl-pmw")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-pmw: %v\n%s", err, out)
	}

	run := func(t *testing.T, dir string, env ...string) (*workv1alpha1.PlacementManifestWork, string, error) {
		t.Helper()
		cmd := exec.Command(p.Spec.Generate.Command[0], append(p.Spec.Generate.Command[1:], p.Spec.Generate.Args...)...)
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(),
			"ARGOCD_APP_NAME=shop", "ARGOCD_APP_NAMESPACE=apps", "ARGOCD_APP_REVISION=abc123"}, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, stderr.String(), err
		}
		pmw := &workv1alpha1.PlacementManifestWork{}
		if err := yaml.UnmarshalStrict(stdout.Bytes(), pmw); err != nil {
			t.Fatalf("the output is not one PlacementManifestWork: %v\n%s", err, stdout.String())
		}
		return pmw, stderr.String(), nil
	}
	kinds := func(pmw *workv1alpha1.PlacementManifestWork) []string {
		var out []string
		for _, m := range pmw.Spec.ManifestWorkTemplate.Workload.Manifests {
			var obj struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(m.Raw, &obj); err != nil {
				t.Fatal(err)
			}
			out = append(out, obj.Kind)
		}
		return out
	}

	t.Run("a Helm chart", func(t *testing.T) {
		pmw, stderr, err := run(t, "../../test/testdata/chart", "PARAM_PLACEMENT=eu", "PARAM_SPLIT=Deployment/shop-webapp")
		if err != nil {
			t.Fatalf("generate: %v\n%s", err, stderr)
		}
		if pmw.Name != "shop" || pmw.Namespace != "apps" {
			t.Errorf("PlacementManifestWork %s/%s, want apps/shop (the Application's name and destination namespace)", pmw.Namespace, pmw.Name)
		}
		if pmw.Spec.PlacementRef == nil || pmw.Spec.PlacementRef.Name != "eu" {
			t.Errorf("placementRef %+v, want eu", pmw.Spec.PlacementRef)
		}
		if len(pmw.Spec.DistributionStrategy) != 1 || pmw.Spec.DistributionStrategy[0].Type != workv1alpha1.DistributionSplit {
			t.Errorf("distributionStrategy %+v, want one Split", pmw.Spec.DistributionStrategy)
		}
		if got := strings.Join(kinds(pmw), ","); !strings.Contains(got, "Deployment") {
			t.Errorf("manifests %s lack the chart's Deployment", got)
		}
	})

	t.Run("a kustomize folder", func(t *testing.T) {
		pmw, stderr, err := run(t, "../../test/testdata/kustomize/overlay", "PARAM_NAME=shop-eu", "PARAM_SPLIT_WORKLOADS=true")
		if err != nil {
			t.Fatalf("generate: %v\n%s", err, stderr)
		}
		if pmw.Name != "shop-eu" || len(pmw.Spec.DistributionStrategy) == 0 {
			t.Errorf("PlacementManifestWork %s with %d distribution entries, want shop-eu with its workloads split", pmw.Name, len(pmw.Spec.DistributionStrategy))
		}
	})

	t.Run("a folder that is neither", func(t *testing.T) {
		_, stderr, err := run(t, t.TempDir())
		if err == nil || !strings.Contains(stderr, "neither a Chart.yaml nor a kustomization.yaml") {
			t.Errorf("err %v, stderr %q: want a failure naming what is missing", err, stderr)
		}
	})
}
