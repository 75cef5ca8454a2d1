package override

import (
	"encoding/json"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

const (
	webID  = "Deployment.apps default/web"
	webKey = "Deployment.apps default/web .spec.replicas"
)

// web is a Deployment with an init container and two containers.
const web = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{
"initContainers":[{"name":"init","image":"busybox:1.36"}],
"containers":[{"name":"web","image":"registry.example.com/team/web:1.2","env":[{"name":"A","value":"a"}]},
{"name":"sidecar","image":"envoyproxy/envoy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]}}}}`

// rollout is an Argo Rollout: a custom kind that keeps its pod template where a Deployment does.
const rollout = `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"web","namespace":"default"},
"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"web:1"}]}}}}`

// nightly is a custom kind that keeps its pod template where a CronJob does.
const nightly = `{"apiVersion":"example.com/v1","kind":"NightlyReport","metadata":{"name":"report","namespace":"default"},
"spec":{"schedule":"0 3 * * *","jobTemplate":{"spec":{"template":{"spec":{"initContainers":[{"name":"init","image":"busybox:1.36"}],
"containers":[{"name":"report","image":"report:1"}],"restartPolicy":"Never"}}}}}}`

// ray is a RayCluster: its pod templates sit under its head and worker groups, where the image short form
// does not look.
const ray = `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"ray","namespace":"default"},
"spec":{"headGroupSpec":{"template":{"spec":{"containers":[{"name":"head","image":"rayproject/ray:2.9"}]}}},
"workerGroupSpecs":[{"groupName":"w","template":{"spec":{"containers":[{"name":"worker","image":"rayproject/ray:2.9"}]}}}]}}`

// cfg is a ConfigMap.
const cfg = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"k":"v"}}`

// manifests decodes manifests as the planner does; their indexes are their positions.
func manifests(t testing.TB, docs ...string) []template.Manifest {
	t.Helper()
	raw := make([]workv1.Manifest, len(docs))
	for i, d := range docs {
		raw[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(d)}}
	}
	ms, err := template.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func manifest(t testing.TB, doc string) template.Manifest { return manifests(t, doc)[0] }

// jsonValue is a literal patch value.
func jsonValue(s string) *workv1alpha1.JSON { return &workv1alpha1.JSON{Raw: []byte(s)} }

// add, replace and remove are patches with a literal value.
func add(path, value string) workv1alpha1.OverridePatch {
	return workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchAdd, Path: path, Value: jsonValue(value)}
}

func replace(path, value string) workv1alpha1.OverridePatch {
	return workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchReplace, Path: path, Value: jsonValue(value)}
}

func remove(path string) workv1alpha1.OverridePatch {
	return workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchRemove, Path: path}
}

// computed is a patch whose value an expression computes.
func computed(op workv1alpha1.OverridePatchOp, path, expr string) workv1alpha1.OverridePatch {
	return workv1alpha1.OverridePatch{Op: op, Path: path, Expression: expr}
}

// overrideWith is an override named name for every cluster and manifest.
func overrideWith(name string, patches ...workv1alpha1.OverridePatch) workv1alpha1.ClusterOverride {
	return workv1alpha1.ClusterOverride{Name: name, Patches: patches}
}

func byLabels(o workv1alpha1.ClusterOverride, matchLabels map[string]string) workv1alpha1.ClusterOverride {
	o.Clusters = &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}
	return o
}

func literal(v string) *workv1alpha1.OverrideValue { return &workv1alpha1.OverrideValue{Value: v} }
func expression(e string) *workv1alpha1.OverrideValue {
	return &workv1alpha1.OverrideValue{Expression: e}
}

func mustCompile(t testing.TB, overrides ...workv1alpha1.ClusterOverride) *Set {
	t.Helper()
	s, err := Compile(overrides)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// field reads a field of a result by JSON encoding it, for comparisons that do not care about int64 or float64.
func field(t testing.TB, obj map[string]any, keys ...string) string {
	t.Helper()
	var v any = obj
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return "<absent>"
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return "<absent>"
			}
			v = x[i]
		default:
			return "<not an object or list>"
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var eu = Cluster{Name: "eu-1", Labels: map[string]string{"region": "eu", "size": "large"},
	Claims: map[string]string{"platform.open-cluster-management.io": "AWS"}, Shares: map[string]int32{webKey: 3}}

// The tests' shorthands over a Set; the manager resolves once per cluster (Resolve) instead.

// Key is Resolve(c).Key().
func (s *Set) Key(c Cluster) string { return s.Resolve(c).Key() }

// Apply is Resolve(c).Apply(m, splitFields).
func (s *Set) Apply(m template.Manifest, c Cluster, splitFields []string) (*unstructured.Unstructured, []Outcome, error) {
	return s.Resolve(c).Apply(m, splitFields)
}

// Name is the name of the override at index i.
func (s *Set) Name(i int) string { return s.overrides[i].name }

// Selects returns the indexes, in list order, of the overrides that apply to the cluster.
func (s *Set) Selects(c Cluster) []int {
	var out []int
	for _, o := range s.overrides {
		if o.selectsCluster(c) {
			out = append(out, o.index)
		}
	}
	return out
}
