package envhub

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleDirOnAFreshCache: on a machine whose module cache does not hold a module yet (the cache is empty
// here, and the machine's own cache serves as the proxy), the module's directory is still one with its go.mod:
// "go list -m" named none there, and a fresh machine's bench looked for OCM's CRDs relative to its working
// directory. A module neither cached nor fetchable is an error, not an empty path.
func TestModuleDirOnAFreshCache(t *testing.T) {
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOPROXY", "file://"+filepath.Join(strings.TrimSpace(string(cache)), "cache", "download"))
	t.Setenv("GOFLAGS", "-modcacherw") // so the test's temporary cache can be removed
	t.Setenv("GOMODCACHE", t.TempDir())
	dir, err := ModuleDir("open-cluster-management.io/api")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Errorf("module directory %q: %v", dir, err)
	}

	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPROXY", "off")
	if dir, err := ModuleDir("open-cluster-management.io/api"); err == nil {
		t.Errorf("a module neither cached nor fetchable: directory %q, want an error", dir)
	}
}
