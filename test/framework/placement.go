package framework

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Decide writes a Placement's decision as OCM's placement controller does: the decision (WriteDecision), then
// the Placement's status (Placed). The manager takes a Placement's decisions as its selection only once that
// status is written. Without a Placement, the decision is written alone, unowned, as a stray object would be.
func Decide(ctx context.Context, c client.Client, namespace, placement, decisionName string, clusters ...string) error {
	p, err := WriteDecision(ctx, c, namespace, placement, decisionName, clusters...)
	if err != nil || p == nil {
		return err
	}
	return Placed(ctx, c, p)
}

// WriteDecision is the first of the placement controller's two writes: it creates the named PlacementDecision
// if it does not exist (labelled for the Placement and its decision group 0, controlled by the Placement) and
// sets its clusters. It returns the Placement, nil when there is none.
func WriteDecision(ctx context.Context, c client.Client, namespace, placement, decisionName string, clusters ...string) (*clusterv1beta1.Placement, error) {
	p := &clusterv1beta1.Placement{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: placement}, p)
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	d := Decision(decisionName, namespace, placement)
	d.Labels[clusterv1beta1.DecisionGroupIndexLabel] = "0"
	d.Labels[clusterv1beta1.DecisionGroupNameLabel] = ""
	if found {
		d.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p, schema.GroupVersionKind{Group: clusterv1beta1.GroupName, Version: "v1beta1", Kind: "Placement"})}
	}
	if err := c.Create(ctx, d); apierrors.IsAlreadyExists(err) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	SetDecisions(d, clusters...)
	if err := c.Status().Update(ctx, d); err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	return p, nil
}

// Placed writes a Placement's status from its PlacementDecisions, as OCM's placement controller does after
// writing them: one decision group naming every decision, the number of distinct clusters, and
// PlacementSatisfied (False with NoManagedClusterMatched when nothing is selected).
func Placed(ctx context.Context, c client.Client, p *clusterv1beta1.Placement) error {
	list := &clusterv1beta1.PlacementDecisionList{}
	if err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
		return err
	}
	names := make([]string, 0, len(list.Items))
	selected := map[string]bool{}
	for _, d := range list.Items {
		names = append(names, d.Name)
		for _, cd := range d.Status.Decisions {
			selected[cd.ClusterName] = true
		}
	}
	sort.Strings(names)
	n := int32(len(selected))
	p.Status.NumberOfSelectedClusters = n
	p.Status.DecisionGroups = []clusterv1beta1.DecisionGroupStatus{{DecisionGroupIndex: 0, Decisions: names, ClustersCount: n}}
	satisfied := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue,
		Reason: "AllDecisionsScheduled", Message: "All cluster decisions scheduled"}
	if n == 0 {
		satisfied.Status, satisfied.Reason = metav1.ConditionFalse, "NoManagedClusterMatched"
		satisfied.Message = "No ManagedCluster matches any of the cluster predicate"
	}
	meta.SetStatusCondition(&p.Status.Conditions, satisfied)
	if err := c.Status().Update(ctx, p); err != nil {
		return fmt.Errorf("writing the status of Placement %s: %w", p.Name, err)
	}
	return nil
}
