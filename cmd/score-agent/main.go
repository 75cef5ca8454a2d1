// Command score-agent is the reference score agent: it runs on a managed cluster as an OCM addon, measures
// what the AddOnPlacementScoreGenerators in its cluster's namespace on the hub ask for, and writes the
// AddOnPlacementScores that OCM's Placement and PlacementManifestWork's Score split read
// (internal/scoreagent).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
)

// config is what the flags say.
type config struct {
	hubKubeconfig, kubeconfig string
	clusterName, addonName    string
	guard                     guard.Config
	metricsAddr, probeAddr    string
	zap                       zap.Options
}

// parseFlags reads the command line. Its own flag set: controller-runtime registers a --kubeconfig of its
// own on the default one, which here means the managed cluster and defaults to in-cluster only.
func parseFlags(args []string, output io.Writer) (config, error) {
	var c config
	var allow, allowPorts string
	fs := flag.NewFlagSet("score-agent", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&c.hubKubeconfig, "hub-kubeconfig", "", "Kubeconfig of the hub, with the addon's credentials (required).")
	fs.StringVar(&c.clusterName, "cluster-name", "", "Name of the managed cluster: the hub namespace whose generators the agent measures (required).")
	fs.StringVar(&c.addonName, "addon-name", scoreagent.DefaultAddonName, "Addon whose generators the agent measures: those whose spec.addOnPlacementSelector.name is this.")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "Kubeconfig of the managed cluster, for the node-headroom plugin's node and pod lists; in-cluster when empty.")
	fs.StringVar(&allow, guard.FlagAllow, "", "Comma-separated CIDRs, addresses, host names and *.suffixes the latency probes may reach beyond public addresses, on any port (such as 10.0.0.0/8,*.corp.example.com); none when empty.")
	fs.StringVar(&allowPorts, guard.FlagAllowPorts, "", "Comma-separated ports the latency probes may reach on public addresses; 80,443 when empty.")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	c.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var problems []error
	if c.hubKubeconfig == "" {
		problems = append(problems, errors.New("--hub-kubeconfig is required"))
	}
	if c.clusterName == "" {
		problems = append(problems, errors.New("--cluster-name is required"))
	}
	var err error
	if c.guard.Allow, err = guard.ParseAllowlist(allow); err != nil {
		problems = append(problems, err)
	}
	if c.guard.Ports, err = guard.ParsePorts(allowPorts); err != nil {
		problems = append(problems, err)
	}
	return c, errors.Join(problems...)
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "score-agent:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&c.zap)))
	log := ctrl.Log.WithName("setup")
	if err := run(c); err != nil {
		log.Error(err, "The score agent stopped with an error")
		os.Exit(1)
	}
}

func run(c config) error {
	log := ctrl.Log.WithName("setup")
	hub, err := clientcmd.BuildConfigFromFlags("", c.hubKubeconfig)
	if err != nil {
		return fmt.Errorf("reading --hub-kubeconfig: %w", err)
	}
	var spokeConfig *rest.Config
	if c.kubeconfig != "" {
		spokeConfig, err = clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	} else {
		spokeConfig, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("reaching the managed cluster (--kubeconfig, or in-cluster): %w", err)
	}
	spoke, err := client.New(spokeConfig, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	mgr, err := scoreagent.NewManager(scoreagent.Options{
		Hub:         hub,
		Spoke:       spoke,
		ClusterName: c.clusterName,
		AddonName:   c.addonName,
		Guard:       c.guard,
		Manager: ctrl.Options{
			Metrics:                metricsserver.Options{BindAddress: c.metricsAddr},
			HealthProbeBindAddress: c.probeAddr,
		},
	})
	if err != nil {
		return fmt.Errorf("setting up the agent: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting the score agent", "cluster", c.clusterName, "addon", c.addonName,
		"allow", c.guard.Allow.String(), "allowPorts", c.guard.Ports)
	return mgr.Start(ctrl.SetupSignalHandler())
}
