package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// previewWork is a ManifestWork in cluster with the given manifests.
func previewWork(cluster string, manifests ...string) *workv1.ManifestWork {
	w := &workv1.ManifestWork{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.open-cluster-management.io/v1", Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-0123456789", Namespace: cluster},
	}
	for _, m := range manifests {
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
	}
	return w
}

// configMap is a ConfigMap manifest, as JSON with sorted keys, whose data v is the value.
func configMap(v string) string {
	return `{"apiVersion":"v1","data":{"v":"` + v + `"},"kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}}`
}

// printed is a preview with one cluster of each kind the text output shows differently.
func printed() *PreviewResult {
	live, desired := previewWork("c1", configMap("1")), previewWork("c1", configMap("2"))
	return &PreviewResult{
		Namespace: "apps", Name: "web", Exists: true, SpecChanged: true,
		Placement: "p", PlacementNote: "Placement p decides 3 clusters", Decided: []string{"c0", "c1", "c2"},
		RolloutStrategy: "Progressive",
		Notes:           []string{"The rollout is at group 0"},
		Clusters: []ClusterPreview{
			{Cluster: "c0", Action: ActionCreate, RolloutFirst: true, Shares: map[string]int32{"Deployment.apps default/web .spec.replicas": 2},
				Overrides: []string{"eu-mirror", "canary"}, Desired: previewWork("c0", configMap("2"))},
			{Cluster: "c1", Action: ActionUpdate, RolloutFirst: true, Desired: desired, Live: live, Diff: manifestsDiff("c1", live, desired)},
			{Cluster: "c2", Action: ActionHeld, Message: "the rollout strategy keeps it on its current template for now",
				Desired: previewWork("c2", configMap("2")), Live: previewWork("c2", configMap("1")), Diff: manifestsDiff("c2", previewWork("c2", configMap("1")), desired)},
			{Cluster: "c3", Action: ActionDelete, Message: "the cluster left the decisions", Live: previewWork("c3", configMap("1"))},
		},
	}
}

// sameJSON compares manifests as JSON values: the indented JSON output indents them too.
var sameJSON = cmp.Comparer(func(a, b runtime.RawExtension) bool {
	var x, y any
	return json.Unmarshal(a.Raw, &x) == nil && json.Unmarshal(b.Raw, &y) == nil && cmp.Equal(x, y)
})

func TestPreviewPrint(t *testing.T) {
	const text = `PlacementManifestWork apps/web (on the hub: its spec changed)
Placement p decides 3 clusters
Note: The rollout is at group 0
ManifestWorks: create 1, update 1, delete 1, held 1
Rollout Progressive: 2 clusters get the new template first (*), 1 held

CLUSTER  ACTION    SHARES                                        OVERRIDES         WHY
c0       Create *  Deployment.apps default/web .spec.replicas=2  eu-mirror,canary
c1       Update *  -                                             -
c2       Held      -                                             -                 the rollout strategy keeps it on its current template for now
c3       Delete    -                                             -                 the cluster left the decisions

--- c1/web-0123456789 (live)
+++ c1/web-0123456789 (desired)
@@ -1,7 +1,7 @@
 # manifest 0: ConfigMap default/cfg
 apiVersion: v1
 data:
-  v: "1"
+  v: "2"
 kind: ConfigMap
 metadata:
   name: cfg
`
	const newInvalid = `PlacementManifestWork apps/web (not on the hub yet: created)
Placement p decides 1 cluster
Invalid (InvalidOverride): spec.overrides cannot be used: no
ManifestWorks: nothing to write
`
	invalid := &PreviewResult{Namespace: "apps", Name: "web", Placement: "p", PlacementNote: "Placement p decides 1 cluster",
		RolloutStrategy: "All", Invalid: &metav1.Condition{Type: workv1alpha1.ConditionDistributed, Status: metav1.ConditionFalse,
			Reason: workv1alpha1.ReasonInvalidOverride, Message: "spec.overrides cannot be used: no"}}

	cases := map[string]struct {
		result *PreviewResult
		format string
		// want is the exact output; check, when set, checks it instead.
		want    string
		check   func(t *testing.T, out []byte)
		wantErr string
	}{
		"text":                {result: printed(), format: "text", want: text},
		"text is the default": {result: printed(), format: "", want: text},
		"text of an invalid new PlacementManifestWork": {result: invalid, format: "text", want: newInvalid},
		"json decodes to the preview": {result: printed(), format: "json", check: func(t *testing.T, out []byte) {
			got := &PreviewResult{}
			if err := json.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(printed(), got, sameJSON); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if !bytes.Contains(out, []byte(`"action": "Update"`)) || !bytes.Contains(out, []byte(`"rolloutFirst": true`)) {
				t.Errorf("want lowerCamel fields, got:\n%s", out)
			}
		}},
		"yaml decodes to the preview": {result: printed(), format: "yaml", check: func(t *testing.T, out []byte) {
			got := &PreviewResult{}
			if err := yaml.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(printed(), got, sameJSON); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if !bytes.Contains(out, []byte("\n- action: Create\n")) {
				t.Errorf("want the clusters' actions, got:\n%s", out)
			}
		}},
		"an unknown format": {result: printed(), format: "wide", wantErr: `unknown output format "wide": use text, yaml or json`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := tc.result.Print(&out, tc.format)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, out.Bytes())
				return
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			b.WriteString(strings.Repeat("x", i) + "\n")
		}
		return b.String()
	}
	cases := map[string]struct {
		a, b, want string
	}{
		"equal": {a: "a\nb\n", b: "a\nb\n", want: ""},
		"from nothing": {a: "", b: "a\nb\n", want: `--- a
+++ b
@@ -0,0 +1,2 @@
+a
+b
`},
		"to nothing": {a: "a\n", b: "", want: `--- a
+++ b
@@ -1 +0,0 @@
-a
`},
		"a line changed in the middle, three lines of context": {a: lines(1, 9), b: strings.Replace(lines(1, 9), "xxxxx\n", "five\n", 1), want: `--- a
+++ b
@@ -2,7 +2,7 @@
 xx
 xxx
 xxxx
-xxxxx
+five
 xxxxxx
 xxxxxxx
 xxxxxxxx
`},
		"changes far apart make two hunks": {a: lines(1, 20), b: strings.Replace(strings.Replace(lines(1, 20), "x\n", "one\n", 1), strings.Repeat("x", 20)+"\n", "twenty\n", 1), want: `--- a
+++ b
@@ -1,4 +1,4 @@
-x
+one
 xx
 xxx
 xxxx
@@ -17,4 +17,4 @@
 xxxxxxxxxxxxxxxxx
 xxxxxxxxxxxxxxxxxx
 xxxxxxxxxxxxxxxxxxx
-xxxxxxxxxxxxxxxxxxxx
+twenty
`},
		"changes close together share a hunk": {a: "a\nb\nc\nd\ne\nf\ng\nh\n", b: "A\nb\nc\nd\ne\nf\ng\nH\n", want: `--- a
+++ b
@@ -1,8 +1,8 @@
-a
+A
 b
 c
 d
 e
 f
 g
-h
+H
`},
		"lines added and removed": {a: "a\nb\nc\n", b: "a\nc\nd\n", want: `--- a
+++ b
@@ -1,3 +1,3 @@
 a
-b
 c
+d
`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, unifiedDiff("a", "b", tc.a, tc.b)); diff != "" {
				t.Errorf("diff (-want +got):\n%s", diff)
			}
		})
	}
}

const previewNamespace = "apps"

// previewPMW is a PlacementManifestWork of a ConfigMap whose data v is the value, on Placement p.
func previewPMW(v string) *workv1alpha1.PlacementManifestWork {
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: previewNamespace},
		Spec: workv1alpha1.PlacementManifestWorkSpec{
			PlacementRef: &workv1alpha1.LocalPlacementReference{Name: "p"},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(configMap(v))}}}}},
		},
	}
}

// decidedPlacement is Placement p, decided by OCM's placement controller, and its decision of the clusters.
func decidedPlacement(clusters ...string) []client.Object {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: "p-decision-1", Namespace: previewNamespace,
		Labels: map[string]string{clusterv1beta1.PlacementLabel: "p", clusterv1beta1.DecisionGroupIndexLabel: "0"}}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: previewNamespace}}
	p.Status = ocmsim.PlacementStatus(p.Status, []clusterv1beta1.PlacementDecision{*d})
	return []client.Object{p, d}
}

// available is an available ManagedCluster.
func available(name string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1.ManagedClusterStatus{
		Conditions: []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "Test"}}}}
}

// previewDelivered is what the manager wrote for pmw (created with the UID) as the preview shows it: the
// PlacementManifestWork and the works the preview creates.
func previewDelivered(t *testing.T, hub client.Client, pmw *workv1alpha1.PlacementManifestWork) []client.Object {
	t.Helper()
	res, err := Preview(context.Background(), hub, pmw, PreviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live := pmw.DeepCopy()
	live.UID, live.Generation = "uid-1", 1
	out := []client.Object{live}
	for _, c := range res.Clusters {
		if c.Action != ActionCreate {
			t.Fatalf("cluster %s: want Create, got %s", c.Cluster, c.Action)
		}
		c.Desired.Annotations[workv1alpha1.AnnotationOwnerUID] = string(live.UID)
		out = append(out, c.Desired)
	}
	return out
}

func previewHub(objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).Build()
}

func TestPreview(t *testing.T) {
	// two is the hub after the manager delivered previewPMW("1") to clusters a and b.
	two := func(t *testing.T) []client.Object {
		base := append(decidedPlacement("a", "b"), available("a"), available("b"), available("c"))
		return append(base, previewDelivered(t, previewHub(base...), previewPMW("1"))...)
	}
	// redecided replaces Placement p and its decision in objs by ones of the clusters.
	redecided := func(objs []client.Object, clusters ...string) []client.Object {
		var out []client.Object
		for _, o := range objs {
			switch o.(type) {
			case *clusterv1beta1.Placement, *clusterv1beta1.PlacementDecision:
			default:
				out = append(out, o)
			}
		}
		return append(out, decidedPlacement(clusters...)...)
	}
	cases := map[string]struct {
		hub     func(t *testing.T) []client.Object
		pmw     *workv1alpha1.PlacementManifestWork
		actions map[string]PreviewAction
		check   func(t *testing.T, res *PreviewResult)
	}{
		"a Placement the manager would create": {
			hub: func(*testing.T) []client.Object { return nil },
			pmw: func() *workv1alpha1.PlacementManifestWork { p := previewPMW("1"); p.Spec.PlacementRef = nil; return p }(),
			check: func(t *testing.T, res *PreviewResult) {
				if !strings.Contains(res.PlacementNote, "Placement web does not exist yet: the manager would create it") {
					t.Errorf("placement note: %s", res.PlacementNote)
				}
			},
		},
		"a new template: the works updated": {
			hub: two, pmw: previewPMW("2"),
			actions: map[string]PreviewAction{"a": ActionUpdate, "b": ActionUpdate},
			check: func(t *testing.T, res *PreviewResult) {
				if !res.Exists || !res.SpecChanged {
					t.Errorf("want an existing PlacementManifestWork whose spec changed, got exists %v, changed %v", res.Exists, res.SpecChanged)
				}
				a := res.Clusters[0]
				if a.Desired.Annotations[workv1alpha1.AnnotationOwnerUID] != "uid-1" || a.Desired.Annotations[workv1alpha1.AnnotationUpdatedAt] == "" {
					t.Errorf("want the live owner UID and an updatedAt, got %v", a.Desired.Annotations)
				}
				if !strings.Contains(a.Diff, "\n-  v: \"1\"\n+  v: \"2\"\n") {
					t.Errorf("diff:\n%s", a.Diff)
				}
			},
		},
		"a cluster leaving while another joins: kept until it is ready": {
			hub: func(t *testing.T) []client.Object { return redecided(two(t), "b", "c") }, pmw: previewPMW("1"),
			actions: map[string]PreviewAction{"a": ActionKept, "b": ActionUnchanged, "c": ActionCreate},
		},
		"a cluster leaving with moveStrategy Immediate: deleted": {
			hub: func(t *testing.T) []client.Object { return redecided(two(t), "b", "c") },
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := previewPMW("1")
				p.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveImmediate}
				return p
			}(),
			actions: map[string]PreviewAction{"a": ActionDelete, "b": ActionUnchanged, "c": ActionCreate},
		},
		"an override that does not compile: invalid, the works kept": {
			hub: two,
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := previewPMW("2")
				p.Spec.Overrides = []workv1alpha1.ClusterOverride{{Name: "broken", Patches: []workv1alpha1.OverridePatch{{
					Op: workv1alpha1.OverridePatchReplace, Path: "/data/v", Expression: "cluster.labels["}}}}
				return p
			}(),
			actions: map[string]PreviewAction{"a": ActionKept, "b": ActionKept},
			check: func(t *testing.T, res *PreviewResult) {
				if res.Invalid == nil || res.Invalid.Reason != workv1alpha1.ReasonInvalidOverride {
					t.Errorf("want InvalidOverride, got %+v", res.Invalid)
				}
			},
		},
		"a foreign work in the way": {
			hub: func(*testing.T) []client.Object {
				foreign := previewWork("a", configMap("x"))
				foreign.Name = manifestwork.WorkName(manifestwork.Owner(previewPMW("1")))
				return append(decidedPlacement("a"), foreign)
			},
			pmw:     previewPMW("1"),
			actions: map[string]PreviewAction{"a": ActionConflict},
		},
		"a PlacementManifestWork being deleted: its works deleted": {
			hub: func(t *testing.T) []client.Object {
				objs := two(t)
				live := objs[len(objs)-3].(*workv1alpha1.PlacementManifestWork)
				live.Finalizers, live.DeletionTimestamp = []string{workv1alpha1.Finalizer}, &metav1.Time{Time: metav1.Now().Time}
				return objs
			},
			pmw:     previewPMW("1"),
			actions: map[string]PreviewAction{"a": ActionDelete, "b": ActionDelete},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hub := previewHub(tc.hub(t)...)
			res, err := Preview(context.Background(), hub, tc.pmw, PreviewOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]PreviewAction{}
			for _, c := range res.Clusters {
				got[c.Cluster] = c.Action
			}
			if tc.actions == nil {
				tc.actions = map[string]PreviewAction{}
			}
			if diff := cmp.Diff(tc.actions, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
			// Nothing is written: the generated Placement is not created either.
			if err := hub.Get(context.Background(), client.ObjectKey{Namespace: previewNamespace, Name: "web"}, &clusterv1beta1.Placement{}); !apierrors.IsNotFound(err) {
				t.Errorf("want no Placement web, got %v", err)
			}
		})
	}
}

func TestPreviewHubErrors(t *testing.T) {
	noCRD := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: workv1alpha1.GroupVersion.Group, Kind: "PlacementManifestWork"}}
	noOCM := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: workv1.GroupName, Kind: "ManifestWork"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: workv1.GroupName, Resource: "manifestworks"}, "",
		errors.New(`User "bob" cannot list resource "manifestworks" in API group "work.open-cluster-management.io" at the cluster scope`))
	cases := map[string]struct {
		funcs interceptor.Funcs
		want  string
		is    func(error) bool
	}{
		"no PlacementManifestWork CRD": {
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return noCRD
			}},
			want: "the hub has no PlacementManifestWork CRD: install it (docs/install.md)",
			is:   meta.IsNoMatchError,
		},
		"no ManifestWork CRD": {
			funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return noOCM }},
			want:  "the hub has no ManifestWork CRD: install Open Cluster Management's hub (cluster-manager) first (docs/install.md)",
			is:    meta.IsNoMatchError,
		},
		"no access to ManifestWorks": {
			funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return forbidden
			}},
			want: `forbidden: manifestworks.work.open-cluster-management.io is forbidden: User "bob" cannot list resource "manifestworks" in API group "work.open-cluster-management.io" at the cluster scope`,
			is:   apierrors.IsForbidden,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hub := interceptor.NewClient(previewHub(decidedPlacement("a")...), tc.funcs)
			_, err := Preview(context.Background(), hub, previewPMW("1"), PreviewOptions{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("want error %q, got %v", tc.want, err)
			}
			if !tc.is(err) {
				t.Errorf("the API server's error is not kept: %#v", err)
			}
		})
	}
}
