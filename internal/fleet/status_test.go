package fleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// TestReportStaleRead: a cluster whose agent reported the work's generation with what it read before applying
// it (another template's marker) does not carry the fleet object's current generation yet, and is not healthy:
// the fleet Deployment's status would otherwise say rolled out before a new pod exists.
func TestReportStaleRead(t *testing.T) {
	key := fleet.Key{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	view := func(marker string) hubView {
		return hubView{clusters: []string{"c1"}, works: map[string]*workv1.ManifestWork{"c1": deploymentWork("c1", marker, 2)},
			carried: map[string]map[fleet.Key]int64{"c1": {key: 7}}}
	}
	fresh := view("new").report("c1", key, 7)
	if !fresh.CarriesCurrent || fresh.Health.State != health.Healthy {
		t.Errorf("with the work's marker: carries current %v, health %+v; want true, Healthy", fresh.CarriesCurrent, fresh.Health)
	}
	stale := view("old").report("c1", key, 7)
	if stale.CarriesCurrent || stale.Health.Reason != health.ReasonStaleFeedback {
		t.Errorf("with another template's marker: carries current %v, health %+v; want false, %s", stale.CarriesCurrent, stale.Health, health.ReasonStaleFeedback)
	}
}

// deploymentWork is cluster's work of the fleet Deployment shop/web at template "new", applied, with the agent's
// last report of the Deployment, read at the template marker: spoke generation 4 observed, spec.replicas and
// every count at replicas.
func deploymentWork(cluster, marker string, replicas int64) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Generation: 2,
		Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: "new"}}}
	w.Status.Conditions = []metav1.Condition{
		{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2},
		{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 2},
	}
	values := []workv1.FeedbackValue{{Name: health.FeedbackPrefix + health.TemplateHash, Value: workv1.FieldValue{Type: workv1.String, String: &marker}}}
	for name, n := range map[string]int64{health.Generation: 4, health.ObservedGeneration: 4, health.SpecReplicas: replicas,
		health.Replicas: replicas, health.UpdatedReplicas: replicas, health.ReadyReplicas: replicas, health.AvailableReplicas: replicas} {
		values = append(values, workv1.FeedbackValue{Name: health.FeedbackPrefix + name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: &n}})
	}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
		ResourceMeta:    workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "shop", Name: "web"},
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: values},
		Conditions: []metav1.Condition{
			{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2},
			{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 2},
		},
	}}
	return w
}

// TestStatusOfUnavailableCluster: a cluster whose ManagedCluster is not available keeps the agent's last report
// in its work, which says nothing of now. As Kubernetes stops counting the pods of an unreachable node as
// ready, its replicas are counted but none as ready or available, and kubectl describe says so with a
// ClusterDegraded event. Another reason to be unhealthy leaves the agent's report as it stands.
func TestStatusOfUnavailableCluster(t *testing.T) {
	key := fleet.Key{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	const generation = 7
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(generation)},
		"spec":     map[string]any{"replicas": int64(6)}}}
	away := workv1alpha1.ClusterHealth{Cluster: "c3", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonClusterUnavailable,
		Message: "the ManagedCluster's availability is Unknown: lease not renewed"}
	cases := map[string]struct {
		unhealthy     []workv1alpha1.ClusterHealth
		away          map[string]string // unavailable ManagedClusters
		leaving       bool              // c4 left the decisions and its work stays
		wantReplicas  int32
		wantReady     int32
		wantAvailable corev1.ConditionStatus
		wantDegraded  []string // the clusters with a ClusterDegraded event
	}{
		"every cluster available": {wantReplicas: 6, wantReady: 6, wantAvailable: corev1.ConditionTrue},
		"the manager reports c3 unavailable": {unhealthy: []workv1alpha1.ClusterHealth{away},
			wantReplicas: 6, wantReady: 4, wantAvailable: corev1.ConditionFalse, wantDegraded: []string{"c3"}},
		"c3's ManagedCluster is unavailable, which the manager's status does not list yet": {
			away:         map[string]string{"c3": "the ManagedCluster is not available: stopped"},
			wantReplicas: 6, wantReady: 4, wantAvailable: corev1.ConditionFalse, wantDegraded: []string{"c3"}},
		"c3 degraded for another reason: the agent's report stands": {
			unhealthy:    []workv1alpha1.ClusterHealth{{Cluster: "c3", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed}},
			wantReplicas: 6, wantReady: 6, wantAvailable: corev1.ConditionTrue},
		"a leaving cluster still serves": {leaving: true, wantReplicas: 8, wantReady: 8, wantAvailable: corev1.ConditionTrue},
		"a leaving cluster held because it is away serves nothing known": {leaving: true,
			away:         map[string]string{"c4": "the ManagedCluster's availability is Unknown: lease not renewed"},
			wantReplicas: 8, wantReady: 6, wantAvailable: corev1.ConditionTrue},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := hubView{clusters: []string{"c1", "c2", "c3"}, works: map[string]*workv1.ManifestWork{},
				carried: map[string]map[fleet.Key]int64{}, unhealthy: map[string]workv1alpha1.ClusterHealth{}, away: tc.away}
			if tc.leaving {
				v.leaving = []string{"c4"}
			}
			for _, c := range append(v.clusters, v.leaving...) {
				v.works[c] = deploymentWork(c, "new", 2)
				v.carried[c] = map[fleet.Key]int64{key: generation}
			}
			for _, h := range tc.unhealthy {
				v.unhealthy[h.Cluster] = h
			}
			var reports []fleet.ClusterReport
			for _, c := range v.clusters {
				reports = append(reports, v.report(c, key, generation))
			}
			for _, c := range v.leaving {
				rep := v.report(c, key, generation)
				rep.Leaving = true
				reports = append(reports, rep)
			}
			status, evs := fleet.Status(web, reports, time.Now())
			var got appsv1.DeploymentStatus
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(status, &got); err != nil {
				t.Fatal(err)
			}
			if got.Replicas != tc.wantReplicas || got.ReadyReplicas != tc.wantReady || got.AvailableReplicas != tc.wantReady {
				t.Errorf("replicas %d, ready %d, available %d; want %d, %d, %d", got.Replicas, got.ReadyReplicas, got.AvailableReplicas,
					tc.wantReplicas, tc.wantReady, tc.wantReady)
			}
			for _, c := range got.Conditions {
				if c.Type == appsv1.DeploymentAvailable && c.Status != tc.wantAvailable {
					t.Errorf("Available=%s, want %s", c.Status, tc.wantAvailable)
				}
			}
			var degraded []string
			for _, e := range evs {
				if e.Reason == fleet.EventClusterDegraded {
					degraded = append(degraded, e.Cluster)
				}
			}
			if diff := cmp.Diff(tc.wantDegraded, degraded); diff != "" {
				t.Errorf("clusters with a ClusterDegraded event (-want +got):\n%s", diff)
			}
		})
	}
}
