package kubectlpmw

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests get")

// result is what one run of kubectl-pmw gave.
type result struct {
	code        int
	stdout      string
	stderr      string
	stderrLines []string
}

// run runs kubectl-pmw with args and stdin, as a shell or Helm would.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), args, &Streams{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	r := result{code: code, stdout: out.String(), stderr: errOut.String()}
	if s := strings.TrimSuffix(r.stderr, "\n"); s != "" {
		r.stderrLines = strings.Split(s, "\n")
	}
	return r
}

// checkGolden compares got with testdata/<name>, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/kubectlpmw/ -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test ./internal/kubectlpmw/ -update rewrites it):\n%s", path, diff)
	}
}

// unreachableKubeconfig writes a kubeconfig whose API server refuses connections.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: me
  user: {token: abc}
contexts:
- name: hub
  context: {cluster: hub, user: me, namespace: apps}
current-context: hub
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every failure is one line on stderr, nothing on stdout, and the documented exit code.
func TestExitCodes(t *testing.T) {
	unreachable := unreachableKubeconfig(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := map[string]struct {
		args     []string
		stdin    string
		want     int
		wantErr  string
		wantsOut bool
	}{
		"version":                   {args: []string{"version", "--short"}, want: ExitOK, wantsOut: true},
		"help":                      {args: []string{"--help"}, want: ExitOK, wantsOut: true},
		"unknown command":           {args: []string{"frobnicate"}, want: ExitUsage, wantErr: `unknown command "frobnicate"`},
		"unknown flag":              {args: []string{"status", "web", "--frob"}, want: ExitUsage, wantErr: "unknown flag: --frob; see 'kubectl pmw status --help'"},
		"status without a name":     {args: []string{"status"}, want: ExitUsage, wantErr: "kubectl pmw status needs NAME"},
		"status with two names":     {args: []string{"status", "a", "b"}, want: ExitUsage, wantErr: `takes NAME, got "a b"`},
		"status, a bad -o":          {args: []string{"status", "web", "-o", "xml"}, want: ExitUsage, wantErr: `unknown output format "xml": use -o wide|yaml|json`},
		"status without kubeconfig": {args: []string{"status", "web"}, want: ExitHub, wantErr: "no kubeconfig for the hub: KUBECONFIG is "},
		"status, hub unreachable": {args: []string{"status", "web", "--kubeconfig", unreachable, "--request-timeout", "5s"}, want: ExitHub,
			wantErr: "cannot reach the hub at https://127.0.0.1:1"},
		"plan without input":       {args: []string{"plan"}, want: ExitUsage, wantErr: "plan takes -f FILE or a NAME"},
		"plan with both":           {args: []string{"plan", "web", "-f", "x.yaml"}, want: ExitUsage, wantErr: "plan takes -f FILE or a NAME"},
		"plan, not a PMW":          {args: []string{"plan", "-f", "-"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", want: ExitUsage, wantErr: "stdin holds ConfigMap a; plan takes exactly one PlacementManifestWork"},
		"plan, empty input":        {args: []string{"plan", "-f", "-"}, stdin: "", want: ExitUsage, wantErr: "stdin holds nothing; plan takes exactly one PlacementManifestWork"},
		"plan, hub unreachable":    {args: []string{"plan", "web", "--kubeconfig", unreachable}, want: ExitHub, wantErr: "cannot reach the hub"},
		"wrap, unreadable YAML":    {args: []string{"wrap", "-n", "apps", "--name", "x"}, stdin: "kind: [", want: ExitUsage, wantErr: "stdin: document 1"},
		"wrap, no namespace":       {args: []string{"wrap", "--name", "x"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", want: ExitUsage, wantErr: "no namespace: pass --namespace"},
		"wrap, a split of nothing": {args: []string{"wrap", "-n", "apps", "--name", "x", "--split", "Deployment/web"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", want: ExitUsage, wantErr: `split "Deployment/web" names no manifest`},
		"wrap, over the size limit": {args: []string{"wrap", "-n", "apps", "--name", "x", "--max-manifest-bytes", "10"}, stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", want: ExitUsage,
			wantErr: "more than the limit of 10 bytes"},
		"wrap, a bad label":                      {args: []string{"wrap", "-n", "apps", "--name", "x", "--label", "novalue"}, want: ExitUsage, wantErr: `--label "novalue": write key=value`},
		"wrap, a missing file":                   {args: []string{"wrap", "-n", "apps", "-f", "testdata/nope.yaml"}, want: ExitUsage, wantErr: "-f testdata/nope.yaml: no such file or directory"},
		"wrap, stdin twice":                      {args: []string{"wrap", "-n", "apps", "-f", "-", "-f", "-"}, want: ExitUsage, wantErr: "-f - is given twice"},
		"render, neither":                        {args: []string{"render", "-n", "apps"}, want: ExitUsage, wantErr: "render takes --helm CHART or --kustomize DIR"},
		"render, both":                           {args: []string{"render", "-n", "apps", "--helm", "c", "--kustomize", "k"}, want: ExitUsage, wantErr: "render takes --helm CHART or --kustomize DIR"},
		"render, a Helm flag for kustomize":      {args: []string{"render", "-n", "apps", "--kustomize", "k", "--set", "a=b"}, want: ExitUsage, wantErr: "--set is for --helm, not --kustomize"},
		"render, a chart that is not there":      {args: []string{"render", "-n", "apps", "--helm", "testdata/no-chart"}, want: ExitUsage, wantErr: "helm chart testdata/no-chart: "},
		"render, a folder without kustomization": {args: []string{"render", "-n", "apps", "--kustomize", "testdata/manifests"}, want: ExitUsage, wantErr: "kustomize testdata/manifests: "},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, tc.stdin, tc.args...)
			if r.code != tc.want {
				t.Errorf("exit code %d, want %d; stderr: %s", r.code, tc.want, r.stderr)
			}
			if tc.wantsOut != (r.stdout != "") {
				t.Errorf("stdout %q, want it empty: %v", r.stdout, !tc.wantsOut)
			}
			if tc.wantErr == "" {
				return
			}
			if len(r.stderrLines) != 1 || !strings.HasPrefix(r.stderrLines[0], "Error: ") || !strings.Contains(r.stderrLines[0], tc.wantErr) {
				t.Errorf("stderr %q, want one line \"Error: ...%s...\"", r.stderr, tc.wantErr)
			}
		})
	}
}

// Helm runs a post-renderer as `kubectl-pmw <the --post-renderer-args>`, pipes the rendered manifests to its
// stdin, and applies what it writes to stdout; a non-zero exit fails the release with stderr shown.
func TestWrapAsHelmPostRenderer(t *testing.T) {
	input, err := os.ReadFile("testdata/postrender-input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"wrap", "--namespace=shop", "--placement=prod", "--split=Deployment/shop", "--rollout=Progressive",
		"--max-concurrency=25%", "--label=team=payments", "--annotation=note=a=b,c"}
	r := run(t, string(input), args...)
	if r.code != ExitOK {
		t.Fatalf("exit code %d; stderr: %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("warnings for manifests that deserve none: %s", r.stderr)
	}
	// The name comes from the release's app.kubernetes.io/instance label.
	checkGolden(t, "postrender-output.yaml", r.stdout)

	again := run(t, string(input), args...)
	if again.stdout != r.stdout {
		t.Error("the same input gave different output")
	}

	// A failure writes nothing on stdout, so Helm applies nothing.
	bad := run(t, string(input)+"---\nkind: [\n", args...)
	if bad.code != ExitUsage || bad.stdout != "" || len(bad.stderrLines) != 1 {
		t.Errorf("bad input: exit %d, stdout %q, stderr %q; want exit 1, no stdout, one line", bad.code, bad.stdout, bad.stderr)
	}
}

// Files and folders are read in the order given, a folder's .yaml, .yml and .json files by name (its
// subfolders with -R); the output's order does not depend on it.
func TestWrapFiles(t *testing.T) {
	r := run(t, "", "wrap", "-f", "testdata/manifests", "--name", "web", "-n", "web", "--split-workloads", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit code %d; stderr: %s", r.code, r.stderr)
	}
	checkGolden(t, "wrap-files.json", r.stdout)

	recursive := run(t, "", "wrap", "-R", "-f", "testdata/manifests", "--name", "web", "-n", "web")
	if recursive.code != ExitOK {
		t.Fatalf("-R: exit code %d; stderr: %s", recursive.code, recursive.stderr)
	}
	if !strings.Contains(recursive.stdout, "kind: Namespace") {
		t.Errorf("-R left out the subfolder's Namespace:\n%s", recursive.stdout)
	}
	reordered := run(t, "", "wrap", "-f", "testdata/manifests/more", "-f", "testdata/manifests/b-deployment.json", "-f",
		"testdata/manifests/a-configmap.yaml", "--name", "web", "-n", "web")
	if reordered.stdout != recursive.stdout {
		t.Errorf("the order of -f changed the output:\n%s\nvs\n%s", reordered.stdout, recursive.stdout)
	}
}

func TestRender(t *testing.T) {
	const chart = "../../test/testdata/chart"
	args := []string{"render", "--helm", chart, "--release-name", "shop", "-n", "apps", "--set", "replicaCount=4",
		"--split", "Deployment/shop-webapp", "--placement", "prod"}
	r := run(t, "", args...)
	if r.code != ExitOK {
		t.Fatalf("exit code %d; stderr: %s", r.code, r.stderr)
	}
	checkGolden(t, "render-helm.yaml", r.stdout)
	checkGolden(t, "render-helm.stderr", r.stderr)
	if again := run(t, "", args...); again.stdout != r.stdout {
		t.Error("the same chart and values gave different output")
	}

	k := run(t, "", "render", "--kustomize", "../../test/testdata/kustomize/overlay", "--name", "web", "-n", "apps")
	if k.code != ExitOK {
		t.Fatalf("kustomize: exit code %d; stderr: %s", k.code, k.stderr)
	}
	if !strings.HasPrefix(k.stdout, "apiVersion: work.open-cluster-management.io/v1alpha1\nkind: PlacementManifestWork\n") {
		t.Errorf("kustomize: not a PlacementManifestWork:\n%s", k.stdout)
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := run(t, "", "completion", shell)
		if r.code != ExitOK || !strings.Contains(r.stdout, "kubectl-pmw") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, r.code, len(r.stdout))
		}
	}
	r := run(t, "", "__complete", "status", "web", "-o", "")
	if !strings.Contains(r.stdout, "wide\nyaml\njson\n") {
		t.Errorf("-o of status does not complete its formats:\n%s", r.stdout)
	}
}

// Every command says what it does and shows how, with the name the user types.
func TestHelp(t *testing.T) {
	root := NewRootCommand(&Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	var check func(cs []*cobra.Command)
	check = func(cs []*cobra.Command) {
		for _, c := range cs {
			if c.Hidden || c.Name() == "help" {
				continue
			}
			if c.Short == "" || (c.Long == "" && c.Name() != "version") || (c.Example == "" && c.Name() != "version") {
				t.Errorf("%s lacks a short or long description or examples", c.CommandPath())
			}
			if c.Name() != "completion" {
				check(c.Commands())
			}
		}
	}
	check(root.Commands())
	r := run(t, "", "status", "--help")
	if !strings.Contains(r.stdout, "Usage:\n  kubectl pmw status NAME [flags]") {
		t.Errorf("help does not say kubectl pmw:\n%s", r.stdout)
	}
}

func TestKeyValues(t *testing.T) {
	cases := map[string]struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		"none":                {},
		"values with = and ,": {in: []string{"a=1", "b=x=y,z", "c="}, want: map[string]string{"a": "1", "b": "x=y,z", "c": ""}},
		"a later value wins":  {in: []string{"a=1", "a=2"}, want: map[string]string{"a": "2"}},
		"no =":                {in: []string{"a"}, wantErr: true},
		"no key":              {in: []string{"=v"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := keyValues("--label", tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err != nil && ExitCode(err) != ExitUsage {
				t.Errorf("exit code %d, want %d", ExitCode(err), ExitUsage)
			}
		})
	}
}
