// Package layout checks the repository's package map: the domain logic under pkg/ stays pure.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/open-cluster-management-io/placement-manifestwork"

// forbidden are imports that make a package do I/O or depend on the code around the pure core.
var forbidden = []string{
	"sigs.k8s.io/controller-runtime/pkg/client",
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/rest",
	"sigs.k8s.io/controller-runtime/pkg/envtest",
	module + "/controllers",
	module + "/internal/",
	module + "/test/",
	module + "/cmd/",
}

// Every package under pkg/ computes over API objects: no client, no envtest, nothing of controllers/,
// internal/, test/ or cmd/, directly or through another package.
func TestPkgIsPure(t *testing.T) {
	pkgs := deps(t, module+"/pkg/...")
	checked := 0
	for pkg, ds := range pkgs {
		if !strings.HasPrefix(pkg, module+"/pkg/") {
			continue
		}
		checked++
		for _, dep := range ds {
			for _, f := range forbidden {
				if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d packages under pkg/, expected the domain packages", checked)
	}
}

// The binaries and the engines behind them (the sandbox, envhub) ship without the test harness: nothing under
// cmd/ or internal/ depends on test/, directly or through another package; test/ uses internal/ instead.
func TestProductDoesNotImportTests(t *testing.T) {
	pkgs := deps(t, module+"/cmd/...", module+"/internal/...")
	checked := 0
	for pkg, ds := range pkgs {
		if !strings.HasPrefix(pkg, module+"/cmd") && !strings.HasPrefix(pkg, module+"/internal/") {
			continue
		}
		checked++
		for _, dep := range ds {
			if strings.HasPrefix(dep, module+"/test/") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("checked %d packages under cmd/ and internal/, expected the binaries and their engines", checked)
	}
}

// deps lists the packages of patterns and everything they import, each with all its dependencies (go list -deps;
// test files not included).
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}} {{join .Deps " "}}`}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if fields := strings.Fields(line); len(fields) > 0 {
			pkgs[fields[0]] = fields[1:]
		}
	}
	return pkgs
}
