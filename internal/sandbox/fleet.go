package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

// The transparent-mode sample (samples/shop.yaml): the namespace opted in on the fleet API server, which in the
// sandbox is the hub itself, and the cluster selector it opts in with.
const (
	FleetNamespace       = "shop"
	FleetClusterSelector = "environment=production"
)

// FleetSample is the PlacementManifestWork the manager generates for the transparent-mode sample: named
// workv1alpha1.FleetGeneratedName, in the hub namespace named like the fleet namespace.
var FleetSample = types.NamespacedName{Namespace: FleetNamespace, Name: workv1alpha1.FleetGeneratedName}

// shopSample is the transparent-mode sample: a namespace opted in by a cluster selector, its
// ManagedClusterSetBinding, and plain manifests (a Deployment, its ConfigMap and Service).
//
//go:embed samples/shop.yaml
var shopSample []byte

// FleetSamples is the transparent-mode sample (samples/shop.yaml), the namespace first.
func FleetSamples() ([]*unstructured.Unstructured, error) {
	return DecodeObjects(bytes.NewReader(shopSample), "samples/shop.yaml")
}

// FleetSamplePMWs are the PlacementManifestWorks the manager generates from the fleet namespaces among objs
// (the opted-in Namespaces): one named workv1alpha1.FleetGeneratedName in each.
func FleetSamplePMWs(objs []*unstructured.Unstructured) []types.NamespacedName {
	var out []types.NamespacedName
	for _, o := range objs {
		if o.GetAPIVersion() != "v1" || o.GetKind() != "Namespace" {
			continue
		}
		if _, named := o.GetLabels()[workv1alpha1.LabelFleetPlacement]; named {
			out = append(out, types.NamespacedName{Namespace: o.GetName(), Name: workv1alpha1.FleetGeneratedName})
		} else if _, selects := o.GetAnnotations()[workv1alpha1.AnnotationFleetClusterSelector]; selects {
			out = append(out, types.NamespacedName{Namespace: o.GetName(), Name: workv1alpha1.FleetGeneratedName})
		}
	}
	return out
}

// hubSetup separates the samples' Namespaces and ManagedClusterSetBindings, which a hub administrator creates
// before anyone deploys, from the rest, keeping the order of each.
func hubSetup(objs []*unstructured.Unstructured) (setup, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() == "Namespace" || o.GetKind() == "ManagedClusterSetBinding" {
			setup = append(setup, o)
		} else {
			rest = append(rest, o)
		}
	}
	return setup, rest
}

// bindSampleClusterSets marks the samples' ManagedClusterSetBindings Bound, as OCM's registration controller
// does for a binding whose set exists: the placement controller ignores bindings without it.
func bindSampleClusterSets(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetKind() != "ManagedClusterSetBinding" {
			continue
		}
		set, _, _ := unstructured.NestedString(o.Object, "spec", "clusterSet")
		if err := ocmsim.Bind(ctx, c, set, o.GetNamespace()); err != nil {
			return err
		}
	}
	return nil
}

// fleetKinds are the kinds the live view lists in a fleet namespace: the ones the transparent mode translates
// (docs/transparent.md, "What is translated"), workloads first.
var fleetKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
}

// FleetNamespaceView is one namespace of the fleet API server that opts in, and its objects.
type FleetNamespaceView struct {
	Name string
	// Placement is the Placement the namespace names with its label, or workv1alpha1.FleetGeneratedName when it
	// gives a cluster selector; Selects says whether it does, and Selector and NumberOfClusters are its
	// annotations.
	Placement, Selector, NumberOfClusters string
	Selects                               bool
	// Invalid is why the manager cannot read the opt-in (fleet.OptIn's error), empty when it can.
	Invalid string
	// PMW is the generated PlacementManifestWork's name ("shop/fleet"), empty while the hub has none.
	PMW     string
	Objects []FleetObjectView
}

// FleetObjectView is one object of a fleet namespace, with the status the manager wrote back on it.
type FleetObjectView struct {
	Kind, Name string
	// Workload says whether the kind's status is written back (Deployment, StatefulSet, ReplicaSet, DaemonSet,
	// Job); Desired and Ready are then its pods wanted and ready over the fleet (a Job's completions and
	// succeeded pods), as its status says.
	Workload       bool
	Desired, Ready int64
	// Available is a Deployment's Available condition, Complete and Failed a Job's; empty when not written.
	Available, Complete, Failed metav1.ConditionStatus
	// Observed says whether the status's observedGeneration is the object's generation.
	Observed bool
	// Clusters is on how many clusters the generated PlacementManifestWork reports the object (healthy,
	// progressing or degraded); -1 when its status does not list it.
	Clusters int32
	// Event is the message of the object's latest event from the manager ("cluster cluster3: 0 of 2 ready"),
	// shown while the object is not ready.
	Event string
}

// Settled says whether a workload's status on the fleet API server says it is done: every pod ready (a Job:
// complete), Available (a Deployment), and the status of the object's current generation.
func (o FleetObjectView) Settled() bool {
	switch {
	case !o.Workload:
		return true
	case !o.Observed || o.Ready < o.Desired:
		return false
	case o.Kind == "Deployment":
		return o.Available == metav1.ConditionTrue
	case o.Kind == "Job":
		return o.Complete == metav1.ConditionTrue
	}
	return true
}

// BuildFleet reduces the fleet API server's opted-in namespaces and their objects (of fleetKinds), the hub's
// PlacementManifestWorks and the events of the fleet namespaces to what the live view shows. Namespaces that do
// not opt in are left out.
func BuildFleet(namespaces []corev1.Namespace, objects []unstructured.Unstructured, pmws []workv1alpha1.PlacementManifestWork, events []FleetEvent) []FleetNamespaceView {
	generated := map[string]*workv1alpha1.PlacementManifestWork{}
	for i := range pmws {
		if pmws[i].Name == workv1alpha1.FleetGeneratedName && pmws[i].Labels[workv1alpha1.LabelFleetGenerated] == "true" {
			generated[pmws[i].Namespace] = &pmws[i]
		}
	}
	latest := map[string]FleetEvent{}
	for _, e := range events {
		k := e.Namespace + "/" + e.Kind + "/" + e.Name
		if l, ok := latest[k]; !ok || e.Time.After(l.Time.Time) {
			latest[k] = e
		}
	}
	kindRank := map[string]int{}
	for i, gvk := range fleetKinds {
		kindRank[gvk.Kind] = i
	}
	var out []FleetNamespaceView
	for i := range namespaces {
		ns := &namespaces[i]
		placement, named := ns.Labels[workv1alpha1.LabelFleetPlacement]
		selector, selects := ns.Annotations[workv1alpha1.AnnotationFleetClusterSelector]
		if !named && !selects {
			continue
		}
		v := FleetNamespaceView{Name: ns.Name, Placement: placement, Selector: selector, Selects: selects,
			NumberOfClusters: ns.Annotations[workv1alpha1.AnnotationFleetNumberOfClusters]}
		if spec, err := fleet.OptIn(ns); err != nil {
			v.Invalid = err.Error()
		} else {
			v.Placement = spec.Placement
		}
		pmw := generated[ns.Name]
		if pmw != nil {
			v.PMW = pmw.Namespace + "/" + pmw.Name
		}
		for j := range objects {
			o := &objects[j]
			if o.GetNamespace() != ns.Name || len(o.GetOwnerReferences()) > 0 {
				continue
			}
			ov := fleetObjectView(o, pmw)
			if !ov.Settled() {
				ov.Event = latest[ns.Name+"/"+ov.Kind+"/"+ov.Name].Message
			}
			v.Objects = append(v.Objects, ov)
		}
		sort.SliceStable(v.Objects, func(a, b int) bool {
			oa, ob := v.Objects[a], v.Objects[b]
			if kindRank[oa.Kind] != kindRank[ob.Kind] {
				return kindRank[oa.Kind] < kindRank[ob.Kind]
			}
			return oa.Name < ob.Name
		})
		out = append(out, v)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// FleetEvent is an event about a fleet object, as the manager records it there.
type FleetEvent struct {
	Namespace, Kind, Name string
	Time                  metav1.Time
	Message               string
}

// fleetObjectView reads one fleet object's status, and on how many clusters pmw (nil: none yet) reports it.
func fleetObjectView(o *unstructured.Unstructured, pmw *workv1alpha1.PlacementManifestWork) FleetObjectView {
	gvk := o.GroupVersionKind()
	v := FleetObjectView{Kind: gvk.Kind, Name: o.GetName(), Clusters: -1}
	count := func(field string) int64 {
		n, _, _ := unstructured.NestedInt64(o.Object, "status", field)
		return n
	}
	switch gvk.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		v.Workload, v.Desired, v.Ready = true, DesiredReplicas(o), count("readyReplicas")
	case "DaemonSet":
		v.Workload, v.Desired, v.Ready = true, count("desiredNumberScheduled"), count("numberReady")
	case "Job":
		v.Workload, v.Desired, v.Ready = true, ocmsim.JobCompletions(o), count("succeeded")
	}
	if v.Workload {
		observed := count("observedGeneration")
		// The API server keeps no observedGeneration on a Job: its status is current once written.
		v.Observed = observed == o.GetGeneration() || (gvk.Kind == "Job" && observed == 0)
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			c, _ := c.(map[string]any)
			status, _ := c["status"].(string)
			switch c["type"] {
			case "Available":
				v.Available = metav1.ConditionStatus(status)
			case "Complete":
				v.Complete = metav1.ConditionStatus(status)
			case "Failed":
				v.Failed = metav1.ConditionStatus(status)
			}
		}
	}
	if pmw != nil {
		for _, m := range pmw.Status.Manifests {
			if m.Kind == gvk.Kind && m.Group == gvk.Group && m.Namespace == o.GetNamespace() && m.Name == o.GetName() {
				v.Clusters = m.Healthy + m.Progressing + m.Degraded
			}
		}
	}
	return v
}

// FleetSampleClusters are the clusters of n sandbox clusters that the transparent-mode sample's selector picks.
func FleetSampleClusters(n int) []string {
	sel, err := labels.Parse(FleetClusterSelector)
	if err != nil {
		panic(err) // a constant; TestFleetSample parses it too
	}
	var out []string
	for i, name := range ClusterNames(n) {
		if sel.Matches(labels.Set(ClusterLabels(name, i))) {
			out = append(out, name)
		}
	}
	return out
}

// fleetSettled lists why the fleet sample's objects are not done yet, by their status on the fleet API server.
func fleetSettled(s Snapshot, name types.NamespacedName) []string {
	for _, ns := range s.Fleet {
		if ns.Name != name.Namespace {
			continue
		}
		var why []string
		if ns.Invalid != "" {
			why = append(why, fmt.Sprintf("fleet namespace %s: %s", ns.Name, ns.Invalid))
		}
		for _, o := range ns.Objects {
			if !o.Settled() {
				why = append(why, fmt.Sprintf("fleet %s %s: %s", ns.Name, fleetObjectName(o), fleetObjectState(o)))
			}
		}
		return why
	}
	return []string{fmt.Sprintf("fleet namespace %s is not opted in", name.Namespace)}
}

// fleetObjectName is "deployment/web", as kubectl names it.
func fleetObjectName(o FleetObjectView) string {
	return strings.ToLower(o.Kind) + "/" + o.Name
}

// fleetObjectState says, in a few words, what the status on the fleet API server says: "6/6 ready Available",
// "4/6 ready not Available", "1/1 succeeded Complete"; "-" for kinds whose status is not written back.
func fleetObjectState(o FleetObjectView) string {
	if !o.Workload {
		return "-"
	}
	verb := "ready"
	if o.Kind == "Job" {
		verb = "succeeded"
	}
	state := fmt.Sprintf("%d/%d %s", o.Ready, o.Desired, verb)
	switch {
	case o.Kind == "Deployment" && o.Available == metav1.ConditionTrue:
		state += " Available"
	case o.Kind == "Deployment":
		state += " not Available"
	case o.Kind == "Job" && o.Complete == metav1.ConditionTrue:
		state += " Complete"
	case o.Kind == "Job" && o.Failed == metav1.ConditionTrue:
		state += " Failed"
	}
	if !o.Observed {
		state += " (not observed yet)"
	}
	return state
}

// collectFleet reads the fleet API server (the hub, in the sandbox): its opted-in namespaces, their objects and
// the events on them.
func collectFleet(ctx context.Context, c client.Reader, pmws []workv1alpha1.PlacementManifestWork) ([]FleetNamespaceView, error) {
	nsList := &corev1.NamespaceList{}
	if err := c.List(ctx, nsList); err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	var opted []corev1.Namespace
	var objects []unstructured.Unstructured
	var events []FleetEvent
	for _, ns := range nsList.Items {
		_, named := ns.Labels[workv1alpha1.LabelFleetPlacement]
		_, selects := ns.Annotations[workv1alpha1.AnnotationFleetClusterSelector]
		if !named && !selects {
			continue
		}
		opted = append(opted, ns)
		for _, gvk := range fleetKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
				return nil, fmt.Errorf("listing %ss in %s: %w", gvk.Kind, ns.Name, err)
			}
			objects = append(objects, list.Items...)
		}
		evs := &unstructured.UnstructuredList{}
		evs.SetGroupVersionKind(schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "EventList"})
		if err := c.List(ctx, evs, client.InNamespace(ns.Name)); err != nil {
			return nil, fmt.Errorf("listing events in %s: %w", ns.Name, err)
		}
		for _, e := range evs.Items {
			events = append(events, fleetEvent(&e))
		}
	}
	return BuildFleet(opted, objects, pmws, events), nil
}

// fleetEvent reads an events.k8s.io/v1 Event: what it is about, when it last happened, and its note.
func fleetEvent(e *unstructured.Unstructured) FleetEvent {
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(e.Object, path...)
		return s
	}
	fe := FleetEvent{Namespace: str("regarding", "namespace"), Kind: str("regarding", "kind"), Name: str("regarding", "name"), Message: str("note")}
	for _, field := range [][]string{{"series", "lastObservedTime"}, {"eventTime"}, {"deprecatedLastTimestamp"}, {"metadata", "creationTimestamp"}} {
		if t := str(field...); t != "" {
			if err := fe.Time.UnmarshalQueryParameter(t); err == nil {
				break
			}
		}
	}
	return fe
}
