package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// TestCompanionFields: the status names the counts a companion has apportioned: an HPA's replicas (its
// minReplicas always, defaulted to 1), a PDB's integer minAvailable or maxUnavailable, never a percentage.
func TestCompanionFields(t *testing.T) {
	cases := map[string]struct {
		manifest string
		want     []string
	}{
		"HPA with both":              {manifest: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"minReplicas":4,"maxReplicas":10}}`, want: []string{"spec.minReplicas", "spec.maxReplicas"}},
		"HPA without minReplicas":    {manifest: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":10}}`, want: []string{"spec.minReplicas", "spec.maxReplicas"}},
		"PDB minAvailable":           {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":4}}`, want: []string{"spec.minAvailable"}},
		"PDB maxUnavailable":         {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"maxUnavailable":1}}`, want: []string{"spec.maxUnavailable"}},
		"PDB percentage is kept":     {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":"50%"}}`},
		"PDB integer and percentage": {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":2,"maxUnavailable":"10%"}}`, want: []string{"spec.minAvailable"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ms, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(tc.manifest)}}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, companionFields(ms[0])); diff != "" {
				t.Errorf("companionFields (-want +got):\n%s", diff)
			}
		})
	}
}
