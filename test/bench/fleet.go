package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// decisionsPerObject is how many clusters OCM's placement controller puts in one PlacementDecision.
const decisionsPerObject = 100

func clusterName(i int) string { return fmt.Sprintf("cluster-%05d", i) }

// parallel runs fn for 0..n-1, at most limit at once (0: all at once), and joins the errors.
func parallel(n, limit int, fn func(i int) error) error {
	if limit <= 0 {
		limit = n
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, max(limit, 1))
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				if len(errs) < 5 {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fleet is the hub's pool of clusters: a namespace and an available ManagedCluster each, created once and
// reused by every phase.
type fleet struct {
	c     client.Client
	count int
}

// ensure makes clusters 1..n exist.
func (f *fleet) ensure(ctx context.Context, n int) error {
	if n <= f.count {
		return nil
	}
	from := f.count
	err := parallel(n-from, 500, func(i int) error {
		name := clusterName(from + i + 1)
		if err := createIfMissing(ctx, f.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
		mc := &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"cluster.open-cluster-management.io/clusterset": "default"}},
			Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		}
		if err := createIfMissing(ctx, f.c, mc); err != nil {
			return err
		}
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Bench", Message: "simulated",
		})
		return f.c.Status().Update(ctx, mc)
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

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	return createIfMissing(ctx, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// placeClusters writes a Placement's decisions as OCM's placement controller does: PlacementDecisions of at
// most 100 clusters labelled with the placement and decision group (index 0, no name), and the Placement's
// status with the count and its one decision group. It creates the Placement when missing.
func placeClusters(ctx context.Context, c client.Client, ns, placement string, clusters []string) error {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: placement, Namespace: ns}}
	if err := createIfMissing(ctx, c, p); err != nil {
		return err
	}
	want := (len(clusters) + decisionsPerObject - 1) / decisionsPerObject
	var decisionNames []string
	// One at a time, in order: a window of clusters that moves never loses a cluster it keeps on the way, as
	// when OCM's placement controller rewrites its decisions.
	err := parallel(want, 1, func(i int) error {
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-decision-%d", placement, i+1), Namespace: ns,
			Labels: map[string]string{
				clusterv1beta1.PlacementLabel:          placement,
				clusterv1beta1.DecisionGroupIndexLabel: "0",
				clusterv1beta1.DecisionGroupNameLabel:  "",
			},
		}}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); apierrors.IsNotFound(err) {
			if err := c.Create(ctx, d); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		chunk := clusters[i*decisionsPerObject : min((i+1)*decisionsPerObject, len(clusters))]
		d.Status.Decisions = make([]clusterv1beta1.ClusterDecision, 0, len(chunk))
		for _, cl := range chunk {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: cl, Reason: "bench"})
		}
		return c.Status().Update(ctx, d)
	})
	if err != nil {
		return fmt.Errorf("writing decisions of %s/%s: %w", ns, placement, err)
	}
	for i := range want {
		decisionNames = append(decisionNames, fmt.Sprintf("%s-decision-%d", placement, i+1))
	}
	// Decisions beyond the ones needed go.
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, n := range decisionNames {
		keep[n] = true
	}
	for i := range list.Items {
		if !keep[list.Items[i].Name] {
			if err := c.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		return err
	}
	p.Status.NumberOfSelectedClusters = int32(len(clusters))
	p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{{
		DecisionGroupIndex: 0, Decisions: decisionNames, ClustersCount: int32(len(clusters)),
	}}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue, Reason: "AllDecisionsScheduled",
		Message: strconv.Itoa(len(clusters)) + " clusters selected",
	})
	return c.Status().Update(ctx, p)
}
