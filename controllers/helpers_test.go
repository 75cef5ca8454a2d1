package controllers

import (
	"testing"

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
