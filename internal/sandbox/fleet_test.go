package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

// The transparent-mode sample is what a user and a hub administrator would apply: a namespace opted in with
// the cluster selector the settled check expects, its binding to the sandbox's clusterset, and plain manifests
// with no fleet annotation, whose Deployment asks for 6 replicas.
func TestFleetSample(t *testing.T) {
	objs, err := FleetSamples()
	if err != nil {
		t.Fatal(err)
	}
	if len(SamplePMWs(objs)) != 0 {
		t.Errorf("the transparent-mode sample has PlacementManifestWorks %v; the manager generates its own", SamplePMWs(objs))
	}
	if diff := cmp.Diff([]types.NamespacedName{FleetSample}, FleetSamplePMWs(objs)); diff != "" {
		t.Errorf("generated PlacementManifestWorks (-want +got):\n%s", diff)
	}
	if objs[0].GetKind() != "Namespace" || objs[0].GetName() != FleetNamespace {
		t.Fatalf("first object %s %s, want Namespace %s: it must exist before what goes in it", objs[0].GetKind(), objs[0].GetName(), FleetNamespace)
	}
	var ns corev1.Namespace
	fromUnstructured(t, objs[0], &ns)
	spec, err := fleet.OptIn(&ns)
	if err != nil {
		t.Fatalf("the manager cannot read the sample's opt-in: %v", err)
	}
	if spec.Placement != workv1alpha1.FleetGeneratedName || spec.Generated == nil {
		t.Errorf("opt-in %+v, want a Placement generated from a cluster selector", spec)
	}
	if got := ns.Annotations[workv1alpha1.AnnotationFleetClusterSelector]; got != FleetClusterSelector {
		t.Errorf("cluster selector %q, want FleetClusterSelector %q", got, FleetClusterSelector)
	}

	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs[1:] {
		kinds[o.GetKind()] = o
		if o.GetNamespace() != FleetNamespace {
			t.Errorf("%s %s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), FleetNamespace)
		}
		for k := range o.GetAnnotations() {
			if strings.HasPrefix(k, workv1alpha1.FleetPrefix) {
				t.Errorf("%s %s has annotation %s: the sample's manifests are plain ones", o.GetKind(), o.GetName(), k)
			}
		}
	}
	if b := kinds["ManagedClusterSetBinding"]; b == nil {
		t.Errorf("no ManagedClusterSetBinding: the hub namespace could not reach any cluster")
	} else if set, _, _ := unstructured.NestedString(b.Object, "spec", "clusterSet"); set != ClusterSetName || b.GetName() != ClusterSetName {
		t.Errorf("binding %s to clusterset %q, want %s", b.GetName(), set, ClusterSetName)
	}
	if d := kinds["Deployment"]; d == nil || DesiredReplicas(d) != 6 {
		t.Errorf("Deployment %v, want one with 6 replicas", d)
	}
	for _, k := range []string{"ConfigMap", "Service"} {
		if kinds[k] == nil {
			t.Errorf("no %s", k)
		}
	}
}

func TestFleetSampleClusters(t *testing.T) {
	cases := map[int][]string{
		5: {"cluster1", "cluster3", "cluster5"},
		4: {"cluster1", "cluster3"},
		1: {"cluster1"},
	}
	for n, want := range cases {
		if diff := cmp.Diff(want, SampleClusters(FleetSample, n)); diff != "" {
			t.Errorf("%d clusters (-want +got):\n%s", n, diff)
		}
	}
}

// fleetState is a fleet API server holding the sample's namespace and a Deployment with the status the manager
// wrote, a namespace that does not opt in, and the generated PlacementManifestWork's status on the hub.
func fleetState(ready int64, available metav1.ConditionStatus, observed int64) ([]corev1.Namespace, []unstructured.Unstructured, []workv1alpha1.PlacementManifestWork) {
	namespaces := []corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		{ObjectMeta: metav1.ObjectMeta{Name: FleetNamespace, Annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: FleetClusterSelector}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{workv1alpha1.LabelFleetPlacement: "prod"}}},
	}
	deployment := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": FleetNamespace, "generation": int64(2)},
		"spec":     map[string]any{"replicas": int64(6)},
		"status": map[string]any{"observedGeneration": observed, "readyReplicas": ready, "replicas": int64(6),
			"conditions": []any{map[string]any{"type": "Available", "status": string(available)}}},
	}}
	object := func(kind, ns, name string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns}}}
	}
	owned := object("ConfigMap", FleetNamespace, "made-by-a-controller")
	owned.SetOwnerReferences([]metav1.OwnerReference{{Kind: "Deployment", Name: "web"}})
	objects := []unstructured.Unstructured{
		object("Service", FleetNamespace, "web"), deployment, object("ConfigMap", FleetNamespace, "web-config"),
		object("ConfigMap", "other", "not-opted-in"), owned,
	}
	pmw := workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.FleetGeneratedName, Namespace: FleetNamespace,
			Labels: map[string]string{workv1alpha1.LabelFleetGenerated: "true"}},
		Status: workv1alpha1.PlacementManifestWorkStatus{Manifests: []workv1alpha1.ManifestSummary{
			{Kind: "Deployment", Group: "apps", Namespace: FleetNamespace, Name: "web", Healthy: 2, Progressing: 1},
			{Kind: "ConfigMap", Namespace: FleetNamespace, Name: "web-config", Healthy: 3},
		}},
	}
	return namespaces, objects, []workv1alpha1.PlacementManifestWork{pmw}
}

func TestRenderFleet(t *testing.T) {
	namespaces, objects, pmws := fleetState(4, metav1.ConditionFalse, 2)
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC)) }
	events := []FleetEvent{
		{Namespace: FleetNamespace, Kind: "Deployment", Name: "web", Time: at(2), Message: "cluster cluster3: 0 of 2 ready"},
		{Namespace: FleetNamespace, Kind: "Deployment", Name: "web", Time: at(1), Message: "cluster cluster1: no ManifestWork yet"},
		{Namespace: FleetNamespace, Kind: "ConfigMap", Name: "web-config", Time: at(3), Message: "cluster cluster1: no ManifestWork yet"},
	}
	s := Snapshot{Fleet: BuildFleet(namespaces, objects, pmws, events)}
	want := `CLUSTERS (0)
  CLUSTER  LABELS  AGENT

FLEET NAMESPACES (2)
  shop  cluster-selector="environment=production" placement=fleet  pmw=shop/fleet
    deployment/web        4/6 ready not Available  on 3 clusters      cluster cluster3: 0 of 2 ready
    configmap/web-config  -                        on 3 clusters
    service/web           -                        not delivered yet
  team-a  placement=prod  pmw=-

PLACEMENTMANIFESTWORKS (0)
`
	if diff := cmp.Diff(want, Render(s)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

func TestSettledFleet(t *testing.T) {
	cases := map[string]struct {
		ready     int64
		available metav1.ConditionStatus
		observed  int64
		want      []string
	}{
		"written back, all ready": {ready: 6, available: metav1.ConditionTrue, observed: 2},
		"not all ready": {ready: 4, available: metav1.ConditionFalse, observed: 2,
			want: []string{"fleet shop deployment/web: 4/6 ready not Available"}},
		"status of the previous generation": {ready: 6, available: metav1.ConditionTrue, observed: 1,
			want: []string{"fleet shop deployment/web: 6/6 ready Available (not observed yet)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			namespaces, objects, pmws := fleetState(tc.ready, tc.available, tc.observed)
			// The generated PlacementManifestWork has settled on the hub: only the fleet side is left to check.
			s := Snapshot{Fleet: BuildFleet(namespaces, objects, pmws, nil), PMWs: []PMWView{{NamespacedName: FleetSample}}}
			ok, why := Settled(s, []types.NamespacedName{FleetSample}, 0)
			if diff := cmp.Diff(tc.want, why); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if ok != (len(tc.want) == 0) {
				t.Errorf("settled = %v with reasons %v", ok, why)
			}
		})
	}
	t.Run("namespace no longer opted in", func(t *testing.T) {
		s := Snapshot{PMWs: []PMWView{{NamespacedName: FleetSample}}}
		if _, why := Settled(s, []types.NamespacedName{FleetSample}, 0); !cmp.Equal(why, []string{"fleet namespace shop is not opted in"}) {
			t.Errorf("reasons %v", why)
		}
	})
}
