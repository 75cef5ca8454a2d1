// Command manager runs the PlacementManifestWork controller on an Open Cluster Management hub.
package main

import (
	"flag"
	"os"
	"runtime/debug"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/watchlist"
)

// defaultGCPercent is the manager's GOGC unless the environment sets one: the Go runtime lets the heap grow to
// twice what is live before collecting (100), so a burst of reports or writes doubled the manager's memory
// over its steady state; at 50 the peak stays within about 1.5 times, for a few percent more CPU.
const defaultGCPercent = 50

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	// Informers list with LIST, not client-go 1.35's streamed lists, which a hub under heavy writes cuts off
	// (internal/watchlist); KUBE_FEATURE_WatchListClient=true turns them back on.
	watchlist.Off()
	var (
		metricsAddr, probeAddr string
		pprofAddr              string
		leaderElect            bool
		leaderElectionNS       string
		qps                    float64
		burst                  int
		opts                   controllers.Options
		fleetKubeconfig        string
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "Address a pprof endpoint binds to, for profiling; off when empty.")
	flag.BoolVar(&leaderElect, "leader-elect", false, "Elect a leader so that only one of several replicas reconciles.")
	flag.StringVar(&leaderElectionNS, "leader-election-namespace", "", "Namespace of the leader election Lease; the manager's own namespace when empty.")
	flag.Float64Var(&qps, "kube-api-qps", 1000, "Client-side rate limit of requests to the API server, per second.")
	flag.IntVar(&burst, "kube-api-burst", 2000, "Client-side burst of requests to the API server.")
	flag.IntVar(&opts.MaxConcurrentReconciles, "concurrent-reconciles", 8, "PlacementManifestWorks reconciled at once.")
	flag.IntVar(&opts.MaxConcurrentWrites, "concurrent-writes", 64, "ManifestWork writes one reconcile runs in parallel.")
	flag.IntVar(&opts.MaxManifestBytes, "max-manifest-bytes", 500*1024, "Largest total size of one ManifestWork's manifests; match the hub's OCM limit.")
	flag.StringVar(&fleetKubeconfig, "fleet-kubeconfig", "", "Kubeconfig of the fleet API server whose opted-in namespaces are delivered to the clusters (transparent mode: docs/transparent.md; the chart's fleetAPIServer values set it); off when empty.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(qps), burst
	cacheOpts, err := controllers.CacheOptions(cfg)
	if err != nil {
		log.Error(err, "Unable to set up the cache")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        controllers.Scheme(),
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress:        probeAddr,
		PprofBindAddress:              pprofAddr,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "placement-manifestwork.work.open-cluster-management.io",
		LeaderElectionNamespace:       leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		log.Error(err, "Unable to create the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := controllers.SetupWithManager(ctx, mgr, opts); err != nil {
		log.Error(err, "Unable to set up the controller")
		os.Exit(1)
	}
	if fleetKubeconfig != "" {
		fleetCfg, err := clientcmd.BuildConfigFromFlags("", fleetKubeconfig)
		if err != nil {
			log.Error(err, "Unable to read the fleet kubeconfig")
			os.Exit(1)
		}
		fleetCfg.QPS, fleetCfg.Burst = float32(qps), burst
		if err := fleet.SetupWithManager(ctx, mgr, fleetCfg); err != nil {
			log.Error(err, "Unable to set up the fleet controller")
			os.Exit(1)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "Unable to add the health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "Unable to add the readiness check")
		os.Exit(1)
	}
	log.Info("Starting the manager")
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}
