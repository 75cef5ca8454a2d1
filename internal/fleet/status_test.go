package fleet

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Generation: 2,
			Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: "new"}}}
		w.Status.Conditions = []metav1.Condition{
			{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2},
			{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, ObservedGeneration: 2},
		}
		values := []workv1.FeedbackValue{{Name: health.FeedbackPrefix + health.TemplateHash, Value: workv1.FieldValue{Type: workv1.String, String: &marker}}}
		for name, n := range map[string]int64{health.Generation: 4, health.ObservedGeneration: 4, health.SpecReplicas: 2,
			health.Replicas: 2, health.UpdatedReplicas: 2, health.ReadyReplicas: 2, health.AvailableReplicas: 2} {
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
		return hubView{clusters: []string{"c1"}, works: map[string]*workv1.ManifestWork{"c1": w},
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
