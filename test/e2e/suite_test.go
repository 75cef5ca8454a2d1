//go:build e2e

// Package e2e runs PlacementManifestWorks end to end on a real Open Cluster Management hub with three spoke
// clusters (package stack): OCM's own placement controller decides the clusters, OCM's work agents apply the
// ManifestWorks on the spokes' API servers, where kube-controller-manager, kube-scheduler and kwok roll the
// workloads out, and the status comes back from the agents' real feedback. Nothing plays OCM here.
//
//	make test-e2e     # or: go test ./test/e2e/... -tags e2e -v -timeout 30m
//
// E2E_KEEP=1 keeps the run's folder (kubeconfigs, every component's log) even when the suite passes; it is
// always kept when a spec fails.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
)

const (
	// buildTimeout bounds building the binaries: minutes on a fresh machine (make test-e2e builds them first,
	// outside go test's -timeout), seconds when cached.
	buildTimeout = 25 * time.Minute
	// startTimeout bounds starting the stack: about 15 s here.
	startTimeout = 3 * time.Minute
	// convergeTimeout bounds each scenario's convergence: a few seconds normally (the agents report every 2 s),
	// with room for a machine shared with builds.
	convergeTimeout = 2 * time.Minute
	// holdWindow is how long a Consistently watches for something that must not happen (a ManifestWork deleted,
	// a rollout going past a failed cluster): several of the agents' 2 s status syncs and the manager's reconciles.
	holdWindow = 15 * time.Second
	// poll is how often Eventually looks again.
	poll = 250 * time.Millisecond

	// selectedLabel is the label the scenarios' Placements require; dropping it removes a cluster.
	selectedLabel = "e2e"
	selectedValue = "yes"
)

var (
	stk *stack.Stack
	// bins are the binaries the stack runs, and helm and kubectl-pmw for the scenarios that run them.
	bins stack.Binaries
	hub  client.Client
	// clusters are the spokes' names, cluster1..cluster3.
	clusters []string
	// specFailed keeps the run's folder for its logs.
	specFailed bool
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork e2e")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	buildCtx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	var err error
	bins, err = stack.BuildBinaries(buildCtx, envhub.RepoRoot(), GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())

	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	stk, err = stack.Start(startCtx, stack.Options{
		Binaries:      bins,
		Spokes:        3,
		ClusterLabels: map[string]string{selectedLabel: selectedValue},
		Progress:      GinkgoWriter,
	})
	Expect(err).NotTo(HaveOccurred())
	hub = stk.Hub.Client
	for _, c := range stk.Spokes {
		clusters = append(clusters, c.Name)
	}
	GinkgoWriter.Printf("e2e stack up in %s: hub kubeconfig %s\n", stk.Dir, stk.Hub.Kubeconfig)
})

// The stack is stopped on every way out ginkgo has, interrupts included; the stack's watchdog covers the test
// process being killed outright.
var _ = AfterSuite(func() {
	if stk == nil {
		return
	}
	Expect(stk.Stop()).To(Succeed())
	if specFailed || os.Getenv("E2E_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "e2e: kept the run's folder (kubeconfigs, logs/): %s\n", stk.Dir)
		return
	}
	Expect(stk.Remove()).To(Succeed())
})

var _ = ReportAfterEach(func(r SpecReport) {
	if r.Failed() {
		specFailed = true
	}
})

// A spec that times out because a component crashed says so, with the end of that component's log.
var _ = AfterEach(func() {
	if stk != nil {
		Expect(stk.Exited()).To(Succeed(), "a process of the e2e stack exited")
	}
})
