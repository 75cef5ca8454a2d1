package framework

import (
	"context"

	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// Decide writes a Placement's decision as OCM's placement controller does (ocmsim.Decide): the named
// decision holding the clusters (WriteDecision), then the Placement's status (Placed). The Placement's other
// decisions are left as they are, so a test can write them one by one. Without a Placement, the decision is
// written alone, unowned, as a stray object would be.
func Decide(ctx context.Context, c client.Client, namespace, placement, decisionName string, clusters ...string) error {
	return ocmsim.Decide(ctx, c, namespace, placement, clusters, ocmsim.DecideOptions{DecisionName: decisionName})
}

// WriteDecision is the first of the placement controller's two writes: it creates the named PlacementDecision
// if it does not exist (labelled for the Placement and its decision group 0, controlled by the Placement) and
// sets its clusters. It returns the Placement, nil when there is none.
func WriteDecision(ctx context.Context, c client.Client, namespace, placement, decisionName string, clusters ...string) (*clusterv1beta1.Placement, error) {
	return ocmsim.WriteDecisions(ctx, c, namespace, placement, clusters, ocmsim.DecideOptions{DecisionName: decisionName})
}

// Placed writes a Placement's status from its PlacementDecisions, as OCM's placement controller does after
// writing them (ocmsim.Placed).
func Placed(ctx context.Context, c client.Client, p *clusterv1beta1.Placement) error {
	return ocmsim.Placed(ctx, c, p)
}
