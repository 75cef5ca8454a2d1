//go:build e2e

// Command e2e-stack starts the e2e environment (a hub and spoke clusters with OCM's placement controller, work
// agents, kube-controller-manager, kube-scheduler and kwok; see docs/e2e.md) and keeps it running until
// interrupted, so a contributor can poke at it with kubectl:
//
//	go run -tags e2e ./test/e2e/cmd/e2e-stack
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
)

func main() {
	spokes := flag.Int("spokes", 3, "number of spoke clusters (cluster1..clusterN)")
	dir := flag.String("dir", "", "the run's folder (kubeconfigs, logs); a new temporary one when empty")
	keep := flag.Bool("keep", false, "keep the run's folder at exit")
	labels := flag.String("cluster-labels", "e2e=yes", "comma-separated key=value labels on every ManagedCluster")
	flag.Parse()
	// envtest logs through controller-runtime; its start-up chatter would bury the kubeconfig paths.
	logf.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := run(*spokes, *dir, *keep, *labels); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-stack:", err)
		os.Exit(1)
	}
}

func run(spokes int, dir string, keep bool, labels string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	clusterLabels := map[string]string{}
	for _, kv := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			clusterLabels[k] = v
		}
	}
	bins, err := stack.BuildBinaries(ctx, envhub.RepoRoot(), os.Stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	s, err := stack.Start(ctx, stack.Options{
		Binaries: bins, Dir: dir, Spokes: spokes, ClusterLabels: clusterLabels, Progress: os.Stderr,
	})
	if err != nil {
		return err
	}
	fmt.Printf("\nThe e2e stack is up (%s). Its folder: %s\n\n", time.Since(start).Round(time.Second), s.Dir)
	fmt.Printf("  export KUBECONFIG=%s   # the hub\n", s.Hub.Kubeconfig)
	for _, c := range s.Spokes {
		fmt.Printf("  kubectl --kubeconfig=%s ...   # %s\n", c.Kubeconfig, c.Name)
	}
	fmt.Printf("  kubectl --kubeconfig=%s ...   # the fleet API server (transparent mode, docs/transparent.md)\n", s.Fleet.Kubeconfig)
	fmt.Printf("\nLogs: %s/logs/. ManagedClusterSet %q is bound to namespace %q. Ctrl-C stops everything.\n",
		s.Dir, stack.ClusterSet, stack.BoundNamespace)

	// Check on the processes while waiting: a crash is printed at once rather than found at the next kubectl.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case <-tick.C:
			if err := s.Exited(); err != nil {
				fmt.Fprintln(os.Stderr, "e2e-stack: a process exited; stopping:", err)
				running = false
			}
		}
	}
	fmt.Fprintln(os.Stderr, "e2e-stack: stopping")
	err = s.Stop()
	if !keep && err == nil {
		err = s.Remove()
	}
	return err
}
