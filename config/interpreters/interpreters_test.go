package interpreters_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// verdict is what a case expects: the state, whether the workload finished, and the reason.
type verdict struct {
	State    health.State
	Finished bool
	Reason   string
}

var (
	healthy   = verdict{State: health.Healthy, Reason: "Healthy"}
	completed = func(reason string) verdict { return verdict{State: health.Healthy, Finished: true, Reason: reason} }
	failed    = func(reason string) verdict { return verdict{State: health.Degraded, Finished: true, Reason: reason} }
)

func progressing(reason string) verdict { return verdict{State: health.Progressing, Reason: reason} }
func degraded(reason string) verdict    { return verdict{State: health.Degraded, Reason: reason} }

// healthCase is one cluster's report of one manifest: the manifest as delivered (YAML), the cluster's share
// when the manifest is split, the feedback the agent reports (statusFeedback names to integers, strings and
// booleans), and the verdict.
type healthCase struct {
	manifest string
	share    *int64
	feedback map[string]any
	want     verdict
}

func share(n int64) *int64 { return &n }

// files are the interpreters of the library, by file name.
func files(t *testing.T) map[string]*workv1alpha1.ResourceInterpreter {
	t.Helper()
	paths, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*workv1alpha1.ResourceInterpreter{}
	for _, p := range paths {
		if p == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ri := &workv1alpha1.ResourceInterpreter{}
		if err := yaml.UnmarshalStrict(raw, ri); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[p] = ri
	}
	return out
}

func compile(t *testing.T, file string) *interpreter.Interpreter {
	t.Helper()
	ri, ok := files(t)[file]
	if !ok {
		t.Fatalf("%s is not in the library", file)
	}
	in, err := interpreter.Compile(ri, nil)
	if err != nil {
		t.Fatalf("%s does not compile: %v", file, err)
	}
	return in
}

// TestLibrary: every file is a cluster-scoped ResourceInterpreter named after its kind's resource, listed in
// kustomization.yaml, that compiles within the cost budget, and whose aggregations name its own feedback.
// Acceptance by the CRD's OpenAPI schema and CEL rules is left to the envtest suites, which apply the folder
// to a real API server.
func TestLibrary(t *testing.T) {
	raw, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	lib := files(t)
	var names []string
	for file := range lib {
		names = append(names, file)
	}
	slices.Sort(names)
	listed := slices.Sorted(slices.Values(k.Resources))
	if diff := cmp.Diff(names, listed); diff != "" {
		t.Errorf("kustomization.yaml does not list the folder's interpreters (-files +listed):\n%s", diff)
	}
	if len(lib) < 8 {
		t.Errorf("the library has %d interpreters, want at least 8", len(lib))
	}
	for file, ri := range lib {
		t.Run(file, func(t *testing.T) {
			if ri.APIVersion != workv1alpha1.GroupVersion.String() || ri.Kind != "ResourceInterpreter" {
				t.Errorf("%s is a %s %s", file, ri.APIVersion, ri.Kind)
			}
			if ri.Namespace != "" {
				t.Errorf("a ResourceInterpreter is cluster-scoped: namespace %q", ri.Namespace)
			}
			if want := strings.TrimSuffix(file, ".yaml"); ri.Name != want {
				t.Errorf("name %q, want %q (the file's name)", ri.Name, want)
			}
			if !strings.HasSuffix(ri.Name, "."+ri.Spec.Target.Group) {
				t.Errorf("name %q does not end with the target's group %q", ri.Name, ri.Spec.Target.Group)
			}
			in, err := interpreter.Compile(ri, nil)
			if err != nil {
				t.Fatalf("does not compile: %v", err)
			}
			feedback := map[string]bool{}
			for _, f := range ri.Spec.StatusFeedback {
				feedback[f.Name] = true
			}
			for _, a := range in.Aggregation() {
				if !feedback[a.Feedback] {
					t.Errorf("aggregation of %q, which is not a statusFeedback name", a.Feedback)
				}
			}
			if ri.Spec.Health == nil {
				t.Error("no health expression")
			}
		})
	}
}

func runHealth(t *testing.T, file string, cases map[string]healthCase) {
	t.Helper()
	in := compile(t, file)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, ok := in.Health(input(t, tc), feedback(t, tc.feedback))
			if !ok {
				t.Fatal("the interpreter has no opinion")
			}
			got := verdict{State: v.State, Finished: v.Finished, Reason: v.Reason}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nmessage: %s", diff, v.Message)
			}
			if v.State != health.Healthy && v.Message == "" {
				t.Errorf("a %s verdict without a message", v.State)
			}
		})
	}
}

func input(t *testing.T, tc healthCase) health.ManifestInput {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(tc.manifest))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}})
	if err != nil {
		t.Fatal(err)
	}
	return health.ManifestInput{
		Manifest: ms[0],
		Status: &workv1.ManifestCondition{Conditions: []metav1.Condition{
			{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestComplete"},
		}},
		Share: tc.share,
	}
}

// feedback is what the agent reports: integers, strings and booleans by statusFeedback name.
func feedback(t *testing.T, values map[string]any) health.Feedback {
	t.Helper()
	out := health.Feedback{}
	for name, v := range values {
		switch x := v.(type) {
		case int:
			n := int64(x)
			out[name] = workv1.FieldValue{Type: workv1.Integer, Integer: &n}
		case string:
			out[name] = workv1.FieldValue{Type: workv1.String, String: &x}
		case bool:
			out[name] = workv1.FieldValue{Type: workv1.Boolean, Boolean: &x}
		default:
			t.Fatalf("feedback %s is a %T: the agent reports integers, strings and booleans", name, v)
		}
	}
	return out
}

// with returns a copy of base with the given values set, and those named in drop removed.
func with(base map[string]any, set map[string]any, drop ...string) map[string]any {
	out := make(map[string]any, len(base)+len(set))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	for _, k := range drop {
		delete(out, k)
	}
	return out
}
