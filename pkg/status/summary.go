// Package status rolls the health of every decided cluster up into a PlacementManifestWork's summary,
// per-manifest aggregates and list of unhealthy clusters.
package status

import (
	"sort"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// MaxUnhealthyListed bounds status.unhealthyClusters, so status stays small for thousands of clusters.
const MaxUnhealthyListed = 10

// ClusterOutcome is the health of one decided cluster.
type ClusterOutcome struct {
	Cluster string
	health.ClusterResult
	// Carried, when set, says where the cluster's work carries each manifest Aggregate lists: its result for
	// manifest i is Manifests[Carried[i]], and a negative Carried[i] means its work does not carry manifest i
	// (a dependency only some clusters' overrides make their manifests reference), which then does not count
	// it at all. nil: manifest i is Manifests[i].
	Carried []int
}

// result is the position in o.Manifests of the result for the listed manifest i; carried is false when the
// cluster's work does not carry it.
func (o *ClusterOutcome) result(i int) (pos int, carried bool) {
	if o.Carried == nil {
		return i, true
	}
	if i >= len(o.Carried) || o.Carried[i] < 0 {
		return 0, false
	}
	return o.Carried[i], true
}

// Rollup is the aggregated part of a PlacementManifestWork's status.
type Rollup struct {
	Summary            workv1alpha1.PlacedManifestWorkSummary
	Manifests          []workv1alpha1.ManifestSummary
	Unhealthy          []workv1alpha1.ClusterHealth
	UnhealthyNotListed int32
	// WebhookAggregations counts the manifests whose interpreter's webhook rolls their status up under
	// failurePolicy Fail; AggregationFailures are those whose webhook failed, in template order. Their
	// Aggregated is the one written before (none when none was), not a roll-up the webhook did not make.
	WebhookAggregations int
	AggregationFailures []AggregationFailure
}

// notSummed are feedback values whose sum across clusters means nothing.
var notSummed = map[string]bool{health.Generation: true, health.ObservedGeneration: true}

// Aggregate rolls the outcomes of the decided clusters up. manifests are the template's manifests (and the
// dependencies carried along; each outcome's Carried says which of them its work carries), kinds their
// interpreters, whose aggregation rules say how reported fields roll up (nil: the built-in kinds). previous are
// the manifests' summaries as last written: a manifest whose webhook roll-up failed keeps its aggregated status
// from them.
func Aggregate(outcomes []ClusterOutcome, manifests []template.Manifest, kinds *health.Interpreters, previous []workv1alpha1.ManifestSummary) Rollup {
	r := Rollup{Summary: workv1alpha1.PlacedManifestWorkSummary{Total: int32(len(outcomes))}}
	r.Manifests = make([]workv1alpha1.ManifestSummary, len(manifests))
	sums := make([]map[string]*workv1alpha1.FeedbackSum, len(manifests))
	aggregators := make([]*aggregator, len(manifests))
	interpreters := make([]health.Interpreter, len(manifests))
	for i, m := range manifests {
		r.Manifests[i] = workv1alpha1.ManifestSummary{
			Name: m.Object.GetName(), Namespace: m.Object.GetNamespace(), Group: m.GVK.Group, Kind: m.GVK.Kind,
		}
		sums[i] = map[string]*workv1alpha1.FeedbackSum{}
		if interpreters[i] = kinds.For(m.GVK); interpreters[i] != nil {
			aggregators[i] = newAggregator(interpreters[i].Aggregation())
		}
	}

	var unhealthy []workv1alpha1.ClusterHealth
	for _, o := range outcomes {
		if o.Applied {
			r.Summary.Applied++
		}
		switch o.State {
		case health.Healthy:
			r.Summary.Available++
		case health.Degraded:
			r.Summary.Degraded++
		default:
			r.Summary.Progressing++
		}
		if o.State != health.Healthy {
			unhealthy = append(unhealthy, workv1alpha1.ClusterHealth{Cluster: o.Cluster, State: workv1alpha1.ClusterState(o.State), Reason: o.Reason, Message: o.Message})
		}
		for i := range manifests {
			ms := &r.Manifests[i]
			j, carried := o.result(i)
			if !carried {
				continue
			}
			if j >= len(o.Manifests) {
				ms.Progressing++
				continue
			}
			switch o.Manifests[j].State {
			case health.Healthy:
				ms.Healthy++
			case health.Degraded:
				ms.Degraded++
			default:
				ms.Progressing++
			}
			aggregators[i].add(o.Manifests[j].Feedback)
			for name, v := range o.Manifests[j].Feedback {
				if v.Integer == nil || notSummed[name] {
					continue
				}
				s, ok := sums[i][name]
				if !ok {
					s = &workv1alpha1.FeedbackSum{Name: name}
					sums[i][name] = s
				}
				s.Value += *v.Integer
				s.Clusters++
			}
		}
	}
	for i := range manifests {
		for _, s := range sums[i] {
			r.Manifests[i].Feedback = append(r.Manifests[i].Feedback, *s)
		}
		sort.Slice(r.Manifests[i].Feedback, func(a, b int) bool { return r.Manifests[i].Feedback[a].Name < r.Manifests[i].Feedback[b].Name })
		r.Manifests[i].Aggregated = aggregators[i].result()
		k, ok := interpreters[i].(statusAggregator)
		if !ok {
			continue
		}
		if k.ReportsAggregateStatusFailures() {
			r.WebhookAggregations++
		}
		fields, err := withAggregatedStatus(r.Manifests[i].Aggregated, k, manifests[i], i, outcomes)
		if err != nil {
			r.AggregationFailures = append(r.AggregationFailures, AggregationFailure{Manifest: manifests[i].ID(), Err: err})
			fields = lastAggregated(previous, r.Manifests[i])
		}
		r.Manifests[i].Aggregated = fields
	}

	sort.Slice(unhealthy, func(a, b int) bool {
		da, db := unhealthy[a].State == workv1alpha1.ClusterDegraded, unhealthy[b].State == workv1alpha1.ClusterDegraded
		if da != db {
			return da
		}
		return unhealthy[a].Cluster < unhealthy[b].Cluster
	})
	if len(unhealthy) > MaxUnhealthyListed {
		r.UnhealthyNotListed = int32(len(unhealthy) - MaxUnhealthyListed)
		unhealthy = unhealthy[:MaxUnhealthyListed]
	}
	r.Unhealthy = unhealthy
	return r
}
