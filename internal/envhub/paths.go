package envhub

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ocmCRDs are the OCM CRDs the manager and OCM's placement controller read, relative to the
// open-cluster-management.io/api module.
var ocmCRDs = []string{
	"cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml",
	"cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml",
	"cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml",
	"cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml",
	"cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml",
	"cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml",
	"cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml",
	"work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml",
}

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ModuleDir returns the directory of a module of this repository's build, from the module cache.
func ModuleDir(module string) (string, error) { return ModuleDirIn(RepoRoot(), module) }

// ModuleDirIn returns the directory of a module of the build in dir, from the module cache, downloading it
// first: on a fresh machine the cache may not hold it yet, and "go list -m" then names no directory at all.
func ModuleDirIn(dir, module string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	var got struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &got); jsonErr == nil && got.Error != "" {
		return "", fmt.Errorf("locating module %s: %s", module, got.Error)
	}
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w", module, err)
	}
	if got.Dir == "" {
		return "", fmt.Errorf("locating module %s: go mod download named no directory", module)
	}
	return got.Dir, nil
}

// CRDPaths lists the CRD files of the hub: this project's and OCM's.
func CRDPaths() ([]string, error) {
	dir, err := ModuleDir("open-cluster-management.io/api")
	if err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(RepoRoot(), "config", "crd", "bases")}
	for _, p := range ocmCRDs {
		paths = append(paths, filepath.Join(dir, p))
	}
	return paths, nil
}

// AssetsDir returns the envtest binaries: KUBEBUILDER_ASSETS when set, otherwise the ones hack/kube-binaries.sh
// builds (and builds them when missing).
func AssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "kube-binaries.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building envtest binaries: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
