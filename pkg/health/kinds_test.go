package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// stubKind is a user's interpreter as health sees it: fixed answers.
type stubKind struct {
	name    string
	paths   []workv1.JsonPath
	verdict *Verdict
	retain  []string
}

func (s stubKind) Name() string                                       { return s.name }
func (s stubKind) ReplicaPaths() []string                             { return []string{".spec.workers"} }
func (s stubKind) FeedbackPaths(template.Manifest) []workv1.JsonPath  { return s.paths }
func (s stubKind) Aggregation() []workv1alpha1.InterpreterAggregation { return nil }
func (s stubKind) Retain() []string                                   { return s.retain }
func (s stubKind) Health(_ ManifestInput, f Feedback) (Verdict, bool) {
	if s.verdict == nil {
		return Verdict{}, false
	}
	v := *s.verdict
	v.Message = f.Text("phase")
	return v, true
}

func TestInterpretersFor(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	widget := schema.GroupKind{Group: "example.io", Kind: "Widget"}
	set := NewInterpreters()
	set.Add(widget, []string{"v1"}, stubKind{name: "widget-v1"})
	set.Add(widget, nil, stubKind{name: "widget-any"})
	set.Add(deployment, nil, stubKind{name: "my-deployments"})
	cases := map[string]struct {
		set  *Interpreters
		gvk  schema.GroupVersionKind
		want string // the interpreter's name, "" for none
	}{
		"built-in kind, no set":            {gvk: deployment.WithVersion("v1"), want: "built-in"},
		"unknown kind, no set":             {gvk: widget.WithVersion("v1"), want: ""},
		"a user's interpreter replaces it": {set: set, gvk: deployment.WithVersion("v1"), want: "my-deployments"},
		"the version's interpreter":        {set: set, gvk: widget.WithVersion("v1"), want: "widget-v1"},
		"another version: any version's":   {set: set, gvk: widget.WithVersion("v2"), want: "widget-any"},
		"built-in kinds stay in a set":     {set: set, gvk: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, want: "built-in"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if k := tc.set.For(tc.gvk); k != nil {
				got = k.Name()
			}
			if got != tc.want {
				t.Errorf("For(%s) = %q, want %q", tc.gvk, got, tc.want)
			}
		})
	}
}

// TestUserInterpreterHealth: a user's interpreter judges its kind once the agent reported it applied, from the
// manager's own feedback (prefix stripped); with no opinion, condition rules and Available decide, as for any
// kind; a share of 0 asks nothing of the cluster whatever it says.
func TestUserInterpreterHealth(t *testing.T) {
	T := metav1.ConditionTrue
	degradedVerdict := Verdict{State: Degraded, Reason: "Broken"}
	zero := int64(0)
	cases := map[string]struct {
		kind  Interpreter
		st    *workv1.ManifestCondition
		share *int64
		want  Verdict
	}{
		"judged by the interpreter": {kind: stubKind{verdict: &degradedVerdict}, st: status(T, map[string]any{"phase": "Broken"}),
			want: Verdict{State: Degraded, Reason: "Broken", Message: "Broken"}},
		"the user's own value of that name is not ours": {kind: stubKind{verdict: &degradedVerdict}, st: status(T, map[string]any{"user:phase": "Mine"}),
			want: Verdict{State: Degraded, Reason: "Broken"}},
		"no opinion: applied and available":   {kind: stubKind{}, st: status(T, nil), want: Verdict{State: Healthy}},
		"not reported: the interpreter waits": {kind: stubKind{verdict: &degradedVerdict}, want: Verdict{State: Progressing, Reason: ReasonNotReported, Message: "Widget.example.io default/w: not reported by the agent yet"}},
		"a share of 0 asks nothing":           {kind: stubKind{verdict: &degradedVerdict}, st: status(T, nil), share: &zero, want: Verdict{State: Healthy}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, widgetJSON), Status: tc.st, Share: tc.share, Kind: tc.kind})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFinished: the kinds that run to an end say so, successful or not.
func TestFinished(t *testing.T) {
	T := metav1.ConditionTrue
	cases := map[string]struct {
		manifest string
		values   map[string]any
		want     Verdict
	}{
		"job complete":  {manifest: jobJSON, values: map[string]any{Complete: "True"}, want: Verdict{State: Healthy, Finished: true}},
		"job failed":    {manifest: jobJSON, values: map[string]any{Failed: 6, FailedCondition: "True"}, want: Verdict{State: Degraded, Reason: ReasonJobFailed, Message: "Job.batch default/crunch: failed (6 failed pods)", Finished: true}},
		"job running":   {manifest: jobJSON, values: map[string]any{Active: 1}, want: Verdict{State: Progressing, Reason: ReasonJobRunning, Message: "Job.batch default/crunch: running (1 active, 0 succeeded)"}},
		"pod succeeded": {manifest: podJSON, values: map[string]any{Phase: "Succeeded"}, want: Verdict{State: Healthy, Finished: true}},
		"pod failed":    {manifest: podJSON, values: map[string]any{Phase: "Failed"}, want: Verdict{State: Degraded, Reason: ReasonPodFailed, Message: "Pod default/p: the pod failed", Finished: true}},
		"deployment":    {manifest: deploymentJSON, values: map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3}, want: Verdict{State: Healthy}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: status(T, tc.values)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInterpretersManifestConfigs: a user's interpreter's feedback reaches the agent under the manager's
// prefix, and its retained fields become a server-side apply that leaves them to the cluster, unless the user
// chose an update strategy for the resource.
func TestInterpretersManifestConfigs(t *testing.T) {
	widget := schema.GroupKind{Group: "example.io", Kind: "Widget"}
	set := NewInterpreters()
	set.Add(widget, nil, stubKind{paths: []workv1.JsonPath{{Name: "phase", Path: ".status.phase"}}, retain: []string{".spec.workers"}})
	id := workv1.ResourceIdentifier{Group: "example.io", Resource: "widgets", Namespace: "default", Name: "w"}
	feedback := []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: FeedbackPrefix + "phase", Path: ".status.phase"}}}}
	retained := &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply, ServerSideApply: &workv1.ServerSideApplyConfig{
		IgnoreFields: []workv1.IgnoreField{{Condition: workv1.IgnoreFieldsConditionOnSpokeChange, JSONPaths: []string{".spec.workers"}}},
	}}
	users := &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}
	cases := map[string]struct {
		user []workv1.ManifestConfigOption
		want []workv1.ManifestConfigOption
	}{
		"feedback and retained fields": {
			// No template marker: the fields it retains make it unmarked (see Marked).
			want: []workv1.ManifestConfigOption{{ResourceIdentifier: id, FeedbackRules: feedback, UpdateStrategy: retained}},
		},
		// CreateOnly: the agent never updates the object, so a template marker would never change.
		"the user's update strategy wins": {
			user: []workv1.ManifestConfigOption{{ResourceIdentifier: workv1.ResourceIdentifier{Group: "example.io", Resource: "widgets", Namespace: "*", Name: "*"}, UpdateStrategy: users}},
			want: []workv1.ManifestConfigOption{
				{ResourceIdentifier: workv1.ResourceIdentifier{Group: "example.io", Resource: "widgets", Namespace: "*", Name: "*"}, UpdateStrategy: users},
				{ResourceIdentifier: id, FeedbackRules: feedback},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := set.ManifestConfigs([]template.Manifest{parse(t, widgetJSON)}, tc.user)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ManifestConfigs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDelivered: an interpreter sees the manifest as delivered, with the cluster's shares, and the template's
// manifest is left as it is.
func TestDelivered(t *testing.T) {
	m := parse(t, `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"r"},"spec":{"head":2,"workers":9}}`)
	in := ManifestInput{Manifest: m, Fields: map[string]int32{".spec.head": 1, ".spec.workers": 4}}
	got := in.Delivered()["spec"]
	if diff := cmp.Diff(map[string]any{"head": int64(1), "workers": int64(4)}, got); diff != "" {
		t.Errorf("delivered spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"head": int64(2), "workers": int64(9)}, m.Object.Object["spec"]); diff != "" {
		t.Errorf("the template's manifest changed (-want +got):\n%s", diff)
	}
}
