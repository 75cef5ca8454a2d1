package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// TestComputeNamesCompanions: each split workload's status names the companions its division apportions, and a
// PodDisruptionBudget over the pods of several workloads, delivered unchanged, with why and what to do.
func TestComputeNamesCompanions(t *testing.T) {
	deployment := func(name string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","namespace":"default"},"spec":{"replicas":4,` +
			`"selector":{"matchLabels":{"app":"` + name + `"}},"template":{"metadata":{"labels":{"app":"` + name + `","part-of":"shop"}}}}}`
	}
	const (
		hpa    = `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":8}}`
		pdbWeb = `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"default"},"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}}}`
		pdbAll = `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"shop","namespace":"default"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"part-of":"shop"}}}}`
	)
	splitOf := func(name string) workv1alpha1.DistributionStrategy {
		return workv1alpha1.DistributionStrategy{Name: name, Namespace: "default", Kind: "Deployment", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}
	}
	shared := "PodDisruptionBudget.policy default/shop: its selector matches the pods of 2 workloads ([Deployment.apps default/web Deployment.apps default/worker]), " +
		"so it is copied unchanged: give each split workload its own PodDisruptionBudget"
	cases := map[string]struct {
		manifests  []string
		strategies []workv1alpha1.DistributionStrategy
		mode       workv1alpha1.SplitCompanionsMode
		want       map[string][]workv1alpha1.SplitCompanion // by split workload name
	}{
		"an HPA and a PDB of one workload are apportioned": {
			manifests:  []string{deployment("web"), hpa, pdbWeb},
			strategies: []workv1alpha1.DistributionStrategy{splitOf("web")},
			want: map[string][]workv1alpha1.SplitCompanion{"web": {
				{Kind: "HorizontalPodAutoscaler", Name: "web", Fields: []string{"spec.minReplicas", "spec.maxReplicas"}},
				{Kind: "PodDisruptionBudget", Name: "web", Fields: []string{"spec.minAvailable"}},
			}},
		},
		"a PDB over two split workloads is named on both, copied": {
			manifests:  []string{deployment("web"), deployment("worker"), pdbAll},
			strategies: []workv1alpha1.DistributionStrategy{splitOf("web"), splitOf("worker")},
			want: map[string][]workv1alpha1.SplitCompanion{
				"web":    {{Kind: "PodDisruptionBudget", Name: "shop", Message: shared}},
				"worker": {{Kind: "PodDisruptionBudget", Name: "shop", Message: shared}},
			},
		},
		"a PDB over a split and a replicated workload is named on the split one": {
			manifests:  []string{deployment("web"), deployment("worker"), pdbAll},
			strategies: []workv1alpha1.DistributionStrategy{splitOf("web")},
			want:       map[string][]workv1alpha1.SplitCompanion{"web": {{Kind: "PodDisruptionBudget", Name: "shop", Message: shared}}},
		},
		"Copy names none": {
			manifests:  []string{deployment("web"), deployment("worker"), hpa, pdbAll},
			strategies: []workv1alpha1.DistributionStrategy{splitOf("web"), splitOf("worker")},
			mode:       workv1alpha1.SplitCompanionsCopy,
			want:       map[string][]workv1alpha1.SplitCompanion{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := pmw(0, tc.strategies...)
			p.Spec.SplitCompanions = tc.mode
			p.Spec.ManifestWorkTemplate.Workload.Manifests = nil
			for _, m := range tc.manifests {
				p.Spec.ManifestWorkTemplate.Workload.Manifests = append(p.Spec.ManifestWorkTemplate.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
			}
			plan, err := Compute(p, mustParse(t, p), Input{Clusters: []string{"c1", "c2", "c3"}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]workv1alpha1.SplitCompanion{}
			for _, s := range plan.Splits {
				if len(s.Companions) > 0 {
					got[s.Name] = s.Companions
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("companions by split workload (-want +got):\n%s", diff)
			}
		})
	}
}
