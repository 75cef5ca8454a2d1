package framework

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// PMWWrapper builds a PlacementManifestWork.
type PMWWrapper struct {
	workv1alpha1.PlacementManifestWork
}

// MakePMW starts a PlacementManifestWork with no manifests.
func MakePMW(name, namespace string) *PMWWrapper {
	return &PMWWrapper{workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Manifest appends a manifest given as a map.
func (w *PMWWrapper) Manifest(obj map[string]any) *PMWWrapper {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	w.Spec.ManifestWorkTemplate.Workload.Manifests = append(w.Spec.ManifestWorkTemplate.Workload.Manifests,
		workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	return w
}

// Placement sets spec.placementRef.
func (w *PMWWrapper) Placement(name string) *PMWWrapper {
	w.Spec.PlacementRef = &workv1alpha1.LocalPlacementReference{Name: name}
	return w
}

// Strategy appends a distributionStrategy entry.
func (w *PMWWrapper) Strategy(s workv1alpha1.DistributionStrategy) *PMWWrapper {
	w.Spec.DistributionStrategy = append(w.Spec.DistributionStrategy, s)
	return w
}

// Move sets spec.moveStrategy to the given type, with the default timeout.
func (w *PMWWrapper) Move(t workv1alpha1.MoveType) *PMWWrapper {
	w.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: t}
	return w
}

// RevisionHistoryLimit sets spec.revisionHistoryLimit.
func (w *PMWWrapper) RevisionHistoryLimit(n int32) *PMWWrapper {
	w.Spec.RevisionHistoryLimit = &n
	return w
}

// Obj returns the PlacementManifestWork.
func (w *PMWWrapper) Obj() *workv1alpha1.PlacementManifestWork { return &w.PlacementManifestWork }

// ConfigMap is a ConfigMap manifest.
func ConfigMap(name, namespace string, data map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     data,
	}
}

// Deployment is a Deployment manifest with the given replicas.
func Deployment(name, namespace string, replicas int) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": "registry.example/app:1"},
				}},
			},
		},
	}
}

// HPA is an autoscaling/v2 HorizontalPodAutoscaler of the Deployment named deployment in the same namespace.
func HPA(name, namespace, deployment string, minReplicas, maxReplicas int) map[string]any {
	return map[string]any{
		"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment},
			"minReplicas":    minReplicas,
			"maxReplicas":    maxReplicas,
		},
	}
}

// Overrides sets spec.overrides.
func (w *PMWWrapper) Overrides(o ...workv1alpha1.ClusterOverride) *PMWWrapper {
	w.Spec.Overrides = o
	return w
}

// Job is a Job manifest with the given parallelism.
func Job(name, namespace string, parallelism int) map[string]any {
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"parallelism": parallelism,
			"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "job", "image": "registry.example/job:1"}},
			}},
		},
	}
}

// Placement is an empty Placement.
func Placement(name, namespace string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
}

// Decision is a PlacementDecision of a Placement, labelled as OCM's placement controller labels it; its status
// must be written separately (SetDecisions).
func Decision(name, namespace, placement string) *clusterv1beta1.PlacementDecision {
	return &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: namespace,
		Labels: map[string]string{clusterv1beta1.PlacementLabel: placement},
	}}
}

// SetDecisions sets a PlacementDecision's status to the given clusters.
func SetDecisions(d *clusterv1beta1.PlacementDecision, clusters ...string) {
	d.Status.Decisions = make([]clusterv1beta1.ClusterDecision, 0, len(clusters))
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c, Reason: "test"})
	}
}

// WorkConditions sets the agent's conditions on a ManifestWork for its current generation, as OCM's work
// agent reports them, and gives every manifest the work's Applied and Available conditions.
func WorkConditions(w *workv1.ManifestWork, status map[string]metav1.ConditionStatus) {
	for t, s := range status {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: t, Status: s, Reason: "Test", Message: "set by the test acting as work agent",
			ObservedGeneration: w.Generation,
		})
	}
	for i := range w.Spec.Workload.Manifests {
		mc := manifestCondition(w, i)
		for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			if s, ok := status[t]; ok {
				meta.SetStatusCondition(&mc.Conditions, metav1.Condition{Type: t, Status: s, Reason: "Test", ObservedGeneration: w.Generation})
			}
		}
	}
}

// Feedback sets the status feedback of the manifest at ordinal, as the agent reports it: integers, strings
// and booleans by name.
func Feedback(w *workv1.ManifestWork, ordinal int, values map[string]any) {
	mc := manifestCondition(w, ordinal)
	mc.StatusFeedbacks.Values = nil
	for name, v := range values {
		fv := workv1.FeedbackValue{Name: name}
		switch x := v.(type) {
		case int:
			n := int64(x)
			fv.Value = workv1.FieldValue{Type: workv1.Integer, Integer: &n}
		case string:
			fv.Value = workv1.FieldValue{Type: workv1.String, String: &x}
		case bool:
			fv.Value = workv1.FieldValue{Type: workv1.Boolean, Boolean: &x}
		default:
			panic("unsupported feedback value type")
		}
		mc.StatusFeedbacks.Values = append(mc.StatusFeedbacks.Values, fv)
	}
}

// manifestCondition returns the status entry of the manifest at ordinal, adding it when missing.
func manifestCondition(w *workv1.ManifestWork, ordinal int) *workv1.ManifestCondition {
	for i := range w.Status.ResourceStatus.Manifests {
		if w.Status.ResourceStatus.Manifests[i].ResourceMeta.Ordinal == int32(ordinal) {
			return &w.Status.ResourceStatus.Manifests[i]
		}
	}
	obj := map[string]any{}
	_ = json.Unmarshal(w.Spec.Workload.Manifests[ordinal].Raw, &obj)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	namespace, _ := md["namespace"].(string)
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(kind))
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: int32(ordinal), Group: gv.Group, Version: gv.Version, Kind: kind,
			Resource: plural.Resource, Name: name, Namespace: namespace},
	})
	return &w.Status.ResourceStatus.Manifests[len(w.Status.ResourceStatus.Manifests)-1]
}
