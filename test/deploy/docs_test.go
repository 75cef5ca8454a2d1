package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reasonFiles hold the reason constants a user can meet in a PlacementManifestWork's status: condition reasons
// and unhealthy-cluster reasons (api), and the per-manifest health reasons (pkg/health).
var reasonFiles = []string{"api/v1alpha1/conditions.go", "pkg/health/interpret.go"}

// stringConstants returns the string constants of a Go file whose names start with prefix, by value.
func stringConstants(t *testing.T, rel, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, rel), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[v] = name.Name
			}
		}
	}
	return out
}

// TestTroubleshootingCoversEveryReason fails when a condition type or reason constant is not explained in
// docs/troubleshooting.md (written as `Reason`).
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	total := 0
	for _, rel := range reasonFiles {
		for _, prefix := range []string{"Reason", "Condition"} {
			for value, name := range stringConstants(t, rel, prefix) {
				total++
				if !strings.Contains(doc, "`"+value+"`") {
					t.Errorf("docs/troubleshooting.md does not explain %s (%s.%s)", value, rel, name)
				}
			}
		}
	}
	if total < 20 {
		t.Fatalf("found only %d reason constants in %v: has the code moved?", total, reasonFiles)
	}
}

// operatorDocs are the docs test/deploy owns.
var operatorDocs = []string{"install.md", "operating.md", "troubleshooting.md", "migrating-from-manifestworkreplicaset.md", "user-guide.md"}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks the relative links of the operator docs point at files that exist.
func TestDocsLinks(t *testing.T) {
	for _, name := range operatorDocs {
		data, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if target == "rollout.md" {
				continue // docs/rollout.md comes with spec.rolloutStrategy, written alongside it
			}
			if _, err := os.Stat(filepath.Join(root, "docs", target)); err != nil {
				t.Errorf("docs/%s links to %s, which does not exist", name, m[1])
			}
		}
	}
}

var yamlBlockRE = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// TestDocsExamplesApply applies every complete object in the YAML examples of the operator docs to the hub with
// a dry run: the worked examples must be accepted as written. Kinds the hub does not serve (Argo CD's
// Application, Flux's HelmRelease) are skipped; fragments without apiVersion and kind are not objects.
func TestDocsExamplesApply(t *testing.T) {
	c, w := hubClient(t)
	applied := 0
	for _, name := range operatorDocs {
		data, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range yamlBlockRE.FindAllStringSubmatch(string(data), -1) {
			for _, o := range decodeAll(t, []byte(block[1])) {
				if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
					continue
				}
				gvk := o.GroupVersionKind()
				if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
					t.Logf("docs/%s: %s is not served by the test hub; not applied", name, gvk)
					continue
				}
				t.Run(name+"/"+o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
					if ns := o.GetNamespace(); ns != "" {
						// The example's namespace, for real: a dry run does not create it.
						ensureNamespaces(t, c, []*unstructured.Unstructured{{Object: map[string]any{
							"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}})
					}
					dryRunApply(t, c, w, []*unstructured.Unstructured{o})
				})
				applied++
			}
		}
	}
	if applied < 5 {
		t.Fatalf("only %d example objects found in the docs", applied)
	}
}
