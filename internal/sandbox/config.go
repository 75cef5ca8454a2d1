package sandbox

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Behavior is how the simulated work agent of one cluster reports the ManifestWorks it is given.
type Behavior string

const (
	// BehaviorHealthy reports every work Applied and Available, and its workloads ready after a short delay.
	BehaviorHealthy Behavior = "healthy"
	// BehaviorFailApply reports every work Applied=False, as an agent whose apply is refused would.
	BehaviorFailApply Behavior = "fail-apply"
	// BehaviorNeverReady reports every work Applied and Available (its resources exist), but its workloads
	// never become ready, so the work stays Progressing and turns Degraded.
	BehaviorNeverReady Behavior = "never-ready"
)

// Config describes one sandbox run.
type Config struct {
	// Clusters is how many ManagedClusters to simulate.
	Clusters int
	// Namespaces are bound to the sandbox's ManagedClusterSet besides SampleNamespace, so PlacementManifestWorks
	// there can place onto the clusters.
	Namespaces []string
	// FailApply and NeverReady name clusters whose agent misbehaves (see Behavior).
	FailApply  []string
	NeverReady []string

	// Duration, when set, ends the run after that long.
	Duration time.Duration
	// Once ends the run as soon as every sample PlacementManifestWork has settled (see Settled); Timeout bounds
	// the wait, and running out of it is an error.
	Once    bool
	Timeout time.Duration

	// Keep leaves the run's folder (kubeconfig, logs) in place at exit.
	Keep bool
	// ReadyDelay is how long after a work's new generation its workloads report ready.
	ReadyDelay time.Duration
	// Refresh is how often the live view is redrawn on a terminal; off a terminal a block is printed at most
	// every CompactEvery.
	Refresh      time.Duration
	CompactEvery time.Duration

	// RepoRoot is the repository's top directory (scripts, CRDs, samples); found from the source or the
	// working directory when empty.
	RepoRoot string
	// WorkDir holds the run's folder; <RepoRoot>/.sandbox when empty.
	WorkDir string
	// SamplesDir holds the PlacementManifestWorks to apply; <RepoRoot>/config/samples when empty.
	SamplesDir string

	// Out receives progress lines and the live view; Terminal says whether it is a terminal (redraw in place).
	Out      io.Writer
	Terminal bool
	// BuildOutput receives the binary builds' progress; Out when nil.
	BuildOutput io.Writer
}

// Defaults of the command's flags.
const (
	DefaultClusters     = 5
	DefaultTimeout      = 3 * time.Minute
	DefaultReadyDelay   = 2 * time.Second
	DefaultRefresh      = time.Second
	DefaultCompactEvery = 5 * time.Second
	// MaxClusters bounds --clusters: every cluster is a namespace, a ManagedCluster and one ManifestWork per
	// PlacementManifestWork on a hub that shares the machine with everything else.
	MaxClusters = 500
)

// withDefaults fills unset fields.
func (c Config) withDefaults() Config {
	if c.Clusters == 0 {
		c.Clusters = DefaultClusters
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ReadyDelay == 0 {
		c.ReadyDelay = DefaultReadyDelay
	}
	if c.Refresh == 0 {
		c.Refresh = DefaultRefresh
	}
	if c.CompactEvery == 0 {
		c.CompactEvery = DefaultCompactEvery
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.BuildOutput == nil {
		c.BuildOutput = c.Out
	}
	return c
}

// Validate reports flag combinations that cannot run.
func (c Config) Validate() error {
	if c.Clusters < 1 || c.Clusters > MaxClusters {
		return fmt.Errorf("--clusters must be between 1 and %d, got %d", MaxClusters, c.Clusters)
	}
	if c.Duration < 0 || c.Timeout < 0 || c.ReadyDelay < 0 {
		return fmt.Errorf("durations must not be negative")
	}
	if c.Once && c.Duration > 0 {
		return fmt.Errorf("--once and --duration exclude each other")
	}
	for _, ns := range c.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
		}
	}
	known := map[string]bool{}
	for _, n := range ClusterNames(c.Clusters) {
		known[n] = true
	}
	seen := map[string]string{}
	for flag, names := range map[string][]string{"--fail-apply": c.FailApply, "--never-ready": c.NeverReady} {
		for _, n := range names {
			if !known[n] {
				return fmt.Errorf("%s names %q, which is not one of the %d sandbox clusters (cluster1..cluster%d)", flag, n, c.Clusters, c.Clusters)
			}
			if other, ok := seen[n]; ok && other != flag {
				return fmt.Errorf("cluster %q is named by both --fail-apply and --never-ready", n)
			}
			seen[n] = flag
		}
	}
	return nil
}

// BoundNamespaces are the namespaces the clusterset is bound to: SampleNamespace and Namespaces, sorted.
func (c Config) BoundNamespaces() []string {
	return SplitList(strings.Join(append([]string{SampleNamespace}, c.Namespaces...), ","))
}

// Behaviors maps every sandbox cluster to its agent's behavior.
func (c Config) Behaviors() map[string]Behavior {
	out := map[string]Behavior{}
	for _, n := range ClusterNames(c.Clusters) {
		out[n] = BehaviorHealthy
	}
	for _, n := range c.FailApply {
		out[n] = BehaviorFailApply
	}
	for _, n := range c.NeverReady {
		out[n] = BehaviorNeverReady
	}
	return out
}

// SplitList parses a comma-separated flag value into sorted, unique, non-empty names.
func SplitList(v string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
