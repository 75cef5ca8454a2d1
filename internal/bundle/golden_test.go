package bundle

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests get")

const (
	chartDir     = "../../test/testdata/chart"
	kustomizeDir = "../../test/testdata/kustomize/overlay"
)

// checkGolden compares got with testdata/<name>, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/bundle/ -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test ./internal/bundle/ -update rewrites it):\n%s", path, diff)
	}
}

// output is what kubectl pmw prints: the warnings (on stderr, here as comments) and the PMW.
func output(t *testing.T, objs []*unstructured.Unstructured, renderWarnings []Warning, opts Options, format string) []byte {
	t.Helper()
	pmw, warnings, err := Wrap(objs, opts)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	var b bytes.Buffer
	for _, w := range append(renderWarnings, warnings...) {
		b.WriteString("# warning: " + w.String() + "\n")
	}
	if err := Encode(&b, pmw, format); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b.Bytes()
}

// packageChart packages the test chart into dir, as helm package does, and returns the .tgz's path.
func packageChart(t *testing.T, dir string) string {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRenderHelmGolden(t *testing.T) {
	isolateHelm(t)
	tgz := packageChart(t, t.TempDir())
	cases := map[string]struct {
		helm   HelmOptions
		opts   Options
		format string
		golden string
	}{
		"chart directory, a split Deployment": {
			helm:   HelmOptions{Chart: chartDir, ReleaseName: "shop", Namespace: "apps"},
			opts:   Options{Namespace: "apps", Splits: []string{"Deployment/shop-webapp"}},
			golden: "chart.yaml",
		},
		"packaged chart: the same as the directory": {
			helm:   HelmOptions{Chart: tgz, ReleaseName: "shop", Namespace: "apps"},
			opts:   Options{Namespace: "apps", Splits: []string{"Deployment/shop-webapp"}},
			golden: "chart.yaml",
		},
		"CRDs included, values set, a progressive rollout to a named Placement, as JSON": {
			helm: HelmOptions{Chart: chartDir, ReleaseName: "shop", Namespace: "apps", IncludeCRDs: true,
				Set: []string{"replicaCount=5", "autoscaling.enabled=false"}, SetString: []string{"image.tag=2.0.0"}},
			opts: Options{Namespace: "apps", Name: "shop-eu", Placement: "eu", SplitAllWorkloads: true,
				Rollout: "Progressive", MaxConcurrency: "25%", MaxFailures: "1", ProgressDeadline: "10m",
				Labels: map[string]string{"team": "shop"}, Annotations: map[string]string{"example.com/owner": "shop team"}},
			format: "json",
			golden: "chart-crds.json",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, warnings, err := RenderHelm(context.Background(), tc.helm)
			if err != nil {
				t.Fatalf("RenderHelm: %v", err)
			}
			checkGolden(t, tc.golden, output(t, objs, warnings, tc.opts, tc.format))
		})
	}
}

func TestRenderKustomizeGolden(t *testing.T) {
	objs, err := RenderKustomize(kustomizeDir)
	if err != nil {
		t.Fatalf("RenderKustomize: %v", err)
	}
	// No name: the overlay's app.kubernetes.io/instance label gives it.
	checkGolden(t, "kustomize.yaml", output(t, objs, nil, Options{Namespace: "web", SplitAllWorkloads: true}, "yaml"))
}

func TestWrapGolden(t *testing.T) {
	f, err := os.Open("testdata/wrap-input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	objs, err := ReadManifests(f, "wrap-input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Name: "platform", Namespace: "platform", ClusterScoped: []string{"ClusterIssuer.cert-manager.io"},
		Splits: []string{"statefulsets.apps/cache/redis"}, Rollout: "ProgressivePerGroup", MinSuccessTime: "1m30s"}
	checkGolden(t, "wrap.yaml", output(t, objs, nil, opts, ""))
}

// TestWarningsAreOneLine keeps the warnings readable in a terminal: one line each.
func TestWarningsAreOneLine(t *testing.T) {
	isolateHelm(t)
	objs, warnings, err := RenderHelm(context.Background(), HelmOptions{Chart: chartDir})
	if err != nil {
		t.Fatal(err)
	}
	_, wrapWarnings, err := Wrap(objs, Options{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range append(warnings, wrapWarnings...) {
		if strings.Contains(w.String(), "\n") {
			t.Errorf("warning on several lines: %q", w.String())
		}
	}
}
