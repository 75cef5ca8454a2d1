package sandbox

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// seedClusters registers the sandbox's clusters as OCM's registration would have (ocmsim.Join): the hub's own
// namespace, the clusterset bound to the given namespaces, and per cluster its namespace and an available
// ManagedCluster with the sandbox's labels.
func seedClusters(ctx context.Context, c client.Client, names, bound []string) error {
	if err := ocmsim.CreateNamespaces(ctx, c, HubNamespace); err != nil {
		return err
	}
	return ocmsim.Join(ctx, c, names, ocmsim.JoinOptions{ClusterSet: ClusterSetName, Bind: bound, Labels: ClusterLabels})
}

// spokes says how each sandbox cluster's simulated work agent behaves: as --fail-apply and --never-ready
// say, with staggered ready delays so the live view shows clusters becoming ready one after another.
func spokes(cfg Config, clusters []string) map[string]ocmsim.Spoke {
	delays := ocmsim.ReadyDelays(clusters, cfg.ReadyDelay)
	behaviors := cfg.Behaviors()
	out := make(map[string]ocmsim.Spoke, len(clusters))
	for _, c := range clusters {
		out[c] = spoke(behaviors[c], delays[c])
	}
	return out
}

// spoke is the simulated agent of a cluster with behavior b; a failing one names the flag that asked for it.
func spoke(b Behavior, readyDelay time.Duration) ocmsim.Spoke {
	s := ocmsim.Spoke{Behavior: ocmsim.Healthy, ReadyDelay: readyDelay}
	switch b {
	case BehaviorFailApply:
		s.Behavior, s.FailureCause = ocmsim.FailApply, "--fail-apply"
	case BehaviorNeverReady:
		s.Behavior = ocmsim.NeverReady
	}
	return s
}
