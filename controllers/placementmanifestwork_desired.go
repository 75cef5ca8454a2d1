package controllers

import (
	"encoding/json"
	"errors"
	"time"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// interpreterRetry is how soon a desired state that an interpreter's webhook failed to give is tried again.
const interpreterRetry = 30 * time.Second

// remembered is what the desired state reads of the manager's memory.
type remembered struct {
	// failover are the failover states, seeded from status.failedOver after a restart.
	failover map[string]failover.State
	// delivered are the split shares the manager delivered; deliveredKnown is false when it has no record.
	delivered      map[string]map[string]int32
	deliveredKnown bool
}

// desiredState decides, without I/O, the desired state of a PlacementManifestWork whose Placement is decided
// and whose spec is usable: each cluster's health, failover, the split and the works (planner). Which writes
// that asks for is planWrites'. It returns an InvalidError when no valid desired state exists (a split field
// that is not an integer, works over the size limit, a dependency missing on the hub), and when time alone
// changes the outcome. (The one exception to "without I/O": a dependency that only the manifests as a
// cluster's overrides leave them reference is read from the hub when first named, once per reconcile; see
// dependencyFinder.)
func desiredState(pmw *workv1alpha1.PlacementManifestWork, in *inputs, mem remembered, now time.Time) (desired, *planner.InvalidError, time.Duration, error) {
	var d desired
	// The builder is made once: the template hash judges health (a held cluster is judged by what its work
	// carries) and planWrites builds every cluster's work with it.
	configs := in.kinds.ManifestConfigs(in.template, pmw.Spec.ManifestWorkTemplate.ManifestConfigs)
	var err error
	if d.builder, err = manifestwork.NewBuilder(pmw, configs); err != nil {
		return d, nil, 0, err
	}
	d.templateHash, d.templateHashes = templateHashes(pmw, in, d.builder.TemplateHash())
	d.inputs, d.inputsFor = newManifestInputs(in.kinds, in.template, pmw.Spec.ManifestWorkTemplate.ManifestConfigs), pmw
	d.current, d.currentDeps = clusterHealth(d.inputs, in, d.clusterTemplateHash)
	recheck := in.scoresExpire
	if policy, ok := failoverPolicy(pmw); ok {
		var after time.Duration
		d.failoverEvaluated = true
		d.failoverStates, d.failedOver, after = failoverStates(policy, in.clusters, d.current, mem.failover, now)
		recheck = minPositive(recheck, after)
	}

	// The previous shares keep the division stable. Without the manager's own record (after a restart) the
	// works' annotations stand in, but only when they reproduce the division the status reports.
	previous := mem.delivered
	if !mem.deliveredKnown {
		previous = in.shares
	}
	input := in.planInput
	input.Clusters, input.Previous, input.Kinds = in.clusters, previous, in.kinds
	input.Marks = marks(pmw, in.template, in.kinds, d.clusterTemplateHash)
	if in.deps != nil {
		// A nil *dependencyFinder in the interface would not be nil.
		input.Dependencies = in.deps
	}
	if len(d.failedOver) > 0 {
		input.FailedOver = d.failedOver
	}
	plan, err := planner.Compute(pmw, in.template, input)
	if err == nil && !mem.deliveredKnown && len(previous) > 0 && !sharesMatchStatus(plan, previous, in.clusters, d.failedOver, pmw.Status.Splits) {
		d.sharesDropped = true
		previous, input.Previous = nil, nil
		plan, err = planner.Compute(pmw, in.template, input)
	}
	d.previous = previous
	var invalid *planner.InvalidError
	switch {
	case errors.As(err, &invalid):
		if invalid.Reason == workv1alpha1.ReasonInterpreterFailed {
			// A webhook that did not answer may answer later, and nothing else wakes this PMW when it does.
			recheck = minPositive(recheck, interpreterRetry)
		}
		return d, invalid, recheck, nil
	case err != nil:
		return d, nil, 0, err
	}
	for _, e := range plan.DependencyFailures {
		if e.Reason == workv1alpha1.ReasonInterpreterFailed {
			// As above, for the clusters whose overridden manifests the webhook did not answer for. (A
			// dependency created on the hub wakes the PlacementManifestWork through its watch.)
			recheck = minPositive(recheck, interpreterRetry)
			break
		}
	}
	d.plan = plan
	return d, nil, recheck, nil
}

// marks says which manifests the planner stamps with the template marker (health.Interpreters.Marked), so
// health can tell the agent's reads of an object made before it applied the work's template.
func marks(pmw *workv1alpha1.PlacementManifestWork, manifests []template.Manifest, kinds *health.Interpreters, templateHash func(string) string) *planner.Marks {
	indexes := map[int]bool{}
	for _, m := range manifests {
		if kinds.Marked(m, pmw.Spec.ManifestWorkTemplate.ManifestConfigs) {
			indexes[m.Index] = true
		}
	}
	return &planner.Marks{Indexes: indexes, TemplateHash: templateHash}
}

// templateHashes returns the template hash of the clusters no override selects (base, the builder's, with
// spec.splitCompanions when it is Copy) and, by decided cluster, the hash of those an override selects: the
// base hash combined with what the overrides come to for that cluster (override.Resolved.Key, evaluated on
// its name, labels and claims) and the specs of the overrides that select it, without their names and cluster
// selectors. So a change to what an override does, or
// to a cluster's labels or claims that an override selects by or reads, is a template change for exactly the
// clusters it affects, and the rollout strategy governs it. A change of the split shares alone is not: the
// keys are evaluated without the shares (an expression that reads them gives the same error on every cluster),
// so shares still reach every cluster at once. Clusters with the same key share one hash computation.
func templateHashes(pmw *workv1alpha1.PlacementManifestWork, in *inputs, base string) (string, map[string]string) {
	if pmw.Spec.SplitCompanions == workv1alpha1.SplitCompanionsCopy {
		base = manifestwork.ClusterTemplateHash(base, "splitCompanions="+string(workv1alpha1.SplitCompanionsCopy))
	}
	if in.overrides.Len() == 0 {
		return base, nil
	}
	specs := make([]string, len(pmw.Spec.Overrides))
	for i := range pmw.Spec.Overrides {
		// What the override does, not whom it selects or what it is called: naming one more cluster, or
		// widening a selector, is a template change for the clusters it now selects, not for those it selected.
		o := pmw.Spec.Overrides[i]
		o.Name, o.Clusters = "", nil
		b, _ := json.Marshal(&o) // a decoded spec encodes
		specs[i] = string(b)
	}
	byKey := map[string]string{}
	out := map[string]string{}
	for _, c := range in.clusters {
		facts := in.planInput.ClusterFacts[c]
		facts.Name, facts.Shares = c, nil
		r := in.overrides.Resolve(facts)
		if r.Key() == "" {
			continue
		}
		h, ok := byKey[r.Key()]
		if !ok {
			parts := []string{r.Key()}
			for _, i := range r.Selected() {
				parts = append(parts, specs[i])
			}
			h = manifestwork.ClusterTemplateHash(base, parts...)
			byKey[r.Key()] = h
		}
		out[c] = h
	}
	return base, out
}

// clusterTemplateHash is the template hash the cluster's work carries when it carries the current template:
// its own when an override selects it (templateHashes), the PlacementManifestWork's otherwise.
func (d *desired) clusterTemplateHash(cluster string) string {
	if h, ok := d.templateHashes[cluster]; ok {
		return h
	}
	return d.templateHash
}
