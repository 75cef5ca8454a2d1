package sandbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var web = types.NamespacedName{Namespace: "default", Name: "web"}

// hubState is a tiny hub: clusters, the web PlacementManifestWork's works with a split Deployment, and its
// status, as the manager and the simulated agent would leave them.
func hubState(t *testing.T, shares map[string]int64, behaviors map[string]Behavior, elapsed time.Duration) ([]clusterv1.ManagedCluster, []workv1.ManifestWork, []workv1alpha1.PlacementManifestWork) {
	t.Helper()
	pmw := framework.MakePMW(web.Name, web.Namespace).Obj()
	pmw.Generation, pmw.Status.ObservedGeneration = 1, 1
	var total int64
	var clusters []clusterv1.ManagedCluster
	var works []workv1.ManifestWork
	for i, name := range ClusterNames(len(shares)) {
		clusters = append(clusters, *ManagedCluster(name, i))
		w := managerWork(t, pmw, name, shares[name])
		w.Status = ocmsim.Simulate(w, spoke(behaviors[name], time.Second), time.Time{}, time.Time{}.Add(elapsed)).Status
		works = append(works, *w)
		total += shares[name]
	}
	pmw.Status.PlacedManifestWorkSummary = workv1alpha1.PlacedManifestWorkSummary{
		Total: int32(len(shares)), Applied: int32(len(shares)), Available: int32(len(shares)),
	}
	pmw.Status.Splits = []workv1alpha1.SplitStatus{{Name: "web", Namespace: "default", Kind: "Deployment", FieldPath: ".spec.replicas", Total: int32(total), Placed: int32(total)}}
	return clusters, works, []workv1alpha1.PlacementManifestWork{*pmw}
}

// managerWork is the work the manager writes for pmw on a cluster whose share of the web Deployment is share,
// with the manifestConfigs that ask the agent for the feedback the manager reads.
func managerWork(t *testing.T, pmw *workv1alpha1.PlacementManifestWork, cluster string, share int64) *workv1.ManifestWork {
	t.Helper()
	var manifests []workv1.Manifest
	for _, m := range []map[string]any{framework.ConfigMap("web-config", "default", nil), framework.Deployment("web", "default", int(share))} {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	parsed, err := template.Parse(manifests)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(pmw, health.ManifestConfigs(parsed, nil))
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Build(cluster, manifests, map[string]int32{"Deployment.apps default/web .spec.replicas": int32(share)})
	if err != nil {
		t.Fatal(err)
	}
	w.Generation = 1
	return w
}

func TestBuildSnapshot(t *testing.T) {
	shares := map[string]int64{"cluster1": 2, "cluster2": 1}
	behaviors := map[string]Behavior{"cluster1": BehaviorHealthy, "cluster2": BehaviorNeverReady}
	clusters, works, pmws := hubState(t, shares, behaviors, time.Minute)
	s := BuildSnapshot(clusters, works, pmws, behaviors, []types.NamespacedName{web})

	var got []WorkView
	for _, c := range s.Clusters {
		for _, w := range c.Works {
			w.Shares = nil // checked through Split
			got = append(got, w)
		}
	}
	name := manifestwork.WorkName(web)
	want := []WorkView{
		{Name: name, Owner: "default/web", Generation: 1, Applied: "True", Available: "True",
			Workloads: []WorkloadView{{Kind: "Deployment", Namespace: "default", Name: "web", Desired: 2, Ready: 2, Split: true, Images: []string{"registry.example/app:1"}}}},
		{Name: name, Owner: "default/web", Generation: 1, Applied: "True", Available: "True",
			Workloads: []WorkloadView{{Kind: "Deployment", Namespace: "default", Name: "web", Desired: 1, Ready: 0, Split: true, Stuck: true, Images: []string{"registry.example/app:1"}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("works (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"region": "us-east", "environment": "production"}, s.Clusters[0].Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !s.PMWs[0].Sample {
		t.Errorf("default/web is not marked as a sample")
	}
}

func TestSettled(t *testing.T) {
	healthy := map[string]Behavior{"cluster1": BehaviorHealthy, "cluster2": BehaviorHealthy}
	cases := map[string]struct {
		behaviors map[string]Behavior
		elapsed   time.Duration
		edit      func(*Snapshot)
		clusters  int
		want      []string
	}{
		"all ready": {behaviors: healthy, elapsed: time.Minute, clusters: 2},
		"pods not ready yet": {
			behaviors: healthy, clusters: 2,
			want: []string{"default/web: workloads on cluster1 are not ready", "default/web: workloads on cluster2 are not ready"},
		},
		"fewer clusters than the sandbox has": {
			behaviors: healthy, elapsed: time.Minute, clusters: 3,
			want: []string{"default/web: 2 clusters of 3, 2 applied, 2 available, 0 progressing, 0 degraded"},
		},
		"split not placed in full": {
			behaviors: healthy, elapsed: time.Minute, clusters: 2,
			edit: func(s *Snapshot) { s.PMWs[0].Splits[0].Placed-- },
			want: []string{"default/web: split web places 2 of 3"},
		},
		"status of an older generation": {
			behaviors: healthy, elapsed: time.Minute, clusters: 2,
			edit: func(s *Snapshot) { s.PMWs[0].Generation = 2 },
			want: []string{"default/web: status is for generation 1, spec is at 2"},
		},
		"sample missing": {
			behaviors: healthy, elapsed: time.Minute, clusters: 2,
			edit: func(s *Snapshot) { s.PMWs = nil },
			want: []string{"default/web does not exist"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clusters, works, pmws := hubState(t, map[string]int64{"cluster1": 2, "cluster2": 1}, tc.behaviors, tc.elapsed)
			s := BuildSnapshot(clusters, works, pmws, tc.behaviors, []types.NamespacedName{web})
			if tc.edit != nil {
				tc.edit(&s)
			}
			ok, why := Settled(s, []types.NamespacedName{web}, tc.clusters)
			if diff := cmp.Diff(tc.want, why); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if ok != (len(tc.want) == 0) {
				t.Errorf("settled = %v with reasons %v", ok, why)
			}
		})
	}
}

func TestRender(t *testing.T) {
	behaviors := map[string]Behavior{"cluster1": BehaviorHealthy, "cluster2": BehaviorFailApply}
	clusters, works, pmws := hubState(t, map[string]int64{"cluster1": 2, "cluster2": 1}, behaviors, time.Minute)
	pmws[0].Status.Placement = "web"
	pmws[0].Status.Conditions = []metav1.Condition{
		{Type: workv1alpha1.ConditionDistributed, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonDistributed},
		{Type: workv1alpha1.ConditionManifestworkApplied, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonApplyFailed,
			Message: "1 of 2 clusters report Applied=False: cluster2"},
	}
	pmws[0].Status.Splits[0].Shares = []workv1alpha1.ShareCount{{Share: 2, Clusters: 1}, {Share: 1, Clusters: 1}}
	pmws[0].Status.Manifests = []workv1alpha1.ManifestSummary{
		{Name: "web-config", Namespace: "default", Kind: "ConfigMap", Healthy: 1, Degraded: 1},
		{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", Healthy: 1, Degraded: 1,
			Feedback: []workv1alpha1.FeedbackSum{{Name: "readyReplicas", Value: 2, Clusters: 1}, {Name: "replicas", Value: 2, Clusters: 1}}},
	}
	pmws[0].Status.UnhealthyClusters = []workv1alpha1.ClusterHealth{{Cluster: "cluster2", State: "Degraded", Reason: "ApplyFailed", Message: "not applied"}}
	got := Render(BuildSnapshot(clusters, works, pmws, behaviors, []types.NamespacedName{web}))
	want := `CLUSTERS (2)
  CLUSTER   LABELS                                 AGENT       web
  cluster1  region=us-east,environment=production  healthy     ready 2/2 split web=2
  cluster2  region=eu-west,environment=staging     fail-apply  apply-failed split web=1

PLACEMENTMANIFESTWORKS (1)
  default/web  placement=web  total=2 applied=2 available=2 progressing=0 degraded=0
    conditions: ManifestworkApplied=False Distributed=True
    ManifestworkApplied=False ApplyFailed: 1 of 2 clusters report Applied=False: cluster2
    split Deployment default/web .spec.replicas: total=3 placed=3 unplaced=0 shares=2x1,1x1
    manifest Deployment default/web: healthy=1 progressing=0 degraded=1 readyReplicas=2 replicas=2
    unhealthy cluster2: Degraded ApplyFailed: not applied
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

func TestRenderInterpreterSample(t *testing.T) {
	six := int64(6)
	s := Snapshot{
		PMWs: []PMWView{{
			NamespacedName: types.NamespacedName{Namespace: "default", Name: "orders"}, Sample: true,
			Generation: 1, ObservedGeneration: 1, Placement: "orders",
			Summary: workv1alpha1.PlacedManifestWorkSummary{Total: 4, Applied: 4, Available: 3, Progressing: 1},
			Manifests: []workv1alpha1.ManifestSummary{{
				Name: "orders", Namespace: "default", Group: DatabaseGroup, Kind: DatabaseKind, Healthy: 3, Progressing: 1,
				Aggregated: []workv1alpha1.AggregatedField{
					{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 4,
						Counts: []workv1alpha1.ValueCount{{Value: "Ready", Clusters: 3}, {Value: "Provisioning", Clusters: 1}}},
					{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Clusters: 3, Value: &six},
					{Name: "oldest", Operation: workv1alpha1.AggregationMin},
				},
			}},
		}},
		Interpreters: interpreterViews([]workv1alpha1.ResourceInterpreter{
			{ObjectMeta: metav1.ObjectMeta{Name: "databases.example.open-cluster-management.io", Generation: 1},
				Spec: workv1alpha1.ResourceInterpreterSpec{Target: workv1alpha1.InterpreterTarget{Group: DatabaseGroup, Kind: DatabaseKind}},
				Status: workv1alpha1.ResourceInterpreterStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionReady,
					Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonInterpreterAccepted, ObservedGeneration: 1}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "broken", Generation: 2},
				Spec: workv1alpha1.ResourceInterpreterSpec{Target: workv1alpha1.InterpreterTarget{Kind: "Widget"}},
				Status: workv1alpha1.ResourceInterpreterStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionReady,
					Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonInvalidExpression, Message: "spec.health.expression: syntax error", ObservedGeneration: 2}}}},
		}),
	}
	want := `CLUSTERS (0)
  CLUSTER  LABELS  AGENT  orders

PLACEMENTMANIFESTWORKS (1)
  default/orders  placement=orders  total=4 applied=4 available=3 progressing=1 degraded=0
    manifest Database default/orders: healthy=3 progressing=1 degraded=0
      aggregated: phase Ready on 3, Provisioning on 1, readyInstances 6 (sum), oldest - (min)

RESOURCEINTERPRETERS (2)
  broken                                        Widget                                       Ready=False InvalidExpression: spec.health.expression: syntax error
  databases.example.open-cluster-management.io  Database.example.open-cluster-management.io  Ready=True Accepted
`
	if diff := cmp.Diff(want, Render(s)); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
}

func TestSampleClusters(t *testing.T) {
	cases := map[string]struct {
		name types.NamespacedName
		n    int
		want []string
	}{
		"a sample runs on every cluster": {name: web, n: 3, want: []string{"cluster1", "cluster2", "cluster3"}},
		// 10, 70, 220, 40 and 100 ms: the two us-east clusters are the nearest.
		"the scores sample runs on the two nearest":      {name: NearestSample, n: 5, want: []string{"cluster1", "cluster4"}},
		"the scores sample with one cluster":             {name: NearestSample, n: 1, want: []string{"cluster1"}},
		"the scores sample with three: us-east, eu-west": {name: NearestSample, n: 3, want: []string{"cluster1", "cluster2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SampleClusters(tc.name, tc.n)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
