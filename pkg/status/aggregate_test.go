package status

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// rolloutKind stands in for a user's interpreter that aggregates.
type rolloutKind struct {
	rules []workv1alpha1.InterpreterAggregation
}

func (rolloutKind) Name() string                                      { return "ResourceInterpreter rollouts" }
func (rolloutKind) ReplicaPaths() []string                            { return nil }
func (rolloutKind) FeedbackPaths(template.Manifest) []workv1.JsonPath { return nil }
func (rolloutKind) Health(health.ManifestInput, health.Feedback) (health.Verdict, bool) {
	return health.Verdict{}, false
}
func (k rolloutKind) Aggregation() []workv1alpha1.InterpreterAggregation { return k.rules }
func (rolloutKind) Retain() []string                                     { return nil }

func str(s string) workv1.FieldValue { return workv1.FieldValue{Type: workv1.String, String: &s} }

func TestAggregated(t *testing.T) {
	manifests, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"web","namespace":"default"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	rules := []workv1alpha1.InterpreterAggregation{
		{Feedback: "readyReplicas", Operation: workv1alpha1.AggregationSum},
		{Feedback: "phase", Operation: workv1alpha1.AggregationCount},
		{Feedback: "readyReplicas_min", Operation: workv1alpha1.AggregationMin},
		{Feedback: "paused", Operation: workv1alpha1.AggregationCount},
		{Feedback: "updated", Operation: workv1alpha1.AggregationMax},
	}
	kinds := health.NewInterpreters()
	kinds.Add(schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}, nil, rolloutKind{rules: rules})
	reported := func(ready int64, phase string, paused bool) health.ManifestResult {
		return health.ManifestResult{Verdict: health.Verdict{State: health.Healthy}, Feedback: health.Feedback{
			"readyReplicas": integer(ready), "readyReplicas_min": integer(ready), "phase": str(phase),
			"paused": {Type: workv1.Boolean, Boolean: &paused},
		}}
	}
	cases := map[string]struct {
		outcomes []ClusterOutcome
		want     []workv1alpha1.AggregatedField
	}{
		"sum, min, count of strings and booleans, a field nobody reports": {
			outcomes: []ClusterOutcome{
				outcome("c1", health.Healthy, "", true, reported(3, "Healthy", false)),
				outcome("c2", health.Healthy, "", true, reported(1, "Paused", true)),
				outcome("c3", health.Healthy, "", true, reported(2, "Healthy", false)),
				outcome("c4", health.Progressing, workv1alpha1.ReasonWorkNotCreated, false),
			},
			want: []workv1alpha1.AggregatedField{
				{Name: "paused", Operation: workv1alpha1.AggregationCount, Clusters: 3, Counts: []workv1alpha1.ValueCount{{Value: "false", Clusters: 2}, {Value: "true", Clusters: 1}}},
				{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 3, Counts: []workv1alpha1.ValueCount{{Value: "Healthy", Clusters: 2}, {Value: "Paused", Clusters: 1}}},
				{Name: "readyReplicas", Operation: workv1alpha1.AggregationSum, Clusters: 3, Value: ptr.To[int64](6)},
				{Name: "readyReplicas_min", Operation: workv1alpha1.AggregationMin, Clusters: 3, Value: ptr.To[int64](1)},
				{Name: "updated", Operation: workv1alpha1.AggregationMax},
			},
		},
		"no cluster reported": {
			outcomes: []ClusterOutcome{outcome("c1", health.Progressing, workv1alpha1.ReasonWorkNotCreated, false)},
			want: []workv1alpha1.AggregatedField{
				{Name: "paused", Operation: workv1alpha1.AggregationCount},
				{Name: "phase", Operation: workv1alpha1.AggregationCount},
				{Name: "readyReplicas", Operation: workv1alpha1.AggregationSum},
				{Name: "readyReplicas_min", Operation: workv1alpha1.AggregationMin},
				{Name: "updated", Operation: workv1alpha1.AggregationMax},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Aggregate(tc.outcomes, manifests, kinds, nil).Manifests[0].Aggregated
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("aggregated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCountListsTheMostReportedValues: a field with many values lists the ten most reported.
func TestCountListsTheMostReportedValues(t *testing.T) {
	a := newAggregator([]workv1alpha1.InterpreterAggregation{{Feedback: "version", Operation: workv1alpha1.AggregationCount}})
	for i := range 30 {
		for range i % 4 {
			a.add(health.Feedback{"version": str(fmt.Sprintf("v%02d", i))})
		}
	}
	got := a.result()[0]
	if len(got.Counts) != MaxCountedValues || got.Counts[0] != (workv1alpha1.ValueCount{Value: "v03", Clusters: 3}) {
		t.Errorf("counts = %+v, want the %d most reported, v03 first", got.Counts, MaxCountedValues)
	}
}

// answeringKind stands in for an interpreter whose webhook rolls reported values up (AggregateStatus).
type answeringKind struct {
	rolloutKind
	fields []workv1alpha1.AggregatedField
	ok     bool
	err    error
	strict bool
	asked  *[]string
}

func (k answeringKind) AggregateStatus(_ template.Manifest, clusters []string, _ []health.Feedback) ([]workv1alpha1.AggregatedField, bool, error) {
	*k.asked = append(*k.asked, clusters...)
	return k.fields, k.ok, k.err
}

func (k answeringKind) ReportsAggregateStatusFailures() bool { return k.strict }

// TestAggregatedByWebhook: a webhook's answer adds its fields, replacing a declarative field of the same name,
// for the clusters that reported; no answer (Ignore) leaves the declarative fields alone. A failure under Fail
// is reported and shows no roll-up the webhook did not make: the manifest keeps the aggregated status last
// written for it (found by its identity, not its position), or none.
func TestAggregatedByWebhook(t *testing.T) {
	manifests, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(
		`{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"web","namespace":"default"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	rules := []workv1alpha1.InterpreterAggregation{{Feedback: "readyReplicas", Operation: workv1alpha1.AggregationSum}}
	reported := health.ManifestResult{Verdict: health.Verdict{State: health.Healthy}, Feedback: health.Feedback{"readyReplicas": integer(2)}}
	outcomes := []ClusterOutcome{
		outcome("c1", health.Healthy, "", true, reported),
		outcome("c2", health.Progressing, workv1alpha1.ReasonWorkNotCreated, false),
	}
	declared := workv1alpha1.AggregatedField{Name: "readyReplicas", Operation: workv1alpha1.AggregationSum, Clusters: 1, Value: ptr.To[int64](2)}
	answered := workv1alpha1.AggregatedField{Name: "readyReplicas", Operation: workv1alpha1.AggregationMax, Clusters: 1, Value: ptr.To[int64](9)}
	extra := workv1alpha1.AggregatedField{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 1, Counts: []workv1alpha1.ValueCount{{Value: "Healthy", Clusters: 1}}}
	written := workv1alpha1.AggregatedField{Name: "readyReplicas", Operation: workv1alpha1.AggregationMax, Clusters: 2, Value: ptr.To[int64](7)}
	// As last written: another manifest first, so the position differs; one of another kind with this name.
	previous := []workv1alpha1.ManifestSummary{
		{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", Aggregated: []workv1alpha1.AggregatedField{declared}},
		{Name: "web", Namespace: "default", Group: "argoproj.io", Kind: "Rollout", Aggregated: []workv1alpha1.AggregatedField{written}},
	}
	timedOut := errors.New("ResourceInterpreter rollouts: webhook AggregateStatus: timed out")
	cases := map[string]struct {
		kind         answeringKind
		previous     []workv1alpha1.ManifestSummary
		want         []workv1alpha1.AggregatedField
		wantFailures []AggregationFailure
		wantCounted  int
	}{
		"answered: replaces by name, adds the rest, sorted": {
			kind: answeringKind{fields: []workv1alpha1.AggregatedField{answered, extra}, ok: true, strict: true},
			want: []workv1alpha1.AggregatedField{extra, answered}, wantCounted: 1,
		},
		"no answer (Ignore)": {kind: answeringKind{}, want: []workv1alpha1.AggregatedField{declared}},
		"failed (Fail): the roll-up last written stays, and the failure is reported": {
			kind: answeringKind{err: timedOut, strict: true}, previous: previous,
			want:         []workv1alpha1.AggregatedField{written},
			wantFailures: []AggregationFailure{{Manifest: "Rollout.argoproj.io default/web", Err: timedOut}}, wantCounted: 1,
		},
		"failed (Fail) with none written before: none, not the declarative fields alone": {
			kind: answeringKind{err: timedOut, strict: true}, previous: previous[:1],
			wantFailures: []AggregationFailure{{Manifest: "Rollout.argoproj.io default/web", Err: timedOut}}, wantCounted: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var asked []string
			kind := tc.kind
			kind.rolloutKind, kind.asked = rolloutKind{rules: rules}, &asked
			kinds := health.NewInterpreters()
			kinds.Add(schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}, nil, kind)
			r := Aggregate(outcomes, manifests, kinds, tc.previous)
			if diff := cmp.Diff(tc.want, r.Manifests[0].Aggregated); diff != "" {
				t.Errorf("aggregated (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFailures, r.AggregationFailures, cmp.Comparer(errors.Is)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if r.WebhookAggregations != tc.wantCounted {
				t.Errorf("WebhookAggregations = %d, want %d", r.WebhookAggregations, tc.wantCounted)
			}
			if diff := cmp.Diff([]string{"c1"}, asked); diff != "" {
				t.Errorf("clusters asked about (-want +got), only those that reported:\n%s", diff)
			}
		})
	}
	// The roll-up kept is a copy: the status computed must not share memory with the one it was computed from.
	kinds := health.NewInterpreters()
	kinds.Add(schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}, nil, answeringKind{rolloutKind: rolloutKind{rules: rules}, err: timedOut, strict: true, asked: new([]string)})
	*Aggregate(outcomes, manifests, kinds, previous).Manifests[0].Aggregated[0].Value = 0
	if *previous[1].Aggregated[0].Value != 7 {
		t.Error("the aggregated status kept shares memory with the status it was kept from")
	}
}
