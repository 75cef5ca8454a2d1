package health

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

func TestMarked(t *testing.T) {
	strategy := func(kind workv1.UpdateStrategyType, namespace string) []workv1.ManifestConfigOption {
		return []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: namespace, Name: "*"},
			UpdateStrategy:     &workv1.UpdateStrategy{Type: kind},
		}}
	}
	readyRule := []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "default", Name: "cfg"},
		ConditionRules:     []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CelConditionExpressionsType, CelExpressions: []string{"true"}}},
	}}
	cases := map[string]struct {
		manifest string
		user     []workv1.ManifestConfigOption
		want     bool
	}{
		"a kind judged by feedback":                         {manifest: deploymentJSON, want: true},
		"a LoadBalancer Service":                            {manifest: lbServiceJSON, want: true},
		"a ClusterIP Service: judged by Applied, Available": {manifest: serviceJSON},
		"a ConfigMap":                                       {manifest: configMapJSON},
		"a ConfigMap the user judges by a condition rule":   {manifest: configMapJSON, user: readyRule, want: true},
		"server-side apply updates it":                      {manifest: deploymentJSON, user: strategy(workv1.UpdateStrategyTypeServerSideApply, "*"), want: true},
		"CreateOnly never updates it":                       {manifest: deploymentJSON, user: strategy(workv1.UpdateStrategyTypeCreateOnly, "*")},
		"ReadOnly never writes it":                          {manifest: deploymentJSON, user: strategy(workv1.UpdateStrategyTypeReadOnly, "def*")},
		"a CreateOnly entry for another namespace":          {manifest: deploymentJSON, user: strategy(workv1.UpdateStrategyTypeCreateOnly, "other"), want: true},
		// The agent applies ignored fields again whenever the manifest changes: a marker would make every
		// template change one of this manifest.
		"server-side apply with ignored fields": {manifest: deploymentJSON, user: []workv1.ManifestConfigOption{{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "*", Name: "*"},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply, ServerSideApply: &workv1.ServerSideApplyConfig{
				IgnoreFields: []workv1.IgnoreField{{Condition: workv1.IgnoreFieldsConditionOnSpokeChange, JSONPaths: []string{".spec.replicas"}}},
			}},
		}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := parse(t, tc.manifest)
			if got := (*Interpreters)(nil).Marked(m, tc.user); got != tc.want {
				t.Errorf("Marked = %v, want %v", got, tc.want)
			}
			// The agent is asked for the marker exactly when the manager stamps it.
			asked := false
			for _, c := range ManifestConfigs([]template.Manifest{parse(t, tc.manifest)}, tc.user) {
				for _, r := range c.FeedbackRules {
					for _, p := range r.JsonPaths {
						asked = asked || p.Name == FeedbackPrefix+TemplateHash
					}
				}
			}
			if asked != tc.want {
				t.Errorf("manifestConfigs ask for the marker: %v, want %v", asked, tc.want)
			}
		})
	}
}

// TestTemplateHashPathReadsMark: the marker's path, evaluated as OCM's agent evaluates feedback paths
// (Kubernetes JSONPath, missing keys allowed), finds what Mark stamps, and Mark leaves the manifest it copies and
// the user's own annotations as they were.
func TestTemplateHashPathReadsMark(t *testing.T) {
	obj := map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "web", "annotations": map[string]any{"team": "a"}}}
	marked := Mark(obj, "abc")
	j := jsonpath.New("marker").AllowMissingKeys(true)
	if err := j.Parse(fmt.Sprintf("{%s}", templateHashPath.Path)); err != nil {
		t.Fatal(err)
	}
	res, err := j.FindResults(marked)
	if err != nil || len(res) != 1 || len(res[0]) != 1 {
		t.Fatalf("FindResults = %v, %v", res, err)
	}
	if got := res[0][0].Interface(); got != "abc" {
		t.Errorf("the path reads %v, want abc", got)
	}
	want := map[string]any{"team": "a", workv1alpha1.AnnotationTemplateHash: "abc"}
	if diff := cmp.Diff(want, marked["metadata"].(map[string]any)["annotations"]); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"team": "a"}, obj["metadata"].(map[string]any)["annotations"]); diff != "" {
		t.Errorf("Mark changed the manifest it copies (-want +got):\n%s", diff)
	}
	if got := Mark(map[string]any{"kind": "ConfigMap"}, "h")["metadata"]; !cmp.Equal(got, map[string]any{"annotations": map[string]any{workv1alpha1.AnnotationTemplateHash: "h"}}) {
		t.Errorf("a manifest without metadata: %v", got)
	}
}

// TestStaleFeedback: a report read before the agent applied the work's template (its marker is another
// template's) says nothing about this template, however healthy it looks; a report with the work's marker, or
// with none at all (an object delivered before markers were stamped), is judged as it is.
func TestStaleFeedback(t *testing.T) {
	T := metav1.ConditionTrue
	ready := map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3}
	with := func(values map[string]any, marker string) map[string]any {
		out := map[string]any{TemplateHash: marker}
		for k, v := range values {
			out[k] = v
		}
		return out
	}
	cases := map[string]struct {
		manifest string
		status   *workv1.ManifestCondition
		rules    []string
		work     string
		want     Verdict
	}{
		"the work's marker": {manifest: deploymentJSON, status: status(T, with(ready, "new")), work: "new", want: healthy()},
		"another template's marker": {manifest: deploymentJSON, status: status(T, with(ready, "old")), work: "new",
			want: progressing(ReasonStaleFeedback, "Deployment.apps default/web: the agent's last report of it was read before it applied this template")},
		"no marker reported":      {manifest: deploymentJSON, status: status(T, ready), work: "new", want: healthy()},
		"no template hash known":  {manifest: deploymentJSON, status: status(T, with(ready, "old")), want: healthy()},
		"a condition rule, stale": {manifest: configMapJSON, rules: []string{"Ready"}, status: withCondition(status(T, map[string]any{TemplateHash: "old"}), "Ready", T), work: "new", want: progressing(ReasonStaleFeedback, "ConfigMap default/cfg: the agent's last report of it was read before it applied this template")},
		"a manifest the agent reports Complete: it applies it no more": {manifest: jobJSON,
			status: withCondition(status(T, map[string]any{TemplateHash: "old", Complete: "True", Succeeded: 1}), workv1.ManifestComplete, T), work: "new",
			want: Verdict{State: Healthy, Finished: true}},
		"a failed apply says so first": {manifest: deploymentJSON, status: status(metav1.ConditionFalse, with(ready, "old")), work: "new",
			want: degraded(ReasonApplyFailed, "Deployment.apps default/web: not applied: apply failed: admission webhook denied")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: tc.status, ConditionRules: tc.rules, WorkTemplateHash: tc.work})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMarkedRetained: a kind whose interpreter retains fields is applied server-side with them ignored, so it
// is not marked (see Marked).
func TestMarkedRetained(t *testing.T) {
	set := NewInterpreters()
	set.Add(schema.GroupKind{Group: "example.io", Kind: "Widget"}, nil, stubKind{paths: []workv1.JsonPath{{Name: "phase", Path: ".status.phase"}}, retain: []string{".spec.workers"}})
	if set.Marked(parse(t, widgetJSON), nil) {
		t.Error("a kind with retained fields is marked")
	}
}

// TestFeedbackLeavesTheMarkerOut: the marker is for StaleReport; interpreters and the status's roll-ups see the
// object's values only.
func TestFeedbackLeavesTheMarkerOut(t *testing.T) {
	values := status(metav1.ConditionTrue, map[string]any{Phase: "Running", TemplateHash: "h"}).StatusFeedbacks.Values
	if diff := cmp.Diff([]string{Phase}, sortedNames(FeedbackOf(values))); diff != "" {
		t.Errorf("FeedbackOf (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{Phase}, sortedNames(own(values))); diff != "" {
		t.Errorf("own (-want +got):\n%s", diff)
	}
}

func sortedNames(f Feedback) []string {
	out := make([]string, 0, len(f))
	for k := range f {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestClusterReadsTheWorksTemplateHash: Cluster judges each manifest's marker against the template hash its
// work carries, so a cluster whose agent reported before applying the work's template is not healthy.
func TestClusterReadsTheWorksTemplateHash(t *testing.T) {
	T := metav1.ConditionTrue
	ready := map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, TemplateHash: "old"}
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 2, Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: "new"}}}
	w.Status.Conditions = []metav1.Condition{
		{Type: workv1.WorkApplied, Status: T, ObservedGeneration: 2},
		{Type: workv1.WorkAvailable, Status: T, ObservedGeneration: 2},
	}
	mc := status(T, ready)
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{*mc}
	got := Cluster(ClusterInput{Work: w, Manifests: Inputs([]template.Manifest{parse(t, deploymentJSON)}, nil)})
	if got.State != Progressing || got.Reason != workv1alpha1.ReasonManifestProgressing {
		t.Errorf("Cluster = %+v, want Progressing (%s)", got.Verdict, workv1alpha1.ReasonManifestProgressing)
	}
	w.Annotations[workv1alpha1.AnnotationTemplateHash] = "old"
	if got := Cluster(ClusterInput{Work: w, Manifests: Inputs([]template.Manifest{parse(t, deploymentJSON)}, nil)}); got.State != Healthy {
		t.Errorf("with the work's own marker: Cluster = %+v, want Healthy", got.Verdict)
	}
}
