package main

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	parallelrun "github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
)

func clusterName(i int) string { return fmt.Sprintf("cluster-%05d", i) }

// regions is how many regions the fleet spans: cluster i (1-based) carries the label region=region(i), round
// robin, so an override by region gives that many distinct results across any window of clusters.
const regions = 10

// labelRegion is the ManagedCluster label the bench's override reads.
const labelRegion = "region"

// region is the region of cluster i (1-based, as clusterName).
func region(i int) string { return fmt.Sprintf("region-%d", (i-1)%regions) }

// regionOf is the region of the named cluster; "" for a name clusterName did not make.
func regionOf(name string) string {
	var i int
	if _, err := fmt.Sscanf(name, "cluster-%05d", &i); err != nil || i < 1 {
		return ""
	}
	return region(i)
}

// parallel runs fn for 0..n-1, at most limit at once (0: all at once), and joins the first five errors.
func parallel(n, limit int, fn func(i int) error) error {
	errs := parallelrun.Run(context.Background(), n, limit, fn)
	return errors.Join(errs[:min(len(errs), 5)]...)
}

// fleet is the hub's pool of clusters: a namespace and an available ManagedCluster each, created once and
// reused by every phase.
type fleet struct {
	c     client.Client
	count int
}

// ensure makes clusters 1..n exist, registered as OCM's registration leaves them (ocmsim.Join), each labelled
// with its region. They join no clusterset: no placement controller runs here, the bench decides its
// Placements itself (placeClusters).
func (f *fleet) ensure(ctx context.Context, n int) error {
	if n <= f.count {
		return nil
	}
	from := f.count
	err := parallel(n-from, 500, func(i int) error {
		k := from + i + 1
		return ocmsim.Join(ctx, f.c, []string{clusterName(k)}, ocmsim.JoinOptions{
			Labels: func(string, int) map[string]string { return map[string]string{labelRegion: region(k)} },
		})
	})
	if err != nil {
		return fmt.Errorf("creating clusters: %w", err)
	}
	f.count = n
	return nil
}

// names returns the names of clusters from..to-1 of the pool (0-based).
func names(from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, clusterName(i+1))
	}
	return out
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	return ocmsim.CreateNamespaces(ctx, c, name)
}

// placeClusters creates the Placement when missing and decides that it selects clusters as OCM's placement
// controller would (ocmsim.Decide): PlacementDecisions of at most 100 clusters, written one at a time and in
// order (a window of clusters that moves never loses a cluster it keeps on the way), the ones no longer
// needed deleted, then the Placement's status.
func placeClusters(ctx context.Context, c client.Client, ns, placement string, clusters []string) error {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: placement, Namespace: ns}}
	if err := c.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Placement %s/%s: %w", ns, placement, err)
	}
	return ocmsim.Decide(ctx, c, ns, placement, clusters, ocmsim.DecideOptions{})
}
