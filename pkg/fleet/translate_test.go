package fleet

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// obj builds an object of the fleet API server: apiVersion, kind, name, in namespace "shop", with the fields
// given as dotted paths ("spec.replicas": 6, "metadata.annotations": map[string]any{...}).
func obj(apiVersion, kind, name string, fields ...any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "shop"},
	}}
	for i := 0; i < len(fields); i += 2 {
		v := fields[i+1]
		if n, ok := v.(int); ok {
			v = int64(n)
		}
		if err := unstructured.SetNestedField(o.Object, v, strings.Split(fields[i].(string), ".")...); err != nil {
			panic(err)
		}
	}
	return o
}

func deployment(name string, fields ...any) *unstructured.Unstructured {
	return obj("apps/v1", "Deployment", name, fields...)
}

func annotated(o *unstructured.Unstructured, kv ...string) *unstructured.Unstructured {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		a[kv[i]] = kv[i+1]
	}
	o.SetAnnotations(a)
	return o
}

func owned(o *unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	o.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
		"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": "1234", "controller": true,
	}}
	return o
}

func split(kind, group, name string) workv1alpha1.DistributionStrategy {
	return workv1alpha1.DistributionStrategy{Name: name, Namespace: "shop", Group: group, Kind: kind,
		Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}
}

// decoded is the translation's manifests as maps, for readable diffs.
func decoded(t *testing.T, ms []workv1.Manifest) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range ms {
		var o map[string]any
		if err := json.Unmarshal(m.Raw, &o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// widgetKind is a user's ResourceInterpreter of example.io Widgets, whose replicas are .spec.size.
type widgetKind struct{}

func (widgetKind) Name() string                                       { return "ResourceInterpreter widgets" }
func (widgetKind) ReplicaPaths() []string                             { return []string{".spec.size"} }
func (widgetKind) FeedbackPaths(template.Manifest) []workv1.JsonPath  { return nil }
func (widgetKind) Aggregation() []workv1alpha1.InterpreterAggregation { return nil }
func (widgetKind) Retain() []string                                   { return nil }
func (widgetKind) Health(health.ManifestInput, health.Feedback) (health.Verdict, bool) {
	return health.Verdict{}, false
}

func TestTranslate(t *testing.T) {
	widgets := health.NewInterpreters()
	widgets.Add(schema.GroupKind{Group: "example.io", Kind: "Widget"}, nil, widgetKind{})
	cases := map[string]struct {
		objects         []*unstructured.Unstructured
		opts            Options
		wantManifests   []map[string]any
		wantStrategies  []workv1alpha1.DistributionStrategy
		wantUnsupported []Unsupported
		wantGeneration  map[Key]int64
	}{
		"a Deployment is split over its replicas and cleaned of what the fleet API server set": {
			objects: []*unstructured.Unstructured{annotated(deployment("web",
				"metadata.uid", "u-1", "metadata.resourceVersion", "42", "metadata.generation", 3,
				"metadata.creationTimestamp", "2024-01-01T00:00:00Z", "metadata.selfLink", "/apis/apps/v1/x",
				"metadata.managedFields", []any{map[string]any{"manager": "kubectl"}},
				"metadata.deletionTimestamp", "2024-01-02T00:00:00Z", "metadata.deletionGracePeriodSeconds", 30,
				"metadata.finalizers", []any{"fleet.open-cluster-management.io/cleanup"},
				"metadata.labels", map[string]any{"app": "web"},
				"spec.replicas", 6, "status.replicas", 6),
				annotationLastApplied, `{"kind":"Deployment"}`, workv1alpha1.AnnotationFleetDistribution, "Split", "team", "shop")},
			wantManifests: []map[string]any{{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"},
					"annotations": map[string]any{"team": "shop", workv1alpha1.AnnotationFleetGeneration: "3"}},
				"spec": map[string]any{"replicas": float64(6)},
			}},
			wantStrategies: []workv1alpha1.DistributionStrategy{split("Deployment", "apps", "web")},
			wantGeneration: map[Key]int64{{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}: 3},
		},
		"StatefulSets and ReplicaSets are split, other kinds replicated; unset replicas are 1": {
			objects: []*unstructured.Unstructured{
				obj("apps/v1", "StatefulSet", "db"),
				obj("apps/v1", "ReplicaSet", "rs", "spec.replicas", 2),
				obj("apps/v1", "DaemonSet", "agent"),
				obj("v1", "ConfigMap", "conf"),
			},
			wantManifests: []map[string]any{
				{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "conf", "namespace": "shop"}},
				{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": "agent", "namespace": "shop"}},
				{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": map[string]any{"name": "rs", "namespace": "shop"},
					"spec": map[string]any{"replicas": float64(2)}},
				{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db", "namespace": "shop"},
					"spec": map[string]any{"replicas": float64(1)}},
			},
			wantStrategies: []workv1alpha1.DistributionStrategy{split("ReplicaSet", "apps", "rs"), split("StatefulSet", "apps", "db")},
			wantGeneration: map[Key]int64{
				{Kind: "ConfigMap", Namespace: "shop", Name: "conf"}:                 0,
				{Group: "apps", Kind: "DaemonSet", Namespace: "shop", Name: "agent"}: 0,
				{Group: "apps", Kind: "ReplicaSet", Namespace: "shop", Name: "rs"}:   0,
				{Group: "apps", Kind: "StatefulSet", Namespace: "shop", Name: "db"}:  0,
			},
		},
		"the annotation replicates a Deployment and splits a Job and a kind an interpreter knows": {
			objects: []*unstructured.Unstructured{
				annotated(deployment("web", "spec.replicas", 2), workv1alpha1.AnnotationFleetDistribution, "Replicate"),
				annotated(obj("batch/v1", "Job", "migrate", "spec.parallelism", 4), workv1alpha1.AnnotationFleetDistribution, "Split"),
				annotated(obj("example.io/v1", "Widget", "w", "spec.size", 3), workv1alpha1.AnnotationFleetDistribution, "Split"),
			},
			opts: Options{Interpreters: widgets},
			wantManifests: []map[string]any{
				{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"},
					"spec": map[string]any{"replicas": float64(2)}},
				{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "migrate", "namespace": "shop"},
					"spec": map[string]any{"parallelism": float64(4)}},
				{"apiVersion": "example.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "shop"},
					"spec": map[string]any{"size": float64(3)}},
			},
			wantStrategies: []workv1alpha1.DistributionStrategy{split("Job", "batch", "migrate"), split("Widget", "example.io", "w")},
			wantGeneration: map[Key]int64{
				{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}: 0,
				{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate"}:   0,
				{Group: "example.io", Kind: "Widget", Namespace: "shop", Name: "w"}: 0,
			},
		},
		"Split of an object without a replica field, or a value that is no distribution, is reported for that object only": {
			objects: []*unstructured.Unstructured{
				annotated(obj("v1", "ConfigMap", "conf"), workv1alpha1.AnnotationFleetDistribution, "Split"),
				annotated(obj("apps/v1", "DaemonSet", "agent"), workv1alpha1.AnnotationFleetDistribution, "Split"),
				annotated(obj("example.io/v1", "Widget", "w", "spec.replicas", 3), workv1alpha1.AnnotationFleetDistribution, "Split"), // its interpreter says .spec.size
				annotated(deployment("web"), workv1alpha1.AnnotationFleetDistribution, "split"),
				obj("v1", "Service", "web"),
			},
			opts: Options{Interpreters: widgets},
			wantManifests: []map[string]any{
				{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "shop"}},
			},
			wantUnsupported: []Unsupported{
				{Key: Key{Kind: "ConfigMap", Namespace: "shop", Name: "conf"}, Reason: ReasonInvalidDistribution,
					Message: "fleet.open-cluster-management.io/distribution is Split, but a ConfigMap has no replica field to divide (.spec.replicas is not set); set the field to the total, or annotate it Replicate"},
				{Key: Key{Group: "apps", Kind: "DaemonSet", Namespace: "shop", Name: "agent"}, Reason: ReasonInvalidDistribution,
					Message: "fleet.open-cluster-management.io/distribution is Split, but a DaemonSet has no replica field to divide (.spec.replicas is not set); set the field to the total, or annotate it Replicate"},
				{Key: Key{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, Reason: ReasonInvalidDistribution,
					Message: `fleet.open-cluster-management.io/distribution is "split": use Replicate or Split`},
				{Key: Key{Group: "example.io", Kind: "Widget", Namespace: "shop", Name: "w"}, Reason: ReasonInvalidDistribution,
					Message: "fleet.open-cluster-management.io/distribution is Split, but a Widget has no replica field to divide (.spec.size is not set); set the field to the total, or annotate it Replicate"},
			},
			wantGeneration: map[Key]int64{{Kind: "Service", Namespace: "shop", Name: "web"}: 0},
		},
		"kinds that cannot work unchanged on the clusters are left out with a reason": {
			objects: []*unstructured.Unstructured{
				obj("v1", "Pod", "debug"),
				obj("v1", "Event", "web.17a"),
				obj("events.k8s.io/v1", "Event", "web.17b"),
				obj("coordination.k8s.io/v1", "Lease", "leader"),
				obj("v1", "Endpoints", "web"),
				obj("discovery.k8s.io/v1", "EndpointSlice", "web-abc"),
				obj("apps/v1", "ControllerRevision", "db-1"),
				obj("v1", "Secret", "token", "type", "kubernetes.io/service-account-token"),
				obj("v1", "Secret", "creds", "type", "Opaque"),
				obj("v1", "PersistentVolume", "pv-1", "metadata.namespace", ""),
				obj("storage.k8s.io/v1", "StorageClass", "fast", "metadata.namespace", ""),
				obj("v1", "ConfigMap", "elsewhere", "metadata.namespace", "other"),
			},
			wantManifests: []map[string]any{
				{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds", "namespace": "shop"}, "type": "Opaque"},
			},
			wantUnsupported: []Unsupported{
				{Key: Key{Kind: "Secret", Namespace: "shop", Name: "token"}, Reason: ReasonUnsupportedKind, Message: tokenReason},
				{Key: Key{Kind: "ConfigMap", Namespace: "other", Name: "elsewhere"}, Reason: ReasonOtherNamespace, Message: `of namespace "other", not "shop"`},
				{Key: Key{Group: "storage.k8s.io", Kind: "StorageClass", Name: "fast"}, Reason: ReasonClusterScoped,
					Message: "StorageClass is cluster-scoped: a namespace cannot own it; install it on the clusters with a PlacementManifestWork of its own"},
				{Key: Key{Kind: "PersistentVolume", Name: "pv-1"}, Reason: ReasonClusterScoped,
					Message: "PersistentVolume is cluster-scoped: a namespace cannot own it; install it on the clusters with a PlacementManifestWork of its own"},
				{Key: Key{Kind: "Pod", Namespace: "shop", Name: "debug"}, Reason: ReasonUnsupportedKind, Message: unsupportedKinds[schema.GroupKind{Kind: "Pod"}]},
				{Key: Key{Group: "apps", Kind: "ControllerRevision", Namespace: "shop", Name: "db-1"}, Reason: ReasonUnsupportedKind,
					Message: unsupportedKinds[schema.GroupKind{Group: "apps", Kind: "ControllerRevision"}]},
				{Key: Key{Group: "discovery.k8s.io", Kind: "EndpointSlice", Namespace: "shop", Name: "web-abc"}, Reason: ReasonUnsupportedKind, Message: endpointsReason},
				{Key: Key{Kind: "Endpoints", Namespace: "shop", Name: "web"}, Reason: ReasonUnsupportedKind, Message: endpointsReason},
				{Key: Key{Kind: "Event", Namespace: "shop", Name: "web.17a"}, Reason: ReasonUnsupportedKind, Message: eventReason},
				{Key: Key{Group: "events.k8s.io", Kind: "Event", Namespace: "shop", Name: "web.17b"}, Reason: ReasonUnsupportedKind, Message: eventReason},
				{Key: Key{Group: "coordination.k8s.io", Kind: "Lease", Namespace: "shop", Name: "leader"}, Reason: ReasonUnsupportedKind,
					Message: unsupportedKinds[schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}]},
			},
			wantGeneration: map[Key]int64{{Kind: "Secret", Namespace: "shop", Name: "creds"}: 0},
		},
		"objects with ownerReferences are skipped: only the roots are delivered": {
			objects: []*unstructured.Unstructured{
				deployment("web", "spec.replicas", 2),
				owned(obj("apps/v1", "ReplicaSet", "web-5d8f", "spec.replicas", 2), "Deployment", "web"),
				owned(obj("v1", "Pod", "web-5d8f-x1"), "ReplicaSet", "web-5d8f"),
				owned(obj("v1", "ConfigMap", "web-cache"), "Deployment", "web"),
			},
			wantManifests: []map[string]any{
				{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"},
					"spec": map[string]any{"replicas": float64(2)}},
			},
			wantStrategies: []workv1alpha1.DistributionStrategy{split("Deployment", "apps", "web")},
			wantUnsupported: []Unsupported{
				{Key: Key{Kind: "ConfigMap", Namespace: "shop", Name: "web-cache"}, Reason: ReasonOwned,
					Message: "owned by Deployment web: made on the fleet API server by a controller; only its owner is delivered, and the clusters' controllers make their own"},
				{Key: Key{Kind: "Pod", Namespace: "shop", Name: "web-5d8f-x1"}, Reason: ReasonOwned,
					Message: "owned by ReplicaSet web-5d8f: made on the fleet API server by a controller; only its owner is delivered, and the clusters' controllers make their own"},
				{Key: Key{Group: "apps", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d8f"}, Reason: ReasonOwned,
					Message: "owned by Deployment web: made on the fleet API server by a controller; only its owner is delivered, and the clusters' controllers make their own"},
			},
			wantGeneration: map[Key]int64{{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}: 0},
		},
		"a Service loses the addresses and ports the fleet API server allocated; a headless one stays headless": {
			objects: []*unstructured.Unstructured{
				obj("v1", "Service", "web", "spec.type", "LoadBalancer", "spec.clusterIP", "10.0.0.12", "spec.clusterIPs", []any{"10.0.0.12"},
					"spec.healthCheckNodePort", 31000, "spec.externalTrafficPolicy", "Local",
					"spec.ports", []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}),
				obj("v1", "Service", "db", "spec.clusterIP", "None", "spec.clusterIPs", []any{"None"}),
			},
			wantManifests: []map[string]any{
				{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "db", "namespace": "shop"},
					"spec": map[string]any{"clusterIP": "None", "clusterIPs": []any{"None"}}},
				{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "shop"},
					"spec": map[string]any{"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": []any{map[string]any{"port": float64(80)}}}},
			},
			wantGeneration: map[Key]int64{{Kind: "Service", Namespace: "shop", Name: "db"}: 0, {Kind: "Service", Namespace: "shop", Name: "web"}: 0},
		},
		"a Job loses the selector its API server generated; a manual one stays": {
			objects: []*unstructured.Unstructured{
				obj("batch/v1", "Job", "migrate",
					"spec.selector", map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "u-1"}},
					"spec.template.metadata.labels", map[string]any{"batch.kubernetes.io/controller-uid": "u-1", "controller-uid": "u-1",
						"batch.kubernetes.io/job-name": "migrate", "job-name": "migrate", "app": "migrate"}),
				obj("batch/v1", "Job", "manual", "spec.manualSelector", true,
					"spec.selector", map[string]any{"matchLabels": map[string]any{"run": "manual"}},
					"spec.template.metadata.labels", map[string]any{"run": "manual"}),
			},
			wantManifests: []map[string]any{
				{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "manual", "namespace": "shop"},
					"spec": map[string]any{"manualSelector": true, "selector": map[string]any{"matchLabels": map[string]any{"run": "manual"}},
						"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"run": "manual"}}}}},
				{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "migrate", "namespace": "shop"},
					"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "migrate"}}}}},
			},
			wantGeneration: map[Key]int64{
				{Group: "batch", Kind: "Job", Namespace: "shop", Name: "manual"}:  0,
				{Group: "batch", Kind: "Job", Namespace: "shop", Name: "migrate"}: 0,
			},
		},
		"objects without a namespace get it; IncludeNamespace adds the Namespace first and orphans it": {
			objects: []*unstructured.Unstructured{obj("v1", "ConfigMap", "conf", "metadata.namespace", "")},
			opts:    Options{IncludeNamespace: true},
			wantManifests: []map[string]any{
				{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop", "labels": map[string]any{workv1alpha1.LabelFleetGenerated: "true"}}},
				{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "conf", "namespace": "shop"}},
			},
			wantGeneration: map[Key]int64{{Kind: "ConfigMap", Namespace: "shop", Name: "conf"}: 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := make([]*unstructured.Unstructured, len(tc.objects))
			for i, o := range tc.objects {
				before[i] = o.DeepCopy()
			}
			got, err := Translate("shop", tc.objects, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantManifests, decoded(t, got.Template.Workload.Manifests)); diff != "" {
				t.Errorf("manifests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStrategies, got.DistributionStrategy); diff != "" {
				t.Errorf("distributionStrategy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnsupported, got.Unsupported); diff != "" {
				t.Errorf("unsupported (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGeneration, got.Generation); diff != "" {
				t.Errorf("generation (-want +got):\n%s", diff)
			}
			if tc.opts.IncludeNamespace != (got.Template.DeleteOption != nil) {
				t.Errorf("deleteOption = %+v", got.Template.DeleteOption)
			}
			if diff := cmp.Diff(before, tc.objects); diff != "" {
				t.Errorf("the input was modified (-before +after):\n%s", diff)
			}
		})
	}
}

// TestTranslateShuffled: the same objects in any order give the same translation, byte for byte.
func TestTranslateShuffled(t *testing.T) {
	objects := []*unstructured.Unstructured{
		deployment("web", "spec.replicas", 6), deployment("api", "spec.replicas", 3),
		obj("apps/v1", "StatefulSet", "db", "spec.replicas", 3), obj("v1", "Service", "web"), obj("v1", "Service", "api"),
		obj("v1", "ConfigMap", "conf"), obj("v1", "Secret", "creds"), obj("v1", "ServiceAccount", "web"),
		obj("networking.k8s.io/v1", "Ingress", "web"), obj("example.io/v1", "Widget", "w"),
		obj("autoscaling/v2", "HorizontalPodAutoscaler", "web"), obj("policy/v1", "PodDisruptionBudget", "web"),
		obj("v1", "Pod", "debug"), owned(obj("apps/v1", "ReplicaSet", "web-1"), "Deployment", "web"),
		annotated(obj("v1", "ConfigMap", "bad"), workv1alpha1.AnnotationFleetDistribution, "Split"),
	}
	want, err := Translate("shop", objects, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range decoded(t, want.Template.Workload.Manifests) {
		kinds = append(kinds, fmt.Sprintf("%s/%s", m["kind"], m["metadata"].(map[string]any)["name"]))
	}
	wantOrder := []string{"PodDisruptionBudget/web", "ServiceAccount/web", "Secret/creds", "ConfigMap/conf", "Service/api",
		"Service/web", "Deployment/api", "Deployment/web", "HorizontalPodAutoscaler/web", "StatefulSet/db", "Ingress/web",
		"Widget/w"}
	if diff := cmp.Diff(wantOrder, kinds); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		shuffled := append([]*unstructured.Unstructured(nil), objects...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got, err := Translate("shop", shuffled, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("shuffle %d (-want +got):\n%s", i, diff)
		}
	}
}

// The generation Translate stamps on each manifest is what CarriedGenerations reads back from a work's manifests.
func TestCarriedGenerations(t *testing.T) {
	objs := []*unstructured.Unstructured{
		deployment("web", "metadata.generation", 7, "spec.replicas", 2),
		obj("batch/v1", "Job", "once", "metadata.generation", 1),
		obj("v1", "ConfigMap", "conf"), // no generation: nothing stamped, nothing read
	}
	tr, err := Translate("shop", objs, Options{IncludeNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	got := CarriedGenerations("shop", tr.Template.Workload.Manifests)
	want := map[Key]int64{
		{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}: 7,
		{Group: "batch", Kind: "Job", Namespace: "shop", Name: "once"}:      1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("carried generations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tr.Generation, map[Key]int64{
		{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}: 7,
		{Group: "batch", Kind: "Job", Namespace: "shop", Name: "once"}:      1,
		{Kind: "ConfigMap", Namespace: "shop", Name: "conf"}:                0,
	}); diff != "" {
		t.Errorf("translation generations (-want +got):\n%s", diff)
	}
	// An unreadable manifest or annotation is skipped, not fatal.
	bad := []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte("{")}},
		{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","annotations":{"` + workv1alpha1.AnnotationFleetGeneration + `":"two"}}}`)}}}
	if got := CarriedGenerations("shop", bad); len(got) != 0 {
		t.Errorf("unreadable manifests gave %v", got)
	}
}

func TestTranslateErrors(t *testing.T) {
	many := make([]*unstructured.Unstructured, maxStrategies+1)
	for i := range many {
		many[i] = deployment(fmt.Sprintf("web-%d", i))
	}
	cases := map[string]struct {
		namespace string
		objects   []*unstructured.Unstructured
		want      string
	}{
		"no namespace":                    {namespace: "", want: `namespace ""`},
		"a namespace no API server takes": {namespace: "Shop", want: `namespace "Shop"`},
		"a nil object":                    {namespace: "shop", objects: []*unstructured.Unstructured{nil}, want: "object 1 is nil"},
		"no kind":                         {namespace: "shop", objects: []*unstructured.Unstructured{obj("v1", "", "x")}, want: "object 1 has no apiVersion or kind"},
		"no name":                         {namespace: "shop", objects: []*unstructured.Unstructured{obj("v1", "ConfigMap", "")}, want: "object 1 (ConfigMap) has no metadata.name"},
		"the same object twice": {namespace: "shop", objects: []*unstructured.Unstructured{deployment("web"), obj("apps/v1beta2", "Deployment", "web")},
			want: "Deployment.apps shop/web is in the input twice"},
		"more split objects than a PlacementManifestWork takes": {namespace: "shop", objects: many, want: "101 objects to split, more than the 100"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Translate(tc.namespace, tc.objects, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTranslationSpec(t *testing.T) {
	tr, err := Translate("shop", []*unstructured.Unstructured{deployment("web", "spec.replicas", 6)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := tr.Spec("eu")
	if spec.PlacementRef == nil || spec.PlacementRef.Name != "eu" {
		t.Errorf("placementRef = %+v", spec.PlacementRef)
	}
	if diff := cmp.Diff(tr.Template, spec.ManifestWorkTemplate); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tr.DistributionStrategy, spec.DistributionStrategy); diff != "" {
		t.Errorf("distribution (-want +got):\n%s", diff)
	}
}
