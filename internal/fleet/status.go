package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// hubView is what the hub says of the generated PlacementManifestWork's clusters.
type hubView struct {
	// clusters are the clusters the placement decided, sorted.
	clusters []string
	// works are the PlacementManifestWork's works by cluster.
	works map[string]*workv1.ManifestWork
	// settled is true when the PlacementManifestWork's status describes its current spec (the translation).
	settled bool
	// unhealthy are the clusters the PlacementManifestWork's status names as not available.
	unhealthy map[string]workv1alpha1.ClusterHealth
}

// readHub lists the decided clusters and the works of pmw.
func (r *Reconciler) readHub(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (hubView, error) {
	v := hubView{works: map[string]*workv1.ManifestWork{}, unhealthy: map[string]workv1alpha1.ClusterHealth{},
		settled: pmw.Status.ObservedGeneration == pmw.Generation}
	for _, h := range pmw.Status.UnhealthyClusters {
		v.unhealthy[h.Cluster] = h
	}
	works := &workv1.ManifestWorkList{}
	if err := r.Hub.List(ctx, works, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	}); err != nil {
		return v, fmt.Errorf("list the works: %w", err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		if w.Annotations[workv1alpha1.AnnotationOwner] == pmw.Namespace+"/"+pmw.Name {
			v.works[w.Namespace] = w
		}
	}
	if pmw.Spec.PlacementRef == nil {
		return v, nil
	}
	decisions := &clusterv1beta1.PlacementDecisionList{}
	if err := r.Hub.List(ctx, decisions, client.InNamespace(pmw.Namespace),
		client.MatchingLabels{clusterv1beta1.PlacementLabel: pmw.Spec.PlacementRef.Name}); err != nil {
		return v, fmt.Errorf("list the placement decisions: %w", err)
	}
	seen := map[string]bool{}
	for _, d := range decisions.Items {
		for _, c := range d.Status.Decisions {
			if !seen[c.ClusterName] {
				seen[c.ClusterName] = true
				v.clusters = append(v.clusters, c.ClusterName)
			}
		}
	}
	sort.Strings(v.clusters)
	return v, nil
}

// writeStatus writes the status of each translated object on the fleet API server from its clusters, and
// records the events of every object (per-cluster problems, or why it is not delivered) when they change.
func (r *Reconciler) writeStatus(ctx context.Context, in inputs, tr fleet.Translation, pmw *workv1alpha1.PlacementManifestWork) error {
	hub, err := r.readHub(ctx, pmw)
	if err != nil {
		return err
	}
	leftOut := map[fleet.Key]fleet.Unsupported{}
	for _, u := range tr.Unsupported {
		leftOut[u.Key] = u
	}
	keep := []fleet.Key{{Kind: "Namespace", Name: in.ns.Name}}
	for _, o := range in.objects {
		key := fleet.KeyOf(o)
		keep = append(keep, key)
		if u, ok := leftOut[key]; ok {
			var evs []fleet.Event
			if u.Reason != fleet.ReasonOwned {
				evs = []fleet.Event{{Type: corev1.EventTypeWarning, Reason: EventNotDelivered, Message: u.Message}}
			}
			r.record(o, key, evs)
			continue
		}
		if _, ok := tr.Generation[key]; !ok {
			continue
		}
		reports := make([]fleet.ClusterReport, 0, len(hub.clusters))
		for _, c := range hub.clusters {
			reports = append(reports, hub.report(c, key))
		}
		status, evs := fleet.Status(o, reports, r.now())
		if status != nil && !equalJSON(status, o.Object["status"]) {
			if err := r.patchStatus(ctx, o, status); err != nil {
				return err
			}
		}
		r.record(o, key, evs)
	}
	r.forget(in.ns.Name, keep...)
	return nil
}

// report is what cluster reports of the manifest key.
func (v hubView) report(cluster string, key fleet.Key) fleet.ClusterReport {
	rep := fleet.ClusterReport{Cluster: cluster}
	h, unhealthy := v.unhealthy[cluster]
	w := v.works[cluster]
	if w == nil {
		rep.Health = health.Verdict{State: health.Progressing, Reason: "NoWork", Message: "no ManifestWork yet"}
		if unhealthy {
			rep.Health = verdictOf(h)
		}
		return rep
	}
	// The work carries the current translation unless the PlacementManifestWork's status, which describes the
	// current spec, says the cluster still runs an earlier template.
	rep.CarriesCurrent = v.settled && (!unhealthy || h.Reason != workv1alpha1.ReasonOutdatedTemplate)
	var mc *workv1.ManifestCondition
	for i := range w.Status.ResourceStatus.Manifests {
		rm := w.Status.ResourceStatus.Manifests[i].ResourceMeta
		if rm.Group == key.Group && rm.Kind == key.Kind && rm.Namespace == key.Namespace && rm.Name == key.Name {
			mc = &w.Status.ResourceStatus.Manifests[i]
			break
		}
	}
	if mc == nil {
		rep.Health = health.Verdict{State: health.Progressing, Reason: health.ReasonNotReported, Message: "not reported by the agent yet"}
		if unhealthy {
			rep.Health = verdictOf(h)
		}
		return rep
	}
	rep.Feedback = health.FeedbackOf(mc.StatusFeedbacks.Values)
	rep.Applied = conditionTrue(mc.Conditions, workv1.ManifestApplied, w.Generation)
	rep.Available = conditionTrue(mc.Conditions, workv1.ManifestAvailable, w.Generation)
	inputs := health.WorkManifests(w)
	if o := int(mc.ResourceMeta.Ordinal); o >= 0 && o < len(inputs) {
		in := inputs[o]
		in.Status = mc
		rep.Health = health.Manifest(in)
	}
	return rep
}

// conditionTrue tells whether the condition t is True for the work's generation (or without a generation).
func conditionTrue(conds []metav1.Condition, t string, generation int64) bool {
	c := meta.FindStatusCondition(conds, t)
	return c != nil && c.Status == metav1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration == generation)
}

func verdictOf(h workv1alpha1.ClusterHealth) health.Verdict {
	state := health.Progressing
	if h.State == workv1alpha1.ClusterDegraded {
		state = health.Degraded
	}
	return health.Verdict{State: state, Reason: h.Reason, Message: h.Message}
}

// patchStatus merge-patches o's status to status on the fleet API server; fields of the old status that the new
// one lacks are removed.
func (r *Reconciler) patchStatus(ctx context.Context, o *unstructured.Unstructured, status map[string]any) error {
	patch := map[string]any{}
	if old, ok := o.Object["status"].(map[string]any); ok {
		for k := range old {
			patch[k] = nil
		}
	}
	for k, v := range status {
		patch[k] = v
	}
	data, err := json.Marshal(map[string]any{"status": patch})
	if err != nil {
		return err
	}
	if err := r.Fleet.Status().Patch(ctx, o, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("status of %s: %w", fleet.KeyOf(o), err)
	}
	return nil
}
