package controllers

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// clusterHealth judges each cluster that has a work, from the works as they are before this reconcile writes,
// and says which dependencies the works that carry the current template carry when they are not the
// template's (clusterDependencies; absent otherwise). A work that carries an earlier template (a rollout holds
// it) is judged against the manifests it carries, as its agent reports them, not against the current
// template's list by position; so is one whose dependencies cannot be told (clusterInputs).
func clusterHealth(base *manifestInputs, in *inputs, templateHash func(cluster string) string) (map[string]health.ClusterResult, map[string]clusterDependencies) {
	out := make(map[string]health.ClusterResult, len(in.owned))
	var deps map[string]clusterDependencies
	for cluster, w := range in.owned {
		var manifests []health.ManifestInput
		ok := false
		if manifestwork.CarriesTemplate(w, templateHash(cluster)) {
			var cd clusterDependencies
			if manifests, cd, ok = clusterInputs(base, in, cluster, in.shares[cluster]); ok && cd.own {
				if deps == nil {
					deps = map[string]clusterDependencies{}
				}
				deps[cluster] = cd
			}
		}
		if !ok {
			manifests = in.kinds.WorkManifests(w)
		}
		out[cluster] = health.Cluster(health.ClusterInput{Work: w, Unavailable: in.unavailable[cluster], Manifests: manifests})
	}
	return out, deps
}

// clusterDependencies says which dependencies (spec.propagateDependencies) a cluster's work carries after the
// template's manifests: the template's (own false), or, when its overrides change which ones its manifests
// reference, its own (deps; see dependencyFinder).
type clusterDependencies struct {
	deps []template.Manifest
	own  bool
}

// clusterInputs are the manifest inputs a cluster's work that carries the current template is judged by: the
// template's with its split shares (withShares) and its overrides (overridden), and, when the overrides
// change which dependencies its manifests reference, those dependencies in place of the template's. ok is
// false when that cannot be told (a dependency missing on the hub, an interpreter that fails: the desired state
// is invalid then, and the work is best judged by what it carries).
func clusterInputs(base *manifestInputs, in *inputs, cluster string, shares map[string]int32) ([]health.ManifestInput, clusterDependencies, bool) {
	r := resolvedOverrides(in, cluster, shares)
	manifests, changed := overridden(base.withShares(shares), r)
	if in.deps == nil || len(changed) == 0 {
		return manifests, clusterDependencies{}, true
	}
	// Clusters with the same overrides' result and the same shares have the same manifests: asked once.
	deps, same, err := in.deps.findFor(r.Key()+"\x00"+sharesKey(shares), cluster, func() []template.Manifest {
		// The template's manifests, each one an override changed as it leaves it (with the cluster's shares).
		view := slices.Clone(in.deps.template)
		for _, i := range changed {
			if i < len(view) {
				view[i].Object = manifests[i].Manifest.Object
			}
		}
		return view
	})
	if err != nil {
		return nil, clusterDependencies{}, false
	}
	if same {
		return manifests, clusterDependencies{}, true
	}
	cd := clusterDependencies{deps: deps, own: true}
	own, _ := overridden(base.dependencyInputs(deps), r)
	out := make([]health.ManifestInput, base.own, base.own+len(own))
	copy(out, manifests)
	return append(out, own...), cd, true
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

// kept is the result of a cluster that cannot get the current template (planner.Plan.Kept): like outdated, at
// best progressing and not applied, saying why.
func kept(r health.ClusterResult, plan *planner.Plan, cluster string) health.ClusterResult {
	why := "an override fails here (OverrideFailed), so its work is kept as it is"
	if e := plan.DependencyFailures[cluster]; e != nil && plan.OverrideFailures[cluster] == nil {
		why = fmt.Sprintf("the dependencies of its manifests as the overrides leave them cannot be found (%s), so its work is kept as it is", e.Reason)
	}
	return notKnownCurrent(r, why)
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
	// own is the number of the template's own manifests, before its dependencies; kinds and configs make the
	// inputs of the dependencies some clusters carry of their own (dependencyInputs), made once per list.
	own     int
	kinds   *health.Interpreters
	configs []workv1.ManifestConfigOption
	byDeps  map[*template.Manifest][]health.ManifestInput
}

func newManifestInputs(kinds *health.Interpreters, manifests []template.Manifest, configs []workv1.ManifestConfigOption) *manifestInputs {
	own := len(manifests)
	for i, m := range manifests {
		if m.Dependency {
			own = i
			break
		}
	}
	return &manifestInputs{base: kinds.Inputs(manifests, configs), byShares: map[string][]health.ManifestInput{},
		own: own, kinds: kinds, configs: configs}
}

// dependencyInputs are the inputs of the dependencies a cluster carries of its own (clusterDependencies), made
// once per list the dependencyFinder gave (clusters alike share it). Not to be modified.
func (m *manifestInputs) dependencyInputs(deps []template.Manifest) []health.ManifestInput {
	if len(deps) == 0 {
		return nil
	}
	// Keyed by the list's first element: the finder gives each list once, and clusters alike share it.
	if out, ok := m.byDeps[&deps[0]]; ok && len(out) == len(deps) {
		return out
	}
	if m.byDeps == nil {
		m.byDeps = map[*template.Manifest][]health.ManifestInput{}
	}
	out := m.kinds.Inputs(deps, m.configs)
	m.byDeps[&deps[0]] = out
	return out
}

// withDependencies is manifests (the template's inputs, withShares) with the dependencies the cluster carries in
// place of the template's, when it carries its own: its work's manifests by position.
func (m *manifestInputs) withDependencies(manifests []health.ManifestInput, cd clusterDependencies) []health.ManifestInput {
	if !cd.own || len(manifests) < m.own {
		return manifests
	}
	own := m.dependencyInputs(cd.deps)
	out := make([]health.ManifestInput, m.own, m.own+len(own))
	copy(out, manifests)
	return append(out, own...)
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
	id := sharesKey(shares)
	if out, ok := m.byShares[id]; ok {
		return out
	}
	out := withShares(m.base, shares)
	m.byShares[id] = out
	return out
}

// sharesKey identifies a set of split shares: equal sets, equal keys.
func sharesKey(shares map[string]int32) string {
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
	return id.String()
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

// resolvedOverrides are the overrides that select the cluster, resolved with its facts and shares; nil when
// none does.
func resolvedOverrides(in *inputs, cluster string, shares map[string]int32) *override.Resolved {
	if in.overrides.Len() == 0 {
		return nil
	}
	facts := in.planInput.ClusterFacts[cluster]
	facts.Name, facts.Shares = cluster, shares
	r := in.overrides.Resolve(facts)
	if r.Key() == "" {
		return nil
	}
	return r
}

// overridden sets, on a copy of manifests (already withShares), each manifest as the overrides r deliver it,
// so its health is judged against what its work carries: a Deployment whose replicas an override sets asks for
// those. A manifest the overrides fail on keeps the template's (its work was not written with them). changed
// are the positions of the manifests the overrides change.
func overridden(manifests []health.ManifestInput, r *override.Resolved) ([]health.ManifestInput, []int) {
	if r == nil {
		return manifests, nil
	}
	out := make([]health.ManifestInput, len(manifests))
	copy(out, manifests)
	var changed []int
	for i := range out {
		m := out[i].Manifest
		delivered := template.Manifest{Index: m.Index, GVK: m.GVK, Dependency: m.Dependency, Object: &unstructured.Unstructured{Object: out[i].Delivered()}}
		obj, _, err := r.Apply(delivered, nil)
		if err != nil || obj == nil {
			continue
		}
		if obj != delivered.Object {
			changed = append(changed, i)
		}
		out[i].Manifest.Object, out[i].Fields = obj, nil
	}
	return out, changed
}
