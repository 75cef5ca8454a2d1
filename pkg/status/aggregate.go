package status

import (
	"sort"
	"strconv"

	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// MaxCountedValues bounds the values a Count aggregation lists, most reported first.
const MaxCountedValues = 10

// aggregator rolls one manifest's reported fields up as its interpreter's aggregation says.
type aggregator struct {
	rules  []workv1alpha1.InterpreterAggregation
	fields []workv1alpha1.AggregatedField
	counts []map[string]int32
}

func newAggregator(rules []workv1alpha1.InterpreterAggregation) *aggregator {
	if len(rules) == 0 {
		return nil
	}
	a := &aggregator{rules: rules, fields: make([]workv1alpha1.AggregatedField, len(rules)), counts: make([]map[string]int32, len(rules))}
	for i, r := range rules {
		a.fields[i] = workv1alpha1.AggregatedField{Name: r.Feedback, Operation: r.Operation}
		a.counts[i] = map[string]int32{}
	}
	return a
}

// add takes one cluster's reported values.
func (a *aggregator) add(f health.Feedback) {
	if a == nil {
		return
	}
	for i, r := range a.rules {
		v, ok := f[r.Feedback]
		if !ok {
			continue
		}
		field := &a.fields[i]
		if r.Operation == workv1alpha1.AggregationCount {
			text, ok := scalarText(v)
			if !ok {
				continue
			}
			a.counts[i][text]++
			field.Clusters++
			continue
		}
		if v.Integer == nil {
			continue
		}
		n := *v.Integer
		field.Clusters++
		switch {
		case field.Value == nil:
			field.Value = &n
		case r.Operation == workv1alpha1.AggregationSum:
			*field.Value += n
		case r.Operation == workv1alpha1.AggregationMin && n < *field.Value:
			*field.Value = n
		case r.Operation == workv1alpha1.AggregationMax && n > *field.Value:
			*field.Value = n
		}
	}
}

// result is the aggregated fields, sorted by name; counts list the most reported values first, then by value.
func (a *aggregator) result() []workv1alpha1.AggregatedField {
	if a == nil {
		return nil
	}
	for i := range a.fields {
		if a.rules[i].Operation != workv1alpha1.AggregationCount {
			continue
		}
		for value, n := range a.counts[i] {
			a.fields[i].Counts = append(a.fields[i].Counts, workv1alpha1.ValueCount{Value: value, Clusters: n})
		}
		counts := a.fields[i].Counts
		sort.Slice(counts, func(x, y int) bool {
			if counts[x].Clusters != counts[y].Clusters {
				return counts[x].Clusters > counts[y].Clusters
			}
			return counts[x].Value < counts[y].Value
		})
		if len(counts) > MaxCountedValues {
			a.fields[i].Counts = counts[:MaxCountedValues]
		}
	}
	sort.Slice(a.fields, func(x, y int) bool { return a.fields[x].Name < a.fields[y].Name })
	return a.fields
}

// scalarText formats a reported scalar as text; ok is false for a value that is not one.
func scalarText(v workv1.FieldValue) (string, bool) {
	switch {
	case v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10), true
	case v.String != nil:
		return *v.String, true
	case v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean), true
	}
	return "", false
}

// statusAggregator is an interpreter that rolls reported values up itself (a ResourceInterpreter's webhook
// answering AggregateStatus). ok is false when it does not; an error is a failure under its Fail policy.
type statusAggregator interface {
	AggregateStatus(m template.Manifest, clusters []string, feedback []health.Feedback) (fields []workv1alpha1.AggregatedField, ok bool, err error)
	// ReportsAggregateStatusFailures is true when it has a webhook for AggregateStatus under failurePolicy Fail.
	ReportsAggregateStatusFailures() bool
}

// AggregationFailure is a manifest whose interpreter's webhook failed to roll its status up under failurePolicy
// Fail.
type AggregationFailure struct {
	// Manifest names it (template.Manifest.ID).
	Manifest string
	// Err is the failure; it names the interpreter and the webhook.
	Err error
}

// withAggregatedStatus adds what the aggregator answers for manifest i to the declarative fields; an answer's
// field replaces a declarative one of the same name. A failure under the Fail policy is returned, and the
// fields are then not to be used: the declarative ones alone would be a roll-up the webhook did not make.
func withAggregatedStatus(fields []workv1alpha1.AggregatedField, a statusAggregator, m template.Manifest, i int, outcomes []ClusterOutcome) ([]workv1alpha1.AggregatedField, error) {
	var clusters []string
	var feedback []health.Feedback
	for _, o := range outcomes {
		if j, carried := o.result(i); carried && j < len(o.Manifests) && o.Manifests[j].Feedback != nil {
			clusters = append(clusters, o.Cluster)
			feedback = append(feedback, o.Manifests[j].Feedback)
		}
	}
	answered, ok, err := a.AggregateStatus(m, clusters, feedback)
	if err != nil {
		return nil, err
	}
	if !ok {
		return fields, nil
	}
	byName := map[string]int{}
	for n, f := range fields {
		byName[f.Name] = n
	}
	for _, f := range answered {
		if n, dup := byName[f.Name]; dup {
			fields[n] = f
			continue
		}
		fields = append(fields, f)
	}
	sort.Slice(fields, func(x, y int) bool { return fields[x].Name < fields[y].Name })
	return fields, nil
}

// lastAggregated is the aggregated status written before for the manifest s names, found by its identity (its
// position may have changed); nil when none was.
func lastAggregated(previous []workv1alpha1.ManifestSummary, s workv1alpha1.ManifestSummary) []workv1alpha1.AggregatedField {
	for _, p := range previous {
		if p.Group == s.Group && p.Kind == s.Kind && p.Namespace == s.Namespace && p.Name == s.Name && len(p.Aggregated) > 0 {
			return p.DeepCopy().Aggregated
		}
	}
	return nil
}
