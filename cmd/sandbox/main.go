// Command sandbox runs a local Open Cluster Management hub with simulated managed clusters, OCM's real
// placement controller, the PlacementManifestWork manager and the sample PlacementManifestWorks, and shows
// them in a live view until Ctrl-C. Run it with `make sandbox` (ARGS="--clusters 8" for flags).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/sandbox"
)

func main() {
	os.Exit(run())
}

func run() int {
	// The orderly stop also starts when the reader of the output goes away (piped into head): a write to it then
	// fails with EPIPE. SIGPIPE is ignored rather than caught, since Go would deliver it for a broken connection
	// on any file (the latency server's, the API clients'), not only for the output.
	signal.Ignore(syscall.SIGPIPE)
	base, outputGone := context.WithCancel(context.Background())
	defer outputGone()
	out := &stopOnBrokenPipe{w: os.Stdout, broken: outputGone}
	cfg := sandbox.Config{Out: out, BuildOutput: os.Stderr, Terminal: isTerminal(os.Stdout)}
	var failApply, neverReady, namespaces string
	flag.IntVar(&cfg.Clusters, "clusters", sandbox.DefaultClusters, "How many managed clusters to simulate.")
	flag.StringVar(&namespaces, "namespaces", "", "Comma-separated namespaces, besides default, bound to the sandbox's ManagedClusterSet, for your own PlacementManifestWorks.")
	flag.StringVar(&failApply, "fail-apply", "", "Comma-separated clusters whose agent reports every ManifestWork Applied=False (e.g. cluster2).")
	flag.StringVar(&neverReady, "never-ready", "", "Comma-separated clusters whose workloads never become ready: works stay Progressing and turn Degraded.")
	flag.DurationVar(&cfg.Duration, "duration", 0, "Run this long, then stop and exit 0 (for scripts). Default: until Ctrl-C.")
	flag.BoolVar(&cfg.Once, "once", false, "Exit 0 as soon as every sample is applied, available and ready on every cluster; exit 1 after --timeout.")
	flag.DurationVar(&cfg.Timeout, "timeout", sandbox.DefaultTimeout, "With --once: how long to wait for the samples to settle.")
	flag.DurationVar(&cfg.ReadyDelay, "ready-delay", sandbox.DefaultReadyDelay, "How long after a ManifestWork changes its workloads report ready.")
	flag.BoolVar(&cfg.Keep, "keep", false, "Keep the run's folder (kubeconfig, logs) under .sandbox/ at exit.")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "sandbox: unexpected argument %q: the sandbox takes only flags (--clusters 8); see -h\n", flag.Arg(0))
		return 2
	}
	cfg.FailApply, cfg.NeverReady = sandbox.SplitList(failApply), sandbox.SplitList(neverReady)
	cfg.Namespaces = sandbox.SplitList(namespaces)
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 2
	}
	// The managers log to the run's sandbox.log through their own loggers. The global logger only carries
	// envtest's chatter, which would scribble over the live view; setting it also stops controller-runtime from
	// printing a warning after 30 s.
	ctrl.SetLogger(ctrllog.Log.WithSink(ctrllog.NullLogSink{}))

	// The first of these signals starts the orderly stop; later ones are swallowed until it is done, because
	// dying halfway would leave kube-apiserver and etcd running. Besides Ctrl-C and SIGTERM: SIGHUP when the
	// terminal closes.
	ctx, stop := signal.NotifyContext(base, stopSignals...)
	defer stop()
	start := time.Now()
	_, err := sandbox.Run(ctx, cfg)
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "sandbox: interrupted after %s: %v\n", time.Since(start).Round(time.Second), err)
		return 130
	case errors.Is(err, sandbox.ErrNotSettled):
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 1
	default:
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 1
	}
}

// stopSignals start the sandbox's orderly stop.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopOnBrokenPipe writes to w and calls broken once a write fails because its reader went away.
type stopOnBrokenPipe struct {
	w      io.Writer
	once   sync.Once
	broken func()
}

func (s *stopOnBrokenPipe) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		s.once.Do(s.broken)
	}
	return n, err
}

// isTerminal reports whether f is a character device (a terminal), where the view is redrawn in place.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
