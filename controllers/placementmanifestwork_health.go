package controllers

import (
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// clusterHealth judges each cluster that has a work, from the works as they are before this reconcile writes.
// A work that carries an earlier template (a rollout holds it) is judged against the manifests it carries, as
// its agent reports them, not against the current template's list by position.
func clusterHealth(base *manifestInputs, in *inputs, templateHash func(cluster string) string) map[string]health.ClusterResult {
	out := make(map[string]health.ClusterResult, len(in.owned))
	for cluster, w := range in.owned {
		var manifests []health.ManifestInput
		if manifestwork.CarriesTemplate(w, templateHash(cluster)) {
			manifests = withOverrides(base.withShares(in.shares[cluster]), in, cluster, in.shares[cluster])
		} else {
			manifests = in.kinds.WorkManifests(w)
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

// notKnownCurrent is the result of a cluster whose work cannot be told to carry the current template because
// no desired state is computed (the Placement is missing or not decided, or the spec cannot be used): like
// outdated, at best progressing and not applied, saying why.
func notKnownCurrent(r health.ClusterResult, why string) health.ClusterResult {
	r = outdated(r)
	if r.Reason == workv1alpha1.ReasonOutdatedTemplate {
		r.Message = why
	}
	return r
}

// carriesCurrentTemplate says, while no desired state is computed (obs.plan is nil), whether a cluster's work
// carries the current template, and why not: with a usable template, when its template hash is the
// PlacementManifestWork's own; a cluster an override selects has a hash of its own, which needs the desired
// state, so it is not counted until then. With a template that cannot be used, no work carries it.
func carriesCurrentTemplate(pmw *workv1alpha1.PlacementManifestWork, obs *observation) func(w *workv1.ManifestWork) (bool, string) {
	if obs.template == nil {
		return func(*workv1.ManifestWork) (bool, string) {
			return false, "the current template cannot be used, so no cluster carries it"
		}
	}
	b, err := manifestwork.NewBuilder(pmw, obs.kinds.ManifestConfigs(obs.template, pmw.Spec.ManifestWorkTemplate.ManifestConfigs))
	if err != nil {
		return func(*workv1.ManifestWork) (bool, string) { return false, "the current template cannot be encoded" }
	}
	base, _ := templateHashes(pmw, &inputs{}, b.TemplateHash())
	return func(w *workv1.ManifestWork) (bool, string) {
		if manifestwork.CarriesTemplate(w, base) {
			return true, ""
		}
		return false, "its work does not carry the current template as such (an earlier one, or the current one with overrides), and no desired state is computed now to tell"
	}
}

// manifestInputs is what health judges the clusters that carry one template by: its manifests' inputs
// (health.Interpreters.Inputs), made once per reconcile, and those inputs with each distinct set of split shares
// (withShares), made once per set, since thousands of clusters share a handful of sets. The slices it returns
// are shared: not to be modified.
type manifestInputs struct {
	base     []health.ManifestInput
	byShares map[string][]health.ManifestInput
}

func newManifestInputs(kinds *health.Interpreters, manifests []template.Manifest, configs []workv1.ManifestConfigOption) *manifestInputs {
	return &manifestInputs{base: kinds.Inputs(manifests, configs), byShares: map[string][]health.ManifestInput{}}
}

// healthInputs are the template's manifest inputs judged with tpl's manifestConfigs: the desired state's when
// tpl is the PlacementManifestWork it was computed for, made now otherwise (a rollback judges by the completed
// revision's configs; a status without a desired state has none).
func (obs *observation) healthInputs(tpl *workv1alpha1.PlacementManifestWork) *manifestInputs {
	if obs.desired.inputs != nil && obs.inputsFor == tpl {
		return obs.desired.inputs
	}
	return newManifestInputs(obs.kinds, obs.template, tpl.Spec.ManifestWorkTemplate.ManifestConfigs)
}

// withShares is withShares(base, shares), made once per distinct set of shares.
func (m *manifestInputs) withShares(shares map[string]int32) []health.ManifestInput {
	if len(shares) == 0 {
		return m.base
	}
	keys := make([]string, 0, len(shares))
	for k := range shares {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var id strings.Builder
	for _, k := range keys {
		id.WriteString(k)
		id.WriteByte(0)
		id.WriteString(strconv.Itoa(int(shares[k])))
		id.WriteByte(0)
	}
	if out, ok := m.byShares[id.String()]; ok {
		return out
	}
	out := withShares(m.base, shares)
	m.byShares[id.String()] = out
	return out
}

// withShares sets, on a copy of base, the share a cluster's work carries for each split manifest, so its
// health is judged against that share: the replicas it asks for when .spec.replicas is split, and nothing at
// all asked of it when its share is 0. A manifest split in several fields (a kind whose interpreter names
// several) is judged by its primary field's share (primaryShare).
func withShares(base []health.ManifestInput, shares map[string]int32) []health.ManifestInput {
	if len(shares) == 0 {
		return base
	}
	out := make([]health.ManifestInput, len(base))
	copy(out, base)
	for i := range out {
		prefix := planner.SplitKey(out[i].Manifest, "")
		fields := map[string]int32{}
		for key, v := range shares {
			fieldPath, ok := strings.CutPrefix(key, prefix)
			if !ok || strings.Contains(fieldPath, " ") {
				continue
			}
			fields[fieldPath] = v
		}
		fieldPath, v, ok := primaryShare(fields, out[i].Kind)
		if !ok {
			continue
		}
		share := int64(v)
		out[i].Share, out[i].Fields = &share, fields
		if fieldPath == workv1alpha1.DefaultSplitFieldPath {
			out[i].Replicas = &share
		}
	}
	return out
}

// primaryShare picks, of a manifest's split fields, the one its health follows: the only one; else the first
// its kind's interpreter names; else .spec.replicas; else the first by name, so the choice never depends on
// map order.
func primaryShare(fields map[string]int32, kind health.Interpreter) (string, int32, bool) {
	if len(fields) == 0 {
		return "", 0, false
	}
	var candidates []string
	if kind != nil {
		candidates = kind.ReplicaPaths()
	}
	candidates = append(candidates, workv1alpha1.DefaultSplitFieldPath)
	for _, c := range candidates {
		if v, ok := fields[c]; ok {
			return c, v, true
		}
	}
	first := ""
	for f := range fields {
		if first == "" || f < first {
			first = f
		}
	}
	return first, fields[first], true
}

// withOverrides sets, on a copy of manifests (already withShares), each manifest as the overrides that select
// the cluster deliver it, so its health is judged against what its work carries: a Deployment whose replicas
// an override sets asks for those. A manifest the overrides fail on keeps the template's (its work was not
// written with them).
func withOverrides(manifests []health.ManifestInput, in *inputs, cluster string, shares map[string]int32) []health.ManifestInput {
	if in.overrides.Len() == 0 {
		return manifests
	}
	facts := in.planInput.ClusterFacts[cluster]
	facts.Name, facts.Shares = cluster, shares
	r := in.overrides.Resolve(facts)
	if r.Key() == "" {
		return manifests
	}
	out := make([]health.ManifestInput, len(manifests))
	copy(out, manifests)
	for i := range out {
		m := out[i].Manifest
		delivered := template.Manifest{Index: m.Index, GVK: m.GVK, Object: &unstructured.Unstructured{Object: out[i].Delivered()}}
		obj, _, err := r.Apply(delivered, nil)
		if err != nil || obj == nil {
			continue
		}
		out[i].Manifest.Object, out[i].Fields = obj, nil
	}
	return out
}
