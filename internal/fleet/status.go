package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// hubView is what the hub says of the generated PlacementManifestWork's clusters.
type hubView struct {
	// clusters are the clusters the placement decided, sorted; leaving those with a work of the
	// PlacementManifestWork the placement no longer decides, sorted: their works stay until the move completes
	// (make before break) or the work is deleted.
	clusters, leaving []string
	// works are the PlacementManifestWork's works by cluster.
	works map[string]*workv1.ManifestWork
	// carried are the generations of the fleet objects each cluster's work carries (fleet.CarriedGenerations).
	carried map[string]map[fleet.Key]int64
	// unhealthy are the clusters the PlacementManifestWork's status names as not available.
	unhealthy map[string]workv1alpha1.ClusterHealth
	// away says, per ManagedCluster that is not available, why (health.ManagedClusterUnavailable): the
	// manager's status names only decided clusters, and at most status.MaxUnhealthyListed of them, so a
	// leaving cluster held because it is away is found here.
	away map[string]string
}

// readHub lists the decided clusters and the works of pmw, through the cache's label indexes (labelindex).
func (r *Reconciler) readHub(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (hubView, error) {
	v := hubView{works: map[string]*workv1.ManifestWork{}, unhealthy: map[string]workv1alpha1.ClusterHealth{},
		carried: map[string]map[fleet.Key]int64{}, away: map[string]string{}}
	for _, h := range pmw.Status.UnhealthyClusters {
		v.unhealthy[h.Cluster] = h
	}
	managed := &clusterv1.ManagedClusterList{}
	if err := r.Hub.List(ctx, managed, client.UnsafeDisableDeepCopy); err != nil {
		return v, fmt.Errorf("list the ManagedClusters: %w", err)
	}
	for i := range managed.Items {
		if why := health.ManagedClusterUnavailable(&managed.Items[i]); why != "" {
			v.away[managed.Items[i].Name] = why
		}
	}
	carried, err := r.revisionGenerations(ctx, pmw)
	if err != nil {
		return v, err
	}
	works := &workv1.ManifestWorkList{}
	ownership := manifestwork.OwnershipOf(pmw)
	if err := labelindex.List(ctx, r.Hub, works, workv1alpha1.LabelPlacementManifestWork, ownership.LabelValue()); err != nil {
		return v, fmt.Errorf("list the works: %w", err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		if ownership.Owns(w) {
			v.works[w.Namespace] = w
			v.carried[w.Namespace] = carried[w.Annotations[workv1alpha1.AnnotationTemplateHash]]
		}
	}
	decided := map[string]bool{}
	if pmw.Spec.PlacementRef != nil {
		decisions := &clusterv1beta1.PlacementDecisionList{}
		if err := labelindex.List(ctx, r.Hub, decisions, clusterv1beta1.PlacementLabel, pmw.Spec.PlacementRef.Name,
			client.InNamespace(pmw.Namespace)); err != nil {
			return v, fmt.Errorf("list the placement decisions: %w", err)
		}
		for _, d := range decisions.Items {
			for _, c := range d.Status.Decisions {
				if !decided[c.ClusterName] {
					decided[c.ClusterName] = true
					v.clusters = append(v.clusters, c.ClusterName)
				}
			}
		}
	}
	for c, w := range v.works {
		if !decided[c] && w.DeletionTimestamp.IsZero() {
			v.leaving = append(v.leaving, c)
		}
	}
	sort.Strings(v.clusters)
	sort.Strings(v.leaving)
	return v, nil
}

// revisionGenerations maps the template hashes of the generated PlacementManifestWork's works to the
// generations of the fleet objects their template carries: the cache holds the works without their manifests
// and the ControllerRevisions without their data, so each revision's data is read once from the hub (it never
// changes) and the hashes find the revision (revision.ByTemplateHash).
func (r *Reconciler) revisionGenerations(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork) (map[string]map[fleet.Key]int64, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := labelindex.List(ctx, r.Hub, list, workv1alpha1.LabelPlacementManifestWork,
		manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)), client.InNamespace(pmw.Namespace)); err != nil {
		return nil, fmt.Errorf("list the ControllerRevisions: %w", err)
	}
	owned := revision.Owned(list.Items, pmw)
	r.mu.Lock()
	held := r.generations[pmw.Namespace]
	r.mu.Unlock()
	next := make(map[types.UID]map[fleet.Key]int64, len(owned))
	byNumber := make(map[int64]map[fleet.Key]int64, len(owned))
	values := make([]appsv1.ControllerRevision, 0, len(owned))
	for _, cr := range owned {
		values = append(values, *cr)
		gens, ok := held[cr.UID]
		if !ok {
			full := &appsv1.ControllerRevision{}
			if err := r.HubReader.Get(ctx, client.ObjectKeyFromObject(cr), full); err != nil {
				if apierrors.IsNotFound(err) {
					continue // pruned meanwhile
				}
				return nil, fmt.Errorf("read ControllerRevision %s: %w", cr.Name, err)
			}
			gens = map[fleet.Key]int64{}
			if spec, err := revision.Spec(full, pmw); err == nil {
				gens = fleet.CarriedGenerations(pmw.Namespace, spec.ManifestWorkTemplate.Workload.Manifests)
			}
		}
		next[cr.UID] = gens
		byNumber[cr.Revision] = gens
	}
	r.mu.Lock()
	if r.generations == nil {
		r.generations = map[string]map[types.UID]map[fleet.Key]int64{}
	}
	r.generations[pmw.Namespace] = next
	r.mu.Unlock()
	out := map[string]map[fleet.Key]int64{}
	for hash, n := range revision.ByTemplateHash(values) {
		out[hash] = byNumber[n]
	}
	return out, nil
}

// deliveredCondition is the generated PlacementManifestWork's workv1alpha1.ConditionFleetObjectsDelivered after
// the translation tr, and the event that goes with it on the PlacementManifestWork.
func (r *Reconciler) deliveredCondition(pmw *workv1alpha1.PlacementManifestWork, tr fleet.Translation) (metav1.Condition, []fleet.Event) {
	msg := leftOutMessage(tr.Unsupported)
	if msg == "" {
		return metav1.Condition{Type: workv1alpha1.ConditionFleetObjectsDelivered, Status: metav1.ConditionTrue,
			Reason: workv1alpha1.ReasonFleetObjectsDelivered, ObservedGeneration: pmw.Generation,
			Message: fmt.Sprintf("every object of fleet namespace %s is delivered", pmw.Namespace)}, nil
	}
	return metav1.Condition{Type: workv1alpha1.ConditionFleetObjectsDelivered, Status: metav1.ConditionFalse,
			Reason: workv1alpha1.ReasonFleetObjectsLeftOut, ObservedGeneration: pmw.Generation, Message: msg},
		[]fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetNotDelivered, Message: msg}}
}

// setDelivered sets cond on the generated PlacementManifestWork, and records evs on it when they are new. The
// manager's own status writes keep a condition type they do not set.
func (r *Reconciler) setDelivered(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, cond metav1.Condition, evs []fleet.Event) error {
	r.record(pmw, pmwKey(pmw), evs, r.HubRecorder)
	if cur := meta.FindStatusCondition(pmw.Status.Conditions, cond.Type); cur != nil && cur.Status == cond.Status &&
		cur.Reason == cond.Reason && cur.Message == cond.Message && cur.ObservedGeneration == cond.ObservedGeneration {
		return nil
	}
	cond.LastTransitionTime = metav1.NewTime(r.now())
	pmw = pmw.DeepCopy()
	meta.SetStatusCondition(&pmw.Status.Conditions, cond)
	if err := r.Hub.Status().Update(ctx, pmw); err != nil {
		// A conflict is the manager's own status write: the event it brings reconciles again.
		if apierrors.IsConflict(err) {
			return nil
		}
		return fmt.Errorf("set %s on the generated PlacementManifestWork: %w", cond.Type, err)
	}
	return nil
}

// pmwKey is the key the events recorded on the generated PlacementManifestWork are remembered by.
func pmwKey(pmw *workv1alpha1.PlacementManifestWork) fleet.Key {
	return fleet.Key{Group: workv1alpha1.GroupVersion.Group, Kind: "PlacementManifestWork", Namespace: pmw.Namespace, Name: pmw.Name}
}

// maxLeftOutNamed bounds how many left-out objects the condition's message names.
const maxLeftOutNamed = 5

// leftOutMessage names the objects left out and why, "" when none is (objects owned by another are expected,
// not counted).
func leftOutMessage(unsupported []fleet.Unsupported) string {
	var parts []string
	n := 0
	for _, u := range unsupported {
		if u.Reason == fleet.ReasonOwned {
			continue
		}
		n++
		if len(parts) < maxLeftOutNamed {
			parts = append(parts, fmt.Sprintf("%s (%s: %s)", u.Key, u.Reason, u.Message))
		}
	}
	if n == 0 {
		return ""
	}
	msg := fmt.Sprintf("%s of the fleet namespace %s not delivered: %s", text.Count(n, "object", "objects"), text.Plural(n, "is", "are"), strings.Join(parts, "; "))
	if n > len(parts) {
		msg += fmt.Sprintf("; and %d more (kubectl get events on the fleet API server)", n-len(parts))
	}
	return msg
}

// writeStatus writes the status of each translated object on the fleet API server from its clusters, and
// records the events of every object (per-cluster problems, or why it is not delivered) when they change.
func (r *Reconciler) writeStatus(ctx context.Context, in inputs, tr fleet.Translation, pmw *workv1alpha1.PlacementManifestWork) error {
	hub, err := r.readHub(ctx, pmw)
	if err != nil {
		return err
	}
	var errs []error
	leftOut := map[fleet.Key]fleet.Unsupported{}
	for _, u := range tr.Unsupported {
		leftOut[u.Key] = u
	}
	keep := []fleet.Key{{Kind: "Namespace", Name: in.ns.Name}, pmwKey(pmw)}
	for _, o := range in.objects {
		key := fleet.KeyOf(o)
		keep = append(keep, key)
		if u, ok := leftOut[key]; ok {
			var evs []fleet.Event
			if u.Reason != fleet.ReasonOwned {
				evs = []fleet.Event{{Type: corev1.EventTypeWarning, Reason: workv1alpha1.EventFleetNotDelivered, Message: u.Message}}
			}
			r.record(o, key, evs, r.Recorder)
			continue
		}
		if _, ok := tr.Generation[key]; !ok {
			continue
		}
		reports := make([]fleet.ClusterReport, 0, len(hub.works))
		for _, c := range hub.clusters {
			reports = append(reports, hub.report(c, key, tr.Generation[key]))
		}
		// A cluster the placement left whose work stays until the move completes still serves.
		for _, c := range hub.leaving {
			rep := hub.report(c, key, tr.Generation[key])
			rep.Leaving = true
			reports = append(reports, rep)
		}
		status, evs := fleet.Status(o, reports, r.now())
		if status != nil && !equalJSON(status, o.Object["status"]) {
			// One object whose status cannot be written (deleted meanwhile, refused) does not hold the others'.
			if err := r.patchStatus(ctx, o, status); client.IgnoreNotFound(err) != nil {
				errs = append(errs, err)
			}
		}
		r.record(o, key, evs, r.Recorder)
	}
	r.forgetEvents(in.ns.Name, keep...)
	return errors.Join(errs...)
}

// report is what cluster reports of the manifest key, whose fleet object is at generation. A cluster that is
// not available (its ManagedCluster says so, or the manager's status: ClusterUnavailable) is Unavailable, with
// the manager's verdict: its work holds the agent's last report, which says nothing of now.
func (v hubView) report(cluster string, key fleet.Key, generation int64) fleet.ClusterReport {
	rep := v.reported(cluster, key, generation)
	h, unhealthy := v.unhealthy[cluster]
	switch {
	case unhealthy && h.Reason == workv1alpha1.ReasonClusterUnavailable:
		rep.Unavailable, rep.Health = true, verdictOf(h)
	case v.away[cluster] != "":
		rep.Unavailable = true
		rep.Health = health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: v.away[cluster]}
	}
	return rep
}

// reported is what cluster's work reports of the manifest key, whose fleet object is at generation.
func (v hubView) reported(cluster string, key fleet.Key, generation int64) fleet.ClusterReport {
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
	// The manifest in the work says which generation of the object it was made from: a cluster that a rollout
	// holds on an earlier template, or whose work the manager has not rewritten yet, carries an older one.
	// Until the agent reports the work's generation applied, its status feedback still describes the spec
	// before: a cluster counts as carrying the current generation only once both hold.
	carried, ok := v.carried[cluster][key]
	applied := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	rep.CarriesCurrent = ok && carried == generation &&
		applied != nil && applied.Status == metav1.ConditionTrue && applied.ObservedGeneration == w.Generation
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
	// A report read before the agent applied the work's template describes the object as it was.
	templateHash := w.Annotations[workv1alpha1.AnnotationTemplateHash]
	if health.StaleReport(mc, templateHash) {
		rep.CarriesCurrent = false
	}
	rep.Feedback = health.FeedbackOf(mc.StatusFeedbacks.Values)
	rep.Applied = conditionTrue(mc.Conditions, workv1.ManifestApplied, w.Generation)
	rep.Available = conditionTrue(mc.Conditions, workv1.ManifestAvailable, w.Generation)
	inputs := health.WorkManifests(w)
	if o := int(mc.ResourceMeta.Ordinal); o >= 0 && o < len(inputs) {
		in := inputs[o]
		in.Status, in.WorkTemplateHash = mc, templateHash
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
// one lacks are removed. o takes the API server's answer, so the object store holds the written object and the
// next reconcile does not read it again.
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
