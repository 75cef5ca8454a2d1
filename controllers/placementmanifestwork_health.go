package controllers

import (
	"strings"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
)

// clusterHealth judges each cluster that has a work, from the works as they are before this reconcile writes.
// A work that carries an earlier template (a rollout holds it) is judged against the manifests it carries, as
// its agent reports them, not against the current template's list by position.
func clusterHealth(pmw *workv1alpha1.PlacementManifestWork, in *inputs, templateHash string) map[string]health.ClusterResult {
	base := health.Inputs(in.template, pmw.Spec.ManifestWorkTemplate.ManifestConfigs)
	out := make(map[string]health.ClusterResult, len(in.owned))
	for cluster, w := range in.owned {
		manifests := withShares(base, in.shares[cluster])
		if !manifestwork.CarriesTemplate(w, templateHash) {
			manifests = health.WorkManifests(w)
		}
		out[cluster] = health.Cluster(health.ClusterInput{Work: w, Unavailable: in.unavailable[cluster], Manifests: manifests})
	}
	return out
}

// outdated is the result of a cluster whose work carries an earlier template (a rollout holds it, or its
// write failed): healthy means running the current template, so at best it is progressing, and its work does
// not count as applied. Its per-manifest results describe the earlier template's manifests and are left out.
func outdated(r health.ClusterResult) health.ClusterResult {
	r.Applied, r.Manifests = false, nil
	if r.State == health.Healthy {
		r.Verdict = health.Verdict{State: health.Progressing, Reason: workv1alpha1.ReasonOutdatedTemplate,
			Message: "runs an earlier template; the rollout strategy has not brought the current one here yet"}
	}
	return r
}

// withShares sets, on a copy of base, the share a cluster's work carries for each split manifest, so its
// health is judged against that share: the replicas it asks for when .spec.replicas is split, and nothing at
// all asked of it when its share is 0.
func withShares(base []health.ManifestInput, shares map[string]int32) []health.ManifestInput {
	if len(shares) == 0 {
		return base
	}
	out := make([]health.ManifestInput, len(base))
	copy(out, base)
	for i := range out {
		prefix := planner.SplitKey(out[i].Manifest, "")
		for key, v := range shares {
			fieldPath, ok := strings.CutPrefix(key, prefix)
			if !ok || strings.Contains(fieldPath, " ") {
				continue
			}
			share := int64(v)
			out[i].Share = &share
			if fieldPath == workv1alpha1.DefaultSplitFieldPath {
				out[i].Replicas = &share
			}
		}
	}
	return out
}
