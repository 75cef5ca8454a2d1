package ocmsim

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MaxClustersPerDecision is how many clusters OCM's placement controller puts in one PlacementDecision
// (maxNumOfClusterDecisions).
const MaxClustersPerDecision = 100

// Reasons and messages of the Placement conditions OCM's placement controller (v1.2) writes.
const (
	ReasonAllDecisionsScheduled   = "AllDecisionsScheduled"
	ReasonNoManagedClusterMatched = "NoManagedClusterMatched"
	reasonSucceedConfigured       = "Succeedconfigured"
)

// DecisionName is the name of a Placement's n-th PlacementDecision, counted from 1 as OCM does.
func DecisionName(placement string, n int) string {
	return fmt.Sprintf("%s-decision-%d", placement, n)
}

// Decisions are the PlacementDecisions OCM's placement controller (v1.2) writes for Placement p when it
// selects clusters, with no decision strategy (one decision group, index 0, unnamed): the cluster names
// sorted, in chunks of at most MaxClustersPerDecision, named DecisionName(p, 1), DecisionName(p, 2), ...;
// one empty decision when nothing is selected. Each is labelled with the Placement and its decision group,
// and controlled by the Placement when p is one read from the API server (has a UID); without one it is
// unowned, as a stray decision is.
func Decisions(p *clusterv1beta1.Placement, clusters []string) []clusterv1beta1.PlacementDecision {
	sorted := append([]string(nil), clusters...)
	sort.Strings(sorted)
	var out []clusterv1beta1.PlacementDecision
	for i := 0; i == 0 || i*MaxClustersPerDecision < len(sorted); i++ {
		chunk := sorted[i*MaxClustersPerDecision : min((i+1)*MaxClustersPerDecision, len(sorted))]
		out = append(out, Decision(p, DecisionName(p.Name, i+1), chunk))
	}
	return out
}

// Decision is one PlacementDecision of Placement p named name, holding clusters in its status, labelled and
// owned as Decisions says.
func Decision(p *clusterv1beta1.Placement, name string, clusters []string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: p.Namespace,
			Labels: map[string]string{
				clusterv1beta1.PlacementLabel:          p.Name,
				clusterv1beta1.DecisionGroupNameLabel:  "",
				clusterv1beta1.DecisionGroupIndexLabel: "0",
			},
		},
		Status: clusterv1beta1.PlacementDecisionStatus{Decisions: make([]clusterv1beta1.ClusterDecision, 0, len(clusters))},
	}
	if p.UID != "" {
		gvk := schema.GroupVersionKind{Group: clusterv1beta1.GroupName, Version: clusterv1beta1.GroupVersion.Version, Kind: "Placement"}
		d.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(p, gvk)}
	}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

// PlacementStatus is the status OCM's placement controller (v1.2) writes on a Placement once it has written
// decisions: per decision group (by its labels) the decisions in the order of their number and how many
// clusters they hold, the number of clusters selected, PlacementSatisfied (False with
// NoManagedClusterMatched when nothing is selected) and PlacementMisconfigured=False. Conditions keep their
// transition time when their status stays.
func PlacementStatus(prev clusterv1beta1.PlacementStatus, decisions []clusterv1beta1.PlacementDecision) clusterv1beta1.PlacementStatus {
	type group struct {
		index int32
		name  string
	}
	groups := map[group][]clusterv1beta1.PlacementDecision{}
	for _, d := range decisions {
		index, _ := strconv.ParseInt(d.Labels[clusterv1beta1.DecisionGroupIndexLabel], 10, 32)
		g := group{index: int32(index), name: d.Labels[clusterv1beta1.DecisionGroupNameLabel]}
		groups[g] = append(groups[g], d)
	}
	if len(groups) == 0 {
		// OCM always has a group, with one empty decision in it.
		groups[group{}] = nil
	}
	keys := make([]group, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].index != keys[j].index {
			return keys[i].index < keys[j].index
		}
		return keys[i].name < keys[j].name
	})
	out := *prev.DeepCopy()
	out.DecisionGroups = make([]clusterv1beta1.DecisionGroupStatus, 0, len(keys))
	selected := map[string]bool{}
	for _, g := range keys {
		ds := groups[g]
		sort.Slice(ds, func(i, j int) bool { return decisionLess(ds[i].Name, ds[j].Name) })
		status := clusterv1beta1.DecisionGroupStatus{DecisionGroupIndex: g.index, DecisionGroupName: g.name, Decisions: make([]string, 0, len(ds))}
		for _, d := range ds {
			status.Decisions = append(status.Decisions, d.Name)
			for _, cd := range d.Status.Decisions {
				status.ClustersCount++
				selected[cd.ClusterName] = true
			}
		}
		out.DecisionGroups = append(out.DecisionGroups, status)
	}
	out.NumberOfSelectedClusters = int32(len(selected))
	satisfied := metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied, Status: metav1.ConditionTrue,
		Reason: ReasonAllDecisionsScheduled, Message: "All cluster decisions scheduled"}
	if len(selected) == 0 {
		satisfied.Status, satisfied.Reason = metav1.ConditionFalse, ReasonNoManagedClusterMatched
		satisfied.Message = "No ManagedCluster matches any of the cluster predicate"
	}
	misconfigured := metav1.Condition{Type: clusterv1beta1.PlacementConditionMisconfigured, Status: metav1.ConditionFalse,
		Reason: reasonSucceedConfigured, Message: "Placement configurations check pass"}
	meta.SetStatusCondition(&out.Conditions, misconfigured)
	meta.SetStatusCondition(&out.Conditions, satisfied)
	return out
}

// decisionLess orders decision names by their number when both end in one ("p-decision-2" before
// "p-decision-10"), by name otherwise.
func decisionLess(a, b string) bool {
	i, j := strings.LastIndex(a, "-"), strings.LastIndex(b, "-")
	if i >= 0 && j >= 0 && a[:i] == b[:j] {
		na, errA := strconv.Atoi(a[i+1:])
		nb, errB := strconv.Atoi(b[j+1:])
		if errA == nil && errB == nil {
			return na < nb
		}
	}
	return a < b
}

// DecideOptions say how Decide departs from OCM's placement controller, for tests that need to.
type DecideOptions struct {
	// DecisionName writes every cluster into this one PlacementDecision and leaves the Placement's other
	// decisions as they are, for a test that writes a Placement's decisions one by one. Empty: OCM's
	// decisions (Decisions), and the Placement's decisions no longer needed are deleted.
	DecisionName string
}

// Decide plays OCM's placement controller deciding that a Placement selects clusters: it writes the
// decisions (WriteDecisions), then the Placement's status (Placed). Without a Placement, the decisions are
// written alone, unowned, as stray objects would be.
func Decide(ctx context.Context, c client.Client, namespace, placement string, clusters []string, opts DecideOptions) error {
	p, err := WriteDecisions(ctx, c, namespace, placement, clusters, opts)
	if err != nil || p == nil {
		return err
	}
	return Placed(ctx, c, p)
}

// WriteDecisions is the first of the placement controller's two writes: it creates each PlacementDecision
// that does not exist, sets the labels and clusters of each, and deletes the Placement's decisions no longer
// needed, one at a time and in order, as OCM does. It returns the Placement, nil when there is none.
func WriteDecisions(ctx context.Context, c client.Client, namespace, placement string, clusters []string, opts DecideOptions) (*clusterv1beta1.Placement, error) {
	p := &clusterv1beta1.Placement{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: placement}, p)
	switch {
	case apierrors.IsNotFound(err):
		p = &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: placement}}
	case err != nil:
		return nil, fmt.Errorf("reading Placement %s/%s: %w", namespace, placement, err)
	}
	want := Decisions(p, clusters)
	if opts.DecisionName != "" {
		want = []clusterv1beta1.PlacementDecision{Decision(p, opts.DecisionName, clusters)}
	}
	keep := map[string]bool{}
	for i := range want {
		keep[want[i].Name] = true
		if err := writeDecision(ctx, c, &want[i]); err != nil {
			return nil, err
		}
	}
	if opts.DecisionName == "" {
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: placement}); err != nil {
			return nil, fmt.Errorf("listing the decisions of Placement %s/%s: %w", namespace, placement, err)
		}
		for i := range list.Items {
			if keep[list.Items[i].Name] {
				continue
			}
			if err := c.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("deleting PlacementDecision %s/%s: %w", namespace, list.Items[i].Name, err)
			}
		}
	}
	if p.UID == "" {
		return nil, nil
	}
	return p, nil
}

// writeDecision creates the decision when missing, then writes its status and its labels where they differ.
func writeDecision(ctx context.Context, c client.Client, want *clusterv1beta1.PlacementDecision) error {
	d := want.DeepCopy()
	if err := createOrGet(ctx, c, d); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(d.Status, want.Status) {
		d.Status = want.Status
		if err := c.Status().Update(ctx, d); err != nil {
			return fmt.Errorf("writing the clusters of PlacementDecision %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(d.Labels, want.Labels) {
		d.Labels = want.Labels
		if err := c.Update(ctx, d); err != nil {
			return fmt.Errorf("labelling PlacementDecision %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	return nil
}

// Placed is the second of the placement controller's writes: the Placement's status (PlacementStatus) from
// the PlacementDecisions labelled with its name, written when it changes. The manager takes a Placement's
// decisions as its selection only once that status names them.
func Placed(ctx context.Context, c client.Client, p *clusterv1beta1.Placement) error {
	fresh := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !fresh {
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
		}
		fresh = false
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name}); err != nil {
			return err
		}
		status := PlacementStatus(p.Status, list.Items)
		if equality.Semantic.DeepEqual(status, p.Status) {
			return nil
		}
		p.Status = status
		return c.Status().Update(ctx, p)
	})
	if err != nil {
		return fmt.Errorf("writing the status of Placement %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
