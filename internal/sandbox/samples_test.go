package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The interpreter sample through the pieces the sandbox runs: the manager's interpreter compiled from the
// sample, the work it writes for one cluster's share, the simulated agent's report of it over time, the
// interpreter's verdict on that report, and the live view's reading of it.
func TestDatabaseSample(t *testing.T) {
	declareSampleKinds()
	objs, err := InterpreterSamples()
	if err != nil {
		t.Fatal(err)
	}
	var ri workv1alpha1.ResourceInterpreter
	var pmw workv1alpha1.PlacementManifestWork
	for _, o := range objs {
		switch o.GetKind() {
		case "ResourceInterpreter":
			fromUnstructured(t, o, &ri)
		case "PlacementManifestWork":
			fromUnstructured(t, o, &pmw)
		}
	}
	if len(SamplePMWs(objs)) != 1 || ri.Name == "" {
		t.Fatalf("the sample has %d PlacementManifestWorks and interpreter %q, want one of each", len(SamplePMWs(objs)), ri.Name)
	}
	set, problems := interpreter.Resolve([]workv1alpha1.ResourceInterpreter{ri}, nil)
	if len(problems) > 0 {
		t.Fatalf("the sample's interpreter is not used: %v", problems[ri.Name])
	}

	// The work of a cluster whose share is 2, as the manager writes it.
	const share = 2
	delivered := pmw.Spec.ManifestWorkTemplate.Workload.Manifests[0]
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(delivered.Raw); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(obj.Object, int64(share), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	manifests := []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	parsed, err := template.Parse(manifests)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(&pmw, set.ManifestConfigs(parsed, nil))
	if err != nil {
		t.Fatal(err)
	}
	work, err := b.Build("cluster1", manifests, map[string]int32{parsed[0].ID() + " .spec.replicas": share})
	if err != nil {
		t.Fatal(err)
	}
	work.Generation = 1

	cases := map[string]struct {
		behavior  ocmsim.Behavior
		elapsed   time.Duration
		wantState health.State
		wantPhase string
		wantView  WorkloadView
		requeue   bool
	}{
		"provisioning before the ready delay": {
			behavior: ocmsim.Healthy, elapsed: 0, wantState: health.Progressing, wantPhase: databasePhaseProvisioning, requeue: true,
			wantView: WorkloadView{Kind: DatabaseKind, Namespace: "default", Name: "orders", Desired: share, Split: true},
		},
		"ready after it": {
			behavior: ocmsim.Healthy, elapsed: time.Minute, wantState: health.Healthy, wantPhase: databasePhaseReady,
			wantView: WorkloadView{Kind: DatabaseKind, Namespace: "default", Name: "orders", Desired: share, Ready: share, Split: true},
		},
		"failed on a never-ready cluster": {
			behavior: ocmsim.NeverReady, elapsed: time.Minute, wantState: health.Degraded, wantPhase: databasePhaseFailed,
			wantView: WorkloadView{Kind: DatabaseKind, Namespace: "default", Name: "orders", Desired: share, Split: true, Stuck: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := work.DeepCopy()
			sim := ocmsim.Simulate(w, ocmsim.Spoke{Behavior: tc.behavior, ReadyDelay: time.Second}, time.Time{}, time.Time{}.Add(tc.elapsed))
			w.Status = sim.Status
			if got := sim.RequeueAfter > 0; got != tc.requeue {
				t.Errorf("requeue after %s, want a requeue: %v", sim.RequeueAfter, tc.requeue)
			}
			reported := w.Status.ResourceStatus.Manifests[0]
			if phase := health.FeedbackOf(reported.StatusFeedbacks.Values)["phase"]; phase.String == nil || *phase.String != tc.wantPhase {
				t.Errorf("reported phase %v, want %s (feedback %+v)", phase, tc.wantPhase, reported.StatusFeedbacks.Values)
			}
			in := set.Inputs(parsed, nil)[0]
			in.Status = &reported
			if v := health.Manifest(in); v.State != tc.wantState {
				t.Errorf("verdict %+v, want %s", v, tc.wantState)
			}
			view := workView(w)
			if diff := cmp.Diff([]WorkloadView{tc.wantView}, view.Workloads); diff != "" {
				t.Errorf("live view's workloads (-want +got):\n%s", diff)
			}
		})
	}
}

// The overrides sample through the manager's override engine: every sandbox cluster gets the registry of its
// region, the live view names the image in the sample's column, and a cluster without a region label keeps
// the template's image.
func TestRegionalSample(t *testing.T) {
	objs, err := OverrideSamples()
	if err != nil {
		t.Fatal(err)
	}
	var pmw workv1alpha1.PlacementManifestWork
	for _, o := range objs {
		if o.GetKind() == "PlacementManifestWork" {
			fromUnstructured(t, o, &pmw)
		}
	}
	if pmw.Name != "regional" || len(pmw.Spec.Overrides) != 1 {
		t.Fatalf("the sample has PlacementManifestWork %q with %d overrides, want regional with one", pmw.Name, len(pmw.Spec.Overrides))
	}
	set, err := override.Compile(pmw.Spec.Overrides)
	if err != nil {
		t.Fatalf("the sample's overrides do not compile: %v", err)
	}
	parsed, err := template.Parse(pmw.Spec.ManifestWorkTemplate.Workload.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(&pmw, health.ManifestConfigs(parsed, nil))
	if err != nil {
		t.Fatal(err)
	}

	names := append(ClusterNames(4), "unlabelled")
	want := map[string]string{
		"cluster1":   "registry-us-east.example.com/nginx:1.25",
		"cluster2":   "registry-eu-west.example.com/nginx:1.25",
		"cluster3":   "registry-ap-south.example.com/nginx:1.25",
		"cluster4":   "registry-us-east.example.com/nginx:1.25",
		"unlabelled": "nginx:1.25",
	}
	var clusters []clusterv1.ManagedCluster
	var works []workv1.ManifestWork
	for i, name := range names {
		mc := ManagedCluster(name, i)
		if name == "unlabelled" {
			mc = ocmsim.ManagedCluster(name, ClusterSetName, nil)
		}
		clusters = append(clusters, *mc)
		rendered, _, err := override.Render(set, parsed, override.Cluster{Name: name, Labels: mc.Labels}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var manifests []workv1.Manifest
		for _, m := range rendered {
			raw, err := json.Marshal(m.Object.Object)
			if err != nil {
				t.Fatal(err)
			}
			manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		}
		w, err := b.Build(name, manifests, nil)
		if err != nil {
			t.Fatal(err)
		}
		works = append(works, *w)
	}
	s := BuildSnapshot(clusters, works, []workv1alpha1.PlacementManifestWork{pmw}, nil, nil)
	view := Render(s)
	for _, c := range s.Clusters {
		w, ok := c.workOf("default/regional")
		if !ok || len(w.Workloads) != 1 {
			t.Fatalf("%s: work %+v, want one with the Deployment", c.Name, w)
		}
		if diff := cmp.Diff([]string{want[c.Name]}, w.Workloads[0].Images); diff != "" {
			t.Errorf("images on %s (-want +got):\n%s", c.Name, diff)
		}
		if !strings.Contains(view, "pending "+want[c.Name]+"\n") {
			t.Errorf("the live view does not show %s for %s:\n%s", want[c.Name], c.Name, view)
		}
	}
}

func fromUnstructured(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatal(err)
	}
}
