//go:build e2e

package stack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the programs the stack runs, all built from Go modules by the repository's hack scripts.
type Binaries struct {
	// KubeDir holds kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kubectl
	// (hack/kube-binaries.sh --all).
	KubeDir string
	// OCMDir holds OCM's placement and work binaries (hack/ocm-binaries.sh).
	OCMDir string
	// KwokDir holds kwok and stages.yaml, the kwok stages it runs with (hack/kwok-binary.sh).
	KwokDir string
	// Manager is the PlacementManifestWork manager built from ./cmd of this checkout.
	Manager string
	// HelmDir holds helm (hack/helm-binary.sh), which the Helm post-renderer scenario runs.
	HelmDir string
	// Plugin is the kubectl plugin built from ./cmd/kubectl-pmw of this checkout.
	Plugin string
	// ScoreAgent is the score agent built from ./cmd/score-agent of this checkout, run once per spoke.
	ScoreAgent string
	// Kubectl is kubectl (hack/kube-binaries.sh --all, in KubeDir), which the transparent-mode scenario runs
	// against the fleet API server.
	Kubectl string
}

// BuildBinaries builds what is missing and returns where everything is. The scripts cache their builds under
// bin/, so only the first call on a machine is slow (see docs/e2e.md); the manager is rebuilt from the working
// tree every time (seconds with a warm Go cache) so the suite always tests the code in front of it.
func BuildBinaries(ctx context.Context, root string, progress io.Writer) (Binaries, error) {
	var b Binaries
	var err error
	if b.KubeDir, err = runScript(ctx, root, progress, "hack/kube-binaries.sh", "--all"); err != nil {
		return b, err
	}
	b.Kubectl = filepath.Join(b.KubeDir, "kubectl")
	if b.OCMDir, err = runScript(ctx, root, progress, "hack/ocm-binaries.sh", "placement", "work"); err != nil {
		return b, err
	}
	if b.KwokDir, err = runScript(ctx, root, progress, "hack/kwok-binary.sh"); err != nil {
		return b, err
	}
	if b.HelmDir, err = runScript(ctx, root, progress, "hack/helm-binary.sh"); err != nil {
		return b, err
	}
	// bin/e2e/, not bin/manager, so a `make build` running alongside is not overwritten half-way.
	b.Manager = filepath.Join(root, "bin", "e2e", "manager")
	// Plain flags (no -trimpath, no CGO_ENABLED=0, unlike `make build`): the packages are then the ones go test
	// has just compiled for the suite, so even on a cold Go cache this takes seconds instead of minutes.
	b.Plugin = filepath.Join(root, "bin", "e2e", "kubectl-pmw")
	b.ScoreAgent = filepath.Join(root, "bin", "e2e", "score-agent")
	for _, build := range []struct{ out, pkg, what string }{
		{b.Manager, "./cmd", "the manager"},
		{b.Plugin, "./cmd/kubectl-pmw", "kubectl-pmw"},
		{b.ScoreAgent, "./cmd/score-agent", "the score agent"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", build.out, build.pkg)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = progress, progress
		if err := cmd.Run(); err != nil {
			return b, fmt.Errorf("building %s: %w", build.what, err)
		}
	}
	return b, nil
}

// runScript runs a hack script, which prints the directory of its binaries on stdout and build progress on
// stderr.
func runScript(ctx context.Context, root string, progress io.Writer, script string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, script), args...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s %s: %w", script, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out.String()), nil
}
