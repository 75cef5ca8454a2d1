// Command bench measures the PlacementManifestWork manager at fleet scale on one envtest hub, side by side
// with the API server's own limit (a plain client creating the same ManifestWorks with unbounded parallelism)
// and OCM's ManifestWorkReplicaSet controller given the equivalent replicate-only job. See
// docs/performance.md; `make bench` runs every row, `make bench-smoke` the smallest only.
//
// The manager and OCM's work manager run as separate processes, each as its own user of the hub, so their
// CPU and memory come from /proc and their requests from the API server's audit log. The harness plays OCM's
// placement controller (it writes PlacementDecisions of at most 100 clusters) and the work agents (it writes
// ManifestWork status).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

func main() {
	var (
		sizes       = flag.String("sizes", "100,1000,5000", "Cluster counts, one row each.")
		many        = flag.String("many", "500x20", "The many-objects rows, JOBSxCLUSTERS, comma-separated (10x5000,2500x20: 50,000 works each), one row each; empty or 0 to skip.")
		concurrent  = flag.String("concurrent", "", "Concurrent-rollout rows, JOBSxCLUSTERS, comma-separated (100x500: 50,000 works): every job's template changed at once, timed per job; empty or 0 to skip.")
		restart     = flag.Bool("restart", false, "After each row's steady state, SIGKILL the manager, start it again, and measure until it has caught up (time, writes, statuses unchanged).")
		handover    = flag.Bool("handover", false, "After each row's steady state (and restart), run two manager replicas with leader election, SIGKILL the leader, and measure until the other has caught up.")
		window      = flag.Duration("restart-window", 30*time.Second, "With -restart or -handover: how long writes are still counted once the new manager caught up (30 s: the manager's wait for settled decisions; a new process has no writes of its own to wait for).")
		steady      = flag.Duration("steady", 60*time.Second, "Steady-state window in which requests are counted; 0 skips it.")
		peer        = flag.Bool("peer", true, "Run OCM's ManifestWorkReplicaSet controller too.")
		limit       = flag.Bool("limit", true, "Run the limit (plain unbounded client) too.")
		limitPar    = flag.String("limit-parallel", "", "Also run plain clients with these many creates in flight (no rate limit), comma-separated, for reference (the cluster rows and the many-rows).")
		contendersF = flag.String("contenders", "manager,ocm", "Which controllers run: manager, ocm (ocm only with -peer).")
		managerBin  = flag.String("manager", "bin/manager", "The manager binary (go build ./cmd).")
		managerArgs = flag.String("manager-args", "", "Extra flags for the manager, space-separated (the defaults otherwise).")
		hubArgs     = flag.String("apiserver-args", "", "Extra kube-apiserver flags of the hub, space-separated key=value (for example feature-gates=ConcurrentWatchObjectDecode=true), to measure a hub's tuning.")
		tunedArgs   = flag.String("tuned-args", "--kube-api-qps=-1", "Flags of the manager-tuned contender, space-separated.")
		ocmBin      = flag.String("ocm-work", "", "OCM's work binary (hack/ocm-binaries.sh work); required with -peer.")
		out         = flag.String("out", "bin/bench", "Folder for results.json, results.md and the run's logs.")
		repeats     = flag.Int("repeats", 9, "How many times rows of at most -repeat-up-to clusters run, contenders interleaved; the tables show each step's median. Their steps take tenths of a second, where one run says little.")
		repeatUpTo  = flag.Int("repeat-up-to", 100, "Rows of at most this many clusters run -repeats times.")
		timeoutBase = flag.Duration("timeout", 3*time.Minute, "Timeout of a step, plus -timeout-per-work for each work.")
		perWork     = flag.Duration("timeout-per-work", 150*time.Millisecond, "Timeout added per work of the step.")
		overrides   = flag.Bool("overrides", false, "Give the managers' PMWs one override: the Deployment's image registry by the cluster's region label (10 regions, round robin), so the works carry 10 distinct Deployments. OCM's controller has no overrides: needs -peer=false.")
	)
	render := flag.String("render", "", "Only print the tables of this results.json (from an earlier run) and exit.")
	flag.Parse()
	if *render != "" {
		data, err := os.ReadFile(*render)
		if err != nil {
			fatal(err)
		}
		res := &results{}
		if err := json.Unmarshal(data, res); err != nil {
			fatal(err)
		}
		fmt.Printf("Date %s; %s, %d cores, %.1f GiB; %s; commit %s; load %s → %s\n\n%s", res.Date, res.CPU, res.Cores, res.MemoryGiB, res.GoVersion, res.Commit, res.LoadStart, res.LoadEnd, res.markdown())
		return
	}
	// Errors only: controller-runtime's cache is chatty otherwise.
	zapOpts := zap.Options{}
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(zapFlags)
	_ = zapFlags.Parse([]string{"--zap-log-level=error"})
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseFlagOptions(&zapOpts)))

	ns, err := parseSizes(*sizes)
	if err != nil {
		fatal(err)
	}
	limitPars, err := parseSizes(*limitPar)
	if err != nil {
		fatal(err)
	}
	manyRows, err := parseMany(*many)
	if err != nil {
		fatal(fmt.Errorf("bad -many: %w", err))
	}
	concurrentRows, err := parseMany(*concurrent)
	if err != nil {
		fatal(fmt.Errorf("bad -concurrent: %w", err))
	}
	if *overrides && *peer {
		fatal(fmt.Errorf("-overrides compares the manager with itself: OCM's controller has no overrides, use -peer=false"))
	}
	if *peer && *ocmBin == "" {
		fatal(fmt.Errorf("-peer needs -ocm-work (hack/ocm-binaries.sh work)"))
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, config{
		sizes: ns, limitParallel: limitPars, contenders: strings.Split(*contendersF, ","), many: manyRows, concurrent: concurrentRows, steady: *steady, peer: *peer, limit: *limit,
		apiServerArgs: strings.Fields(*hubArgs),
		managerBin:    abs(*managerBin), managerArgs: strings.Fields(*managerArgs), tunedArgs: strings.Fields(*tunedArgs), ocmBin: abs(*ocmBin), out: abs(*out),
		timeout: func(works int) time.Duration { return *timeoutBase + time.Duration(works)*(*perWork) },
		repeats: max(*repeats, 1), repeatUpTo: *repeatUpTo, overrides: *overrides,
		recovery: recoveryOptions{restart: *restart, handover: *handover, window: *window, done: map[string]bool{}},
	})
	cancel()
	os.Exit(code)
}

type config struct {
	sizes                  []int
	limitParallel          []int
	contenders             []string
	many, concurrent       []jobsOf
	steady                 time.Duration
	peer, limit            bool
	managerBin, ocmBin     string
	managerArgs, tunedArgs []string
	// apiServerArgs are the hub's extra kube-apiserver flags, key=value.
	apiServerArgs       []string
	out                 string
	timeout             func(works int) time.Duration
	repeats, repeatUpTo int
	// overrides gives the managers' PMWs regionOverride.
	overrides bool
	recovery  recoveryOptions
}

func run(ctx context.Context, cfg config) int {
	runDir := filepath.Join(cfg.out, "run-"+time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		fatal(err)
	}
	w, err := proc.StartWatchdog()
	if err != nil {
		fatal(err)
	}
	guard = w
	defer guard.Stop()
	cpu, cores, mem := machine()
	res := &results{
		Date: time.Now().UTC().Format(time.RFC3339), CPU: cpu, Cores: cores, MemoryGiB: math.Round(mem*10) / 10,
		GoVersion: runtime.Version(), Commit: commit(), Command: strings.Join(os.Args, " "), ManagerArgs: cfg.managerArgs,
		APIServerArgs: cfg.apiServerArgs,
		Overrides:     cfg.overrides,
		LoadStart:     loadAvg(), Steady: cfg.steady.String(),
	}
	logf("run folder %s; %d cores, %.1f GiB, load %s", runDir, cores, mem, res.LoadStart)
	if cfg.overrides {
		logf("overrides: the managers' PMWs rewrite the Deployment's image registry by region (%d regions)", regions)
	}

	logf("starting the hub (envtest, audit log on)")
	h, err := startHub(runDir, cfg.apiServerArgs)
	if err != nil {
		fatal(err)
	}
	guard.Watch(proc.ChildPIDs()...)
	defer h.stop()
	cleanups = append(cleanups, h.stop)
	audit := &auditLog{}
	actx, stopAudit := context.WithCancel(ctx)
	defer stopAudit()
	go audit.tail(actx, h.auditPath)
	works, err := startTracker(actx, h)
	if err != nil {
		fatal(err)
	}
	limitClient, err := client.New(h.limitCfg, client.Options{Scheme: scheme()})
	if err != nil {
		fatal(err)
	}
	b := &bench{h: h, audit: audit, works: works, fleet: &fleet{c: h.harness}, limitClient: limitClient, dir: runDir, steady: cfg.steady, timeout: cfg.timeout, recovery: cfg.recovery}
	var contenders []contender
	for _, c := range cfg.contenders {
		switch strings.TrimSpace(c) {
		case "manager":
			contenders = append(contenders, &manager{h: h, bin: cfg.managerBin, extra: cfg.managerArgs, overrides: cfg.overrides})
		case "manager-tuned":
			contenders = append(contenders, &manager{h: h, bin: cfg.managerBin, extra: cfg.tunedArgs, name: "manager " + strings.Join(cfg.tunedArgs, " "), overrides: cfg.overrides})
		case "ocm":
			if cfg.peer {
				contenders = append(contenders, &ocm{h: h, bin: cfg.ocmBin})
			}
		}
	}

	failed := false
	record := func(r *row) {
		res.Rows = append(res.Rows, r)
		if len(r.Errors) > 0 {
			failed = true
		}
		writeResults(cfg.out, runDir, res)
	}
	for _, n := range cfg.sizes {
		if ctx.Err() != nil {
			break
		}
		_, to := churnWindow(n)
		start := time.Now()
		if err := b.fleet.ensure(ctx, to); err != nil {
			fatal(err)
		}
		logf("fleet: %d clusters (namespace and available ManagedCluster each), %.1fs", to, time.Since(start).Seconds())
		res.SetupNotes = append(res.SetupNotes, fmt.Sprintf("pool grown to %d clusters in %.1f s", to, time.Since(start).Seconds()))
		b.measureAtRest(ctx, 4*time.Second)
		runs := 1
		if n <= cfg.repeatUpTo {
			runs = cfg.repeats
		}
		for run := 1; run <= runs && ctx.Err() == nil; run++ {
			if runs > 1 {
				logf("%d clusters, run %d of %d", n, run, runs)
			}
			// Only the first run counts the steady state: it is a count of writes, not a time.
			b.steady = cfg.steady
			if run > 1 {
				b.steady = 0
			}
			each := func(r *row) {
				if runs > 1 {
					r.Run = run
				}
				record(r)
			}
			if cfg.limit {
				each(b.runLimit(ctx, "clusters", 1, n, n, 0, false))
				each(b.runLimit(ctx, "clusters", 1, n, n, 0, true))
			}
			for _, k := range cfg.limitParallel {
				each(b.runLimit(ctx, "clusters", 1, n, n, k, false))
			}
			for _, c := range contenders {
				if ctx.Err() == nil {
					each(b.runClusters(ctx, c, n))
				}
			}
		}
		b.steady = cfg.steady
	}
	// The limit clients run the rows' works too (with -limit): the many rows' fan-out beside the plain works',
	// the concurrent rows' update of every work at once (the manager's rollout of them all, side by side).
	var manyLimits, concurrentLimits []bool
	if cfg.limit {
		manyLimits, concurrentLimits = []bool{false, true}, []bool{false}
	}
	for _, kind := range []struct {
		name string
		rows []jobsOf
		run  func(ctx context.Context, c contender, jobs, n, pool int) *row
		// plainLimits: the limit clients that run first, each writing the manager's works (false) or plain ones.
		plainLimits []bool
	}{{"many", cfg.many, b.runMany, manyLimits}, {"concurrent", cfg.concurrent, b.runConcurrent, concurrentLimits}} {
		for _, m := range kind.rows {
			if ctx.Err() != nil {
				break
			}
			pool := max(b.fleet.count, m.clusters)
			if err := b.fleet.ensure(ctx, pool); err != nil {
				fatal(err)
			}
			for _, plain := range kind.plainLimits {
				record(b.runLimit(ctx, kind.name, m.jobs, m.clusters, pool, 0, plain))
			}
			for _, k := range cfg.limitParallel {
				record(b.runLimit(ctx, kind.name, m.jobs, m.clusters, pool, k, false))
			}
			for _, c := range contenders {
				if ctx.Err() == nil && !strings.HasPrefix(c.title(), "manager ") { // managers with other flags: cluster rows only
					record(kind.run(ctx, c, m.jobs, m.clusters, pool))
				}
			}
		}
	}
	res.LoadEnd = loadAvg()
	writeResults(cfg.out, runDir, res)
	fmt.Println()
	fmt.Printf("Machine: %s, %d cores, %.1f GiB; %s; commit %s; load %s → %s\n\n", res.CPU, res.Cores, res.MemoryGiB, res.GoVersion, res.Commit, res.LoadStart, res.LoadEnd)
	fmt.Print(res.markdown())
	fmt.Printf("\nResults: %s (and results.md); logs and audit log: %s\n", filepath.Join(cfg.out, "results.json"), runDir)
	if ctx.Err() != nil {
		logf("interrupted")
		return 130
	}
	if failed || len(res.Rows) == 0 {
		return 1
	}
	return 0
}

func writeResults(out, runDir string, res *results) {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		fatal(err)
	}
	md := fmt.Sprintf("Date %s; %s, %d cores, %.1f GiB; %s; commit %s; load %s → %s\n\n%s", res.Date, res.CPU, res.Cores, res.MemoryGiB, res.GoVersion, res.Commit, res.LoadStart, res.LoadEnd, res.markdown())
	for _, dir := range []string{out, runDir} {
		_ = os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "results.md"), []byte(md), 0o644)
	}
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// jobsOf is a row of jobs of clusters each.
type jobsOf struct{ jobs, clusters int }

// parseMany reads rows of JOBSxCLUSTERS, comma-separated; none for "" or "0".
func parseMany(s string) ([]jobsOf, error) {
	if s == "" || s == "0" {
		return nil, nil
	}
	var out []jobsOf
	seen := map[jobsOf]bool{}
	for _, f := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(f), "x")
		j, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || j < 1 || n < 1 {
			return nil, fmt.Errorf("%q: want JOBSxCLUSTERS", f)
		}
		if seen[jobsOf{j, n}] {
			return nil, fmt.Errorf("%q twice", f)
		}
		seen[jobsOf{j, n}] = true
		out = append(out, jobsOf{j, n})
	}
	return out, nil
}

func abs(p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(envhub.RepoRoot(), p)
	}
	return filepath.Clean(p)
}

func commit() string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = envhub.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// cleanups run, last first, when the run ends on a fatal error; the watchdog covers what they miss.
var cleanups []func()

func fatal(err error) {
	logf("fatal: %v", err)
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	guard.Stop()
	os.Exit(2)
}
