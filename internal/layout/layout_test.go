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
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/pkg/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module+"/pkg/") {
			continue
		}
		checked++
		for _, dep := range fields[1:] {
			for _, f := range forbidden {
				if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
					t.Errorf("%s depends on %s", fields[0], dep)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d packages under pkg/, expected the domain packages", checked)
	}
}
