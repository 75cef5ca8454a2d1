package bundle

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// isolateHelm points Helm's configuration and cache at an empty directory, so no test reads the user's.
func isolateHelm(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HELM_REGISTRY_CONFIG", filepath.Join(dir, "registry.json"))
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(dir, "repositories.yaml"))
	t.Setenv("HELM_REPOSITORY_CACHE", filepath.Join(dir, "cache"))
}

// writeChart writes a chart of the given files (path: content) into a new directory and returns it.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const chartYAML = "apiVersion: v2\nname: tiny\nversion: 0.1.0\n"

func encoded(t *testing.T, objs []*unstructured.Unstructured, opts Options) []byte {
	t.Helper()
	pmw, _, err := Wrap(objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Encode(&b, pmw, "yaml"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The same input gives the same bytes: rendered again, or in another order.
func TestDeterminism(t *testing.T) {
	isolateHelm(t)
	render := map[string]func() []*unstructured.Unstructured{
		"helm": func() []*unstructured.Unstructured {
			objs, _, err := RenderHelm(context.Background(), HelmOptions{Chart: chartDir, IncludeCRDs: true})
			if err != nil {
				t.Fatal(err)
			}
			return objs
		},
		"kustomize": func() []*unstructured.Unstructured {
			objs, err := RenderKustomize(kustomizeDir)
			if err != nil {
				t.Fatal(err)
			}
			return objs
		},
		"wrap": func() []*unstructured.Unstructured {
			f, err := os.Open("testdata/wrap-input.yaml")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			objs, err := ReadManifests(f, "wrap-input.yaml")
			if err != nil {
				t.Fatal(err)
			}
			return objs
		},
	}
	opts := Options{Name: "x", Namespace: "apps", SplitAllWorkloads: true}
	for name, objsOf := range render {
		t.Run(name, func(t *testing.T) {
			want := encoded(t, objsOf(), opts)
			if got := encoded(t, objsOf(), opts); !bytes.Equal(want, got) {
				t.Fatalf("rendered twice, different bytes:\n%s", cmp.Diff(string(want), string(got)))
			}
			for seed := range uint64(20) {
				objs := objsOf()
				rand.New(rand.NewPCG(seed, seed)).Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
				if got := encoded(t, objs, opts); !bytes.Equal(want, got) {
					t.Fatalf("shuffled (seed %d), different bytes:\n%s", seed, cmp.Diff(string(want), string(got)))
				}
			}
		})
	}
}

func TestRenderHelmDefaults(t *testing.T) {
	isolateHelm(t)
	objs, _, err := RenderHelm(context.Background(), HelmOptions{Chart: chartDir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, objectID(o))
	}
	slices.Sort(names)
	// The release is named like the chart; hooks and tests are returned for Wrap to judge; the CRD is left out.
	want := []string{
		"ConfigMap default/webapp-webapp",
		"Deployment.apps webapp-webapp",
		"HorizontalPodAutoscaler.autoscaling webapp-webapp",
		"Job.batch webapp-webapp-cleanup",
		"Job.batch webapp-webapp-migrate",
		"Pod webapp-webapp-test-connection",
		"Secret webapp-webapp-db",
		"Service webapp-webapp",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestRenderHelmWarnings(t *testing.T) {
	isolateHelm(t)
	cases := map[string]struct {
		files map[string]string
		opts  HelmOptions
		want  []string
	}{
		"a random value": {
			files: map[string]string{"Chart.yaml": chartYAML, "templates/s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {p: {{ randAlphaNum 12 | quote }}}\n" +
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"},
			want: []string{"Secret s: renders differently every time (a random value, a generated certificate or the time in the chart's templates): each render changes the PlacementManifestWork and so every cluster's ManifestWork; set the value (--set, --values) so it is fixed"},
		},
		"deprecated, CRDs left out": {
			files: map[string]string{"Chart.yaml": chartYAML + "deprecated: true\n", "templates/c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
				"crds/b.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: b.example.com}\n",
				"crds/a.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.com}\n"},
			want: []string{"chart tiny: the chart is deprecated",
				"chart tiny: the CustomResourceDefinitions of its crds/ folder (tiny/crds/a.yaml, tiny/crds/b.yaml) are left out: pass --include-crds to deliver them too, or install them on the clusters another way"},
		},
		"CRDs included": {
			files: map[string]string{"Chart.yaml": chartYAML, "crds/a.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.com}\n"},
			opts:  HelmOptions{IncludeCRDs: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.opts.Chart = writeChart(t, tc.files)
			_, warnings, err := RenderHelm(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warnings {
				got = append(got, w.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// Errors name the chart, say what went wrong and what to do, on one line. Helm's own part of a message may
// change between Helm versions, so it is matched by a pattern.
func TestRenderHelmErrors(t *testing.T) {
	isolateHelm(t)
	cases := map[string]struct {
		files   map[string]string // a chart written for the case; none: opts.Chart as given
		opts    HelmOptions
		wantErr string // a regular expression for the whole message
	}{
		"a template that fails": {opts: HelmOptions{Chart: chartDir, Set: []string{"image.repository=null"}},
			wantErr: `^helm chart ../../test/testdata/chart: rendering: .*image.repository is required; fix the chart or its values$`},
		"YAML a template breaks": {files: map[string]string{"Chart.yaml": chartYAML, "templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n"},
			wantErr: `^helm chart \S+: rendering: .*tiny/templates/a.yaml.*; fix the chart or its values$`},
		"no such chart": {opts: HelmOptions{Chart: "./no-such-chart"},
			wantErr: `^helm chart ./no-such-chart: no such chart directory or file; name a chart directory, a packaged chart \(.tgz\), an oci:// reference, or repo/chart$`},
		"a repository Helm does not know": {opts: HelmOptions{Chart: "nosuchrepo/web"},
			wantErr: `^helm chart nosuchrepo/web: .*nosuchrepo.*; check the chart name and --version, and that helm repo list has its repository \(or pass --repo\)$`},
		"a registry that does not answer": {opts: HelmOptions{Chart: "oci://127.0.0.1:1/charts/web", Version: "1.0.0", PlainHTTP: true},
			wantErr: `^helm chart oci://127.0.0.1:1/charts/web: .*connection refused; check the reference, --version and your registry login \(helm registry login\)$`},
		"dependencies not built": {files: map[string]string{"Chart.yaml": chartYAML + "dependencies:\n- {name: redis, version: 1.0.0, repository: oci://example.com/charts}\n"},
			wantErr: `^helm chart \S+: found in Chart.yaml, but missing in charts/ directory: redis; run helm dependency build on the chart first$`},
		"a library chart": {files: map[string]string{"Chart.yaml": chartYAML + "type: library\n"},
			wantErr: `^helm chart \S+: a library chart cannot be rendered on its own; render a chart that depends on it$`},
		"a Kubernetes version the chart refuses": {files: map[string]string{"Chart.yaml": chartYAML + "kubeVersion: '>=1.36.0-0'\n"},
			wantErr: `^helm chart \S+: rendering: chart requires kubeVersion: >=1.36.0-0 which is incompatible with Kubernetes v1.35.0; fix the chart or its values$`},
		"a Kubernetes version that is not one": {opts: HelmOptions{Chart: chartDir, KubeVersion: "latest"},
			wantErr: `^helm chart ../../test/testdata/chart: kube version "latest": .*$`},
		"a values file that is missing": {opts: HelmOptions{Chart: chartDir, ValuesFiles: []string{"no-such-values.yaml"}},
			wantErr: `^helm chart ../../test/testdata/chart: values: .*no-such-values.yaml.*$`},
		"a --set that does not parse": {opts: HelmOptions{Chart: chartDir, Set: []string{"a[=b"}},
			wantErr: `^helm chart ../../test/testdata/chart: values: .*$`},
		"no chart": {wantErr: `^no chart: name a chart directory, a packaged chart \(.tgz\) or an oci:// reference$`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.files != nil {
				tc.opts.Chart = writeChart(t, tc.files)
			}
			_, _, err := RenderHelm(context.Background(), tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q\ndoes not match %s (on one line)", err, tc.wantErr)
			}
		})
	}
}

func TestRenderKustomizeErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- missing.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ dir, wantErr string }{
		"a resource that is missing": {dir: dir, wantErr: `^kustomize \S+: .*missing.yaml.*; fix the kustomization$`},
		"no kustomization":           {dir: "testdata", wantErr: `^kustomize testdata: .*kustomization.*; fix the kustomization$`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RenderKustomize(tc.dir)
			if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v\ndoes not match %s (on one line)", err, tc.wantErr)
			}
		})
	}
}

// DefaultKubeVersion follows the Kubernetes libraries of go.mod.
func TestDefaultKubeVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s.io/client-go v0\.(\d+)\.`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/client-go")
	}
	if want := "v1." + string(m[1]) + ".0"; DefaultKubeVersion != want {
		t.Errorf("DefaultKubeVersion is %s, go.mod's k8s.io/client-go is Kubernetes %s: update it", DefaultKubeVersion, want)
	}
}
