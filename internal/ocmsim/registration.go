package ocmsim

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LabelClusterName is the label every ManagedCluster carries with its own name (clusteradm join sets it);
// Placements can select a cluster by it.
const LabelClusterName = "name"

// JoinOptions say how Join registers clusters.
type JoinOptions struct {
	// ClusterSet is the ManagedClusterSet the clusters join: it is created (selecting its members by the
	// exclusive clusterset label) and every cluster carries its label. Empty: no set.
	ClusterSet string
	// Bind are the namespaces the set is bound to (see Bind); only with a ClusterSet.
	Bind []string
	// Labels are the labels of the i-th cluster besides LabelClusterName and the set's; nil for none.
	Labels func(name string, i int) map[string]string
}

// Join writes what OCM's registration leaves on the hub once clusters have joined: the clusterset, and per
// cluster its namespace and an accepted ManagedCluster with the status its registration agent reports
// (ManagedClusterStatus), then the set's bindings. What exists already is kept; statuses are written again.
func Join(ctx context.Context, c client.Client, clusters []string, opts JoinOptions) error {
	if opts.ClusterSet != "" {
		if err := createOrGet(ctx, c, ClusterSet(opts.ClusterSet)); err != nil {
			return err
		}
	}
	now := metav1.Now()
	for i, name := range clusters {
		var labels map[string]string
		if opts.Labels != nil {
			labels = opts.Labels(name, i)
		}
		if err := CreateNamespaces(ctx, c, name); err != nil {
			return err
		}
		mc := ManagedCluster(name, opts.ClusterSet, labels)
		if err := createOrGet(ctx, c, mc); err != nil {
			return err
		}
		mc.Status = ManagedClusterStatus(now)
		if err := c.Status().Update(ctx, mc); err != nil {
			return fmt.Errorf("writing the status of ManagedCluster %s: %w", name, err)
		}
	}
	if opts.ClusterSet == "" {
		return nil
	}
	return Bind(ctx, c, opts.ClusterSet, opts.Bind...)
}

// Bind binds a clusterset to namespaces (created when missing) as a user does, with the Bound condition OCM's
// registration controller then writes on a binding whose set exists: the placement controller ignores
// bindings without it.
func Bind(ctx context.Context, c client.Client, clusterSet string, namespaces ...string) error {
	now := metav1.Now()
	for _, ns := range namespaces {
		if err := CreateNamespaces(ctx, c, ns); err != nil {
			return err
		}
		b := ClusterSetBinding(clusterSet, ns)
		if err := createOrGet(ctx, c, b); err != nil {
			return err
		}
		meta.SetStatusCondition(&b.Status.Conditions, BoundCondition(now))
		if err := c.Status().Update(ctx, b); err != nil {
			return fmt.Errorf("marking ManagedClusterSetBinding %s/%s bound: %w", ns, b.Name, err)
		}
	}
	return nil
}

// SetReachable plays OCM's registration (v1.2) for a cluster whose agent stops renewing its lease, or renews it
// again: the hub's lease controller sets the ManagedCluster's Available condition to Unknown (or True again) and
// its taint controller adds the unreachable taint, effect NoSelect (or removes it), which makes the placement
// controller drop the cluster from every Placement that does not tolerate it.
func SetReachable(ctx context.Context, c client.Client, cluster string, reachable bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		available := metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
			Reason: "ManagedClusterAvailable", Message: "Managed cluster is available"}
		if !reachable {
			available.Status, available.Reason = metav1.ConditionUnknown, "ManagedClusterLeaseUpdateStopped"
			available.Message = "Registration agent stopped updating its lease."
		}
		meta.SetStatusCondition(&mc.Status.Conditions, available)
		if err := c.Status().Update(ctx, mc); err != nil {
			return err
		}
		taints := slices.DeleteFunc(mc.Spec.Taints, func(t clusterv1.Taint) bool {
			return t.Key == clusterv1.ManagedClusterTaintUnreachable || t.Key == clusterv1.ManagedClusterTaintUnavailable
		})
		if !reachable {
			taints = append(taints, clusterv1.Taint{Key: clusterv1.ManagedClusterTaintUnreachable,
				Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		}
		mc.Spec.Taints = taints
		return c.Update(ctx, mc)
	})
}

// CreateNamespaces creates the namespaces that do not exist.
func CreateNamespaces(ctx context.Context, c client.Client, names ...string) error {
	for _, n := range names {
		if err := c.Create(ctx, Namespace(n)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", n, err)
		}
	}
	return nil
}

// createOrGet creates obj, or reads it into obj when it exists.
func createOrGet(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		err = c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	if err != nil {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// Namespace is a namespace; every cluster has one on the hub, named after it, for its ManifestWorks.
func Namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// ManagedCluster is a ManagedCluster as it stands once its registration agent has joined and the hub has
// accepted it, in clusterSet (none when empty) and with the given labels besides. Its status is written
// separately (the status subresource ignores it on create).
func ManagedCluster(name, clusterSet string, labels map[string]string) *clusterv1.ManagedCluster {
	all := map[string]string{LabelClusterName: name}
	if clusterSet != "" {
		all[clusterv1beta2.ClusterSetLabel] = clusterSet
	}
	for k, v := range labels {
		all[k] = v
	}
	return &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}
}

// ManagedClusterStatus is what OCM's registration (v1.2) reports for a healthy cluster: accepted by the hub
// controller, joined and available by the agent (the placement controller only decides available clusters),
// with some capacity so the resource-based prioritizers have something to compare. No lease controller runs
// with the stand-in, so the status stays as written.
func ManagedClusterStatus(now metav1.Time) clusterv1.ManagedClusterStatus {
	cond := func(t, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: now}
	}
	res := clusterv1.ResourceList{
		clusterv1.ResourceCPU:    resource.MustParse("8"),
		clusterv1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return clusterv1.ManagedClusterStatus{
		Conditions: []metav1.Condition{
			cond(clusterv1.ManagedClusterConditionHubAccepted, "HubClusterAdminAccepted", "Accepted by hub cluster admin"),
			cond(clusterv1.ManagedClusterConditionJoined, "ManagedClusterJoined", "Managed cluster joined"),
			cond(clusterv1.ManagedClusterConditionAvailable, "ManagedClusterAvailable", "Managed cluster is available"),
		},
		Capacity:    res,
		Allocatable: res,
		Version:     clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"},
	}
}

// ClusterSet is a ManagedClusterSet that selects its members by the exclusive clusterset label.
func ClusterSet(name string) *clusterv1beta2.ManagedClusterSet {
	return &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
		},
	}
}

// ClusterSetBinding binds a clusterset to namespace; OCM requires the binding's name to be the set's.
func ClusterSetBinding(clusterSet, namespace string) *clusterv1beta2.ManagedClusterSetBinding {
	return &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterSet, Namespace: namespace},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: clusterSet},
	}
}

// BoundCondition is the condition OCM's registration controller (v1.2) writes on a binding whose set exists.
func BoundCondition(now metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue,
		Reason: "ClusterSetBound", LastTransitionTime: now,
	}
}
