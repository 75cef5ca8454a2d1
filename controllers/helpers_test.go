package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

// plannedWorks are the works of p for the clusters as the manager writes them (planner and builder), with the
// plan and the builder that made them.
func plannedWorks(t *testing.T, p *workv1alpha1.PlacementManifestWork, clusters ...string) (map[string]*workv1.ManifestWork, *planner.Plan, *manifestwork.Builder) {
	t.Helper()
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(p, health.ManifestConfigs(manifests, p.Spec.ManifestWorkTemplate.ManifestConfigs))
	if err != nil {
		t.Fatal(err)
	}
	marked := marks(p, manifests, nil, func(string) string { return b.TemplateHash() })
	plan, err := planner.Compute(p, manifests, planner.Input{Clusters: clusters, Marks: marked})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*workv1.ManifestWork, len(clusters))
	for _, c := range clusters {
		w, err := b.Build(c, plan.Manifests[c], plan.Shares[c])
		if err != nil {
			t.Fatal(err)
		}
		out[c] = w
	}
	return out, plan, b
}

// decisionOf is the PlacementDecision p-1 of Placement ns/p, deciding the clusters, as the pure tests give it to
// planWrites, desiredState and the rollout.
func decisionOf(clusters ...string) clusterv1beta1.PlacementDecision {
	d := clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: "p-1", Namespace: "ns",
		Labels: map[string]string{clusterv1beta1.PlacementLabel: "p"}}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}
