// Package sandbox runs a PlacementManifestWork hub on one machine with nothing but Go: envtest's
// kube-apiserver and etcd with the OCM CRDs, OCM's real placement controller, simulated ManagedClusters whose
// work agent lives in-process, the manager itself, and the sample PlacementManifestWorks, shown in a live view.
//
// OCM's registration and work agent are played by internal/ocmsim. Pure parts (the view, the settled check)
// are functions over API objects in their own files; run.go, hub.go, process.go and clusters.go do the I/O.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	fleetcontroller "github.com/open-cluster-management-io/placement-manifestwork/internal/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/watchlist"
)

// Result is what a run leaves for its caller once everything it started has stopped.
type Result struct {
	// RunDir is the run's folder (removed at exit unless Config.Keep); Kubeconfig is in it.
	RunDir, Kubeconfig string
	// Samples are the sample PlacementManifestWorks the run applied.
	Samples []types.NamespacedName
	// Final is the last snapshot of the hub; Settled says whether it met Settled.
	Final   Snapshot
	Settled bool
	// PlacementPID is the process id the placement controller had.
	PlacementPID int
	// Markers are strings only the run's kube-apiserver and etcd have on their command line, for
	// ProcessesMentioning.
	Markers []string
}

// ErrNotSettled is returned by a Once run whose samples did not settle within the timeout.
var ErrNotSettled = errors.New("the samples did not settle")

// Run starts the sandbox, shows the live view on cfg.Out until ctx ends (or cfg.Duration passes, or with
// cfg.Once the samples settle), then stops every process it started and removes its folder. An interrupted
// run (ctx cancelled after start-up) is not an error.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	// As cmd/main.go: the managers' informers list, not streamed. First, before the hub's clients read
	// client-go's feature gates; replacing them after that logs an error line amid the start-up lines.
	watchlist.Off()
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	root := cfg.RepoRoot
	if root == "" {
		root = envhub.RepoRoot()
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "ocm-binaries.sh")); err != nil {
		return nil, fmt.Errorf("the sandbox runs from a checkout of the repository (make sandbox), and %s is not one: %w", root, err)
	}
	samplesDir := cfg.SamplesDir
	if samplesDir == "" {
		samplesDir = filepath.Join(root, "config", "samples")
	}
	samples, err := LoadSamples(samplesDir)
	if err != nil {
		return nil, err
	}
	extra, err := EmbeddedSamples()
	if err != nil {
		return nil, err
	}
	samples = append(samples, extra...)
	declareSampleKinds()
	r := &runner{cfg: cfg, start: time.Now()}

	r.say("Preparing kube-apiserver, etcd and OCM's placement controller (built from Go modules on first use: several minutes, once)")
	assets, err := runScript(ctx, cfg.BuildOutput, filepath.Join(root, "hack", "kube-binaries.sh"))
	if err != nil {
		return nil, err
	}
	ocmDir, err := runScript(ctx, cfg.BuildOutput, filepath.Join(root, "hack", "ocm-binaries.sh"), "placement")
	if err != nil {
		return nil, err
	}
	// Times shown from here on leave out the one-off builds.
	r.start = time.Now()

	workDir := cfg.WorkDir
	if workDir == "" {
		workDir = filepath.Join(root, ".sandbox")
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", workDir, err)
	}
	runDir, err := os.MkdirTemp(workDir, "run-")
	if err != nil {
		return nil, fmt.Errorf("creating the run's folder: %w", err)
	}
	res = &Result{RunDir: runDir, Samples: append(SamplePMWs(samples), FleetSamplePMWs(samples)...)}
	r.res = res
	defer func() {
		err = errors.Join(err, r.cleanup(err != nil && ctx.Err() == nil))
	}()
	r.onStop(func() error {
		if cfg.Keep {
			r.say("Kept %s", runDir)
			return nil
		}
		if err := os.RemoveAll(runDir); err != nil {
			return fmt.Errorf("removing %s: %w", runDir, err)
		}
		return nil
	})

	logFile, err := os.Create(filepath.Join(runDir, "sandbox.log"))
	if err != nil {
		return res, fmt.Errorf("creating the log: %w", err)
	}
	r.logs = append(r.logs, logFile.Name())
	r.onStop(logFile.Close)
	// Everything in-process logs to sandbox.log through this context, not to the screen, which is the view's.
	ctx = ctrl.LoggerInto(ctx, zap.New(zap.WriteTo(logFile), zap.ConsoleEncoder()))

	r.say("Starting kube-apiserver and etcd with the PlacementManifestWork and OCM CRDs")
	h, err := startHub(assets, runDir)
	if h != nil {
		res.Markers = h.markers
		r.onStop(h.stop)
	}
	if err != nil {
		return res, err
	}
	res.Kubeconfig = h.kubeconfig
	cfgFast := rest.CopyConfig(h.cfg)
	// The hub is local and all ours: no reason to queue requests behind client-go's default of 5 per second.
	cfgFast.QPS, cfgFast.Burst = 200, 400
	c, err := client.New(cfgFast, client.Options{Scheme: Scheme()})
	if err != nil {
		return res, fmt.Errorf("connecting to the hub: %w", err)
	}

	names := ClusterNames(cfg.Clusters)
	bound := cfg.BoundNamespaces()
	r.say("Registering %d ManagedClusters (%s..%s) in ManagedClusterSet %q, bound to namespaces %s",
		len(names), names[0], names[len(names)-1], ClusterSetName, strings.Join(bound, ","))
	if err := seedClusters(ctx, c, names, bound); err != nil {
		return res, err
	}

	r.say("Starting the PlacementManifestWork manager (with transparent mode: the hub is its fleet API server), the simulated work agents and the clusters' score agents")
	if err := r.startManagers(ctx, cfgFast, c, names); err != nil {
		return res, err
	}

	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		collectGarbage(gcCtx, c, gcInterval)
	}()
	r.onStop(func() error {
		stopGC()
		<-gcDone
		return nil
	})

	r.say("Starting OCM's placement controller (%s)", filepath.Join(ocmDir, "placement"))
	r.placementBin, r.kubeconfig = filepath.Join(ocmDir, "placement"), h.kubeconfig
	r.logs = append(r.logs, filepath.Join(runDir, "placement.log"))
	if err := r.startPlacement(); err != nil {
		return res, err
	}
	// The placement controller may be restarted (see watch), so stop whichever one runs at the end.
	r.onStop(func() error { return r.placement.Stop() })

	r.say("Applying the samples from %s, the interpreter sample (a custom kind, Database), the overrides sample (an image per region), "+
		"the scores sample and the transparent-mode sample (namespace %s, opted in with a cluster selector)", samplesDir, FleetNamespace)
	// The hub administrator's part first (namespaces, ManagedClusterSetBindings, bound as OCM's registration
	// would), so that the transparent-mode sample's manifests arrive in a namespace that can reach clusters.
	setup, rest := hubSetup(samples)
	if err := applySamples(ctx, c, setup); err != nil {
		return res, err
	}
	if err := bindSampleClusterSets(ctx, c, setup); err != nil {
		return res, err
	}
	if err := applySamples(ctx, c, rest); err != nil {
		return res, err
	}
	r.say("Hub ready in %s. kubectl works against it while the sandbox runs:", time.Since(r.start).Round(100*time.Millisecond))
	r.say("  export KUBECONFIG=%s", h.kubeconfig)
	return res, r.watch(ctx, c)
}

// runner holds one run's moving parts.
type runner struct {
	cfg   Config
	start time.Time
	res   *Result
	// stops run in reverse order at exit.
	stops     []func() error
	logs      []string
	placement *proc.Process
	// placementBin and kubeconfig start the placement controller; placementStarts counts its starts.
	placementBin, kubeconfig string
	placementStarts          int
	// managerErr receives a manager's error if one stops by itself.
	managerErr chan error
}

func (r *runner) say(format string, args ...any) {
	fmt.Fprintf(r.cfg.Out, "sandbox: "+format+"\n", args...)
}

func (r *runner) onStop(f func() error) { r.stops = append(r.stops, f) }

// cleanup stops everything in reverse order of start and checks that no process of the run survived. On a
// failure it first shows the end of the logs, which are about to be removed.
func (r *runner) cleanup(failed bool) error {
	if failed {
		for _, l := range r.logs {
			if t := proc.Tail(l, 15); t != "" {
				fmt.Fprintf(r.cfg.Out, "sandbox: last lines of %s:\n%s\n", filepath.Base(l), t)
			}
		}
	}
	r.say("Stopping the placement controller, the manager, the agents, kube-apiserver and etcd")
	var errs []error
	for i := len(r.stops) - 1; i >= 0; i-- {
		if err := r.stops[i](); err != nil {
			errs = append(errs, err)
		}
	}
	if r.res.PlacementPID != 0 && proc.Exists(r.res.PlacementPID) {
		errs = append(errs, fmt.Errorf("the placement controller (pid %d) is still running", r.res.PlacementPID))
	}
	if pids, err := ProcessesMentioning(r.res.Markers); err != nil {
		errs = append(errs, err)
	} else if len(pids) > 0 {
		errs = append(errs, fmt.Errorf("kube-apiserver or etcd is still running: pids %v", pids))
	}
	if len(errs) == 0 {
		r.say("Stopped")
	}
	return errors.Join(errs...)
}

// startPlacement starts OCM's placement controller on a free port, its output appended to placement.log.
func (r *runner) startPlacement() error {
	port, err := proc.FreePort()
	if err != nil {
		return err
	}
	r.placementStarts++
	// OCM's binaries write a serving-cert-* folder into TMPDIR and leave it: give them the run's folder.
	p, err := proc.Start(proc.Spec{
		Name: "the placement controller",
		Path: r.placementBin,
		Args: []string{"controller", "--kubeconfig=" + r.kubeconfig, "--namespace=" + HubNamespace,
			"--disable-leader-election", fmt.Sprintf("--listen=127.0.0.1:%d", port)},
		Env: []string{"TMPDIR=" + r.res.RunDir},
		Log: filepath.Join(r.res.RunDir, "placement.log"),
	})
	if err != nil {
		return err
	}
	r.placement = p
	r.res.PlacementPID = p.Pid()
	return nil
}

// startManagers starts the PlacementManifestWork manager, exactly as cmd/ wires it with --fleet-kubeconfig
// naming the hub itself (the hub runs no workload controllers, so it can be the fleet API server of
// transparent mode, docs/transparent.md), and the simulated agents
// in a manager of their own: the agent must see every ManifestWork of the cluster namespaces, which the
// manager's label-filtered cache does not. The clusters' score agents share the agents' manager.
func (r *runner) startManagers(ctx context.Context, cfg *rest.Config, c client.Client, clusters []string) error {
	log := ctrl.LoggerFrom(ctx)
	// Both managers register controllers under fixed names; a process that runs the sandbox twice (a test)
	// would otherwise be refused the second time.
	ctrlCfg := config.Controller{SkipNameValidation: ptr.To(true)}
	cacheOpts, err := controllers.CacheOptions(cfg)
	if err != nil {
		return err
	}
	pmwMgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 log.WithName("manager"),
		Controller:             ctrlCfg,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	namespaces := map[string]cache.Config{}
	for _, c := range clusters {
		namespaces[c] = cache.Config{}
	}
	agentMgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Cache:                  cache.Options{DefaultNamespaces: namespaces},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 log.WithName("agent"),
		Controller:             ctrlCfg,
	})
	if err != nil {
		return fmt.Errorf("creating the agents' manager: %w", err)
	}
	agent := &ocmsim.Agent{Client: agentMgr.GetClient(), Spokes: spokes(r.cfg, clusters)}
	if err := agent.SetupWithManager(agentMgr); err != nil {
		return fmt.Errorf("setting up the agents: %w", err)
	}
	if err := r.startScoreAgents(ctx, c, agentMgr, clusters); err != nil {
		return err
	}

	mgrCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if err := controllers.SetupWithManager(mgrCtx, pmwMgr, controllers.Options{MaxConcurrentReconciles: 4, MaxConcurrentWrites: 16}); err != nil {
		cancel()
		return fmt.Errorf("setting up the manager: %w", err)
	}
	if err := fleetcontroller.SetupWithManager(mgrCtx, pmwMgr, rest.CopyConfig(cfg)); err != nil {
		cancel()
		return fmt.Errorf("setting up the fleet controller: %w", err)
	}
	var wg sync.WaitGroup
	r.managerErr = make(chan error, 2)
	for name, m := range map[string]ctrl.Manager{"the manager": pmwMgr, "the agents' manager": agentMgr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Start(mgrCtx); err != nil {
				r.managerErr <- fmt.Errorf("%s stopped: %w", name, err)
			}
		}()
	}
	r.onStop(func() error {
		cancel()
		wg.Wait()
		return nil
	})
	return nil
}
