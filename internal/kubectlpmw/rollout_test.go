package kubectlpmw

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

// The rollout commands check their arguments and flags before they reach the hub, and fail as the others do.
func TestRolloutExitCodes(t *testing.T) {
	unreachable := unreachableKubeconfig(t)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := map[string]struct {
		args    []string
		want    int
		wantErr string
	}{
		"rollout alone":              {args: []string{"rollout"}, want: ExitUsage, wantErr: "kubectl pmw rollout needs a subcommand: status, history, undo, pause, resume, approve or retry"},
		"an unknown subcommand":      {args: []string{"rollout", "restart", "web"}, want: ExitUsage, wantErr: `unknown command "restart" for "kubectl pmw rollout"`},
		"history without a name":     {args: []string{"rollout", "history"}, want: ExitUsage, wantErr: "kubectl pmw rollout history needs NAME"},
		"history, a bad -o":          {args: []string{"rollout", "history", "web", "-o", "wide"}, want: ExitUsage, wantErr: `unknown output format "wide": use -o yaml|json`},
		"history, a negative number": {args: []string{"rollout", "history", "web", "--revision", "-1"}, want: ExitUsage, wantErr: "--revision -1: a revision is a number from 1"},
		"history, not a number":      {args: []string{"rollout", "history", "web", "--revision", "two"}, want: ExitUsage, wantErr: `invalid argument "two" for "--revision"`},
		"undo with two names":        {args: []string{"rollout", "undo", "a", "b"}, want: ExitUsage, wantErr: `kubectl pmw rollout undo takes NAME, got "a b"`},
		"undo, a negative number":    {args: []string{"rollout", "undo", "web", "--to-revision", "-2"}, want: ExitUsage, wantErr: "--to-revision -2: a revision is a number from 1"},
		"status, a negative timeout": {args: []string{"rollout", "status", "web", "--timeout", "-1s"}, want: ExitUsage, wantErr: "--timeout -1s: give a duration from 0"},
		"status, a bad --watch":      {args: []string{"rollout", "status", "web", "--watch=maybe"}, want: ExitUsage, wantErr: `invalid argument "maybe" for "-w, --watch"`},
		"pause without a name":       {args: []string{"rollout", "pause"}, want: ExitUsage, wantErr: "kubectl pmw rollout pause needs NAME"},
		"resume, an unknown flag":    {args: []string{"rollout", "resume", "web", "--all"}, want: ExitUsage, wantErr: "unknown flag: --all; see 'kubectl pmw rollout resume --help'"},
		"retry without kubeconfig":   {args: []string{"rollout", "retry", "web"}, want: ExitHub, wantErr: "no kubeconfig for the hub: KUBECONFIG is "},
		"status, hub unreachable": {args: []string{"rollout", "status", "web", "--kubeconfig", unreachable, "--request-timeout", "5s"}, want: ExitHub,
			wantErr: "cannot reach the hub at https://127.0.0.1:1"},
		"undo, hub unreachable": {args: []string{"rollout", "undo", "web", "--kubeconfig", unreachable, "--request-timeout", "5s"}, want: ExitHub,
			wantErr: "cannot reach the hub at https://127.0.0.1:1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.want {
				t.Errorf("exit code %d, want %d; stderr: %s", r.code, tc.want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want it empty", r.stdout)
			}
			if len(r.stderrLines) != 1 || !strings.HasPrefix(r.stderrLines[0], "Error: ") || !strings.Contains(r.stderrLines[0], tc.wantErr) {
				t.Errorf("stderr %q, want one line \"Error: ...%s...\"", r.stderr, tc.wantErr)
			}
		})
	}
}

// testRevision is the ControllerRevision the manager keeps for pmw's template, numbered n.
func testRevision(t *testing.T, pmw *workv1alpha1.PlacementManifestWork, n int64, annotations map[string]string) appsv1.ControllerRevision {
	t.Helper()
	data, err := revision.Data(pmw)
	if err != nil {
		t.Fatal(err)
	}
	return appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: revision.Name(pmw.Name, data), Namespace: pmw.Namespace, Annotations: annotations,
			CreationTimestamp: metav1.NewTime(time.Date(2025, 1, 2, 3, 4, int(n), 0, time.UTC)),
		},
		Data:     runtime.RawExtension{Raw: data},
		Revision: n,
	}
}

// templated is web in ns whose template is one ConfigMap with data v, changed further by change. The manifest's
// keys are sorted, as the API server stores them.
func templated(v string, change func(*workv1alpha1.PlacementManifestWork)) *workv1alpha1.PlacementManifestWork {
	p := &workv1alpha1.PlacementManifestWork{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "PlacementManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 3, UID: "uid-1", ResourceVersion: "42"},
	}
	p.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{
		Raw: []byte(`{"apiVersion":"v1","data":{"v":"` + v + `"},"kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}}`),
	}}}
	if change != nil {
		change(p)
	}
	return p
}

func TestBuildAndWriteHistory(t *testing.T) {
	one, two, three := templated("1", nil), templated("2", nil), templated("3", nil)
	revisions := []appsv1.ControllerRevision{
		testRevision(t, one, 1, map[string]string{workv1alpha1.AnnotationChangeCause: "first   cut"}),
		testRevision(t, two, 2, nil),
		testRevision(t, three, 3, nil),
	}
	pmw := templated("3", func(p *workv1alpha1.PlacementManifestWork) {
		p.Annotations = map[string]string{workv1alpha1.AnnotationChangeCause: "image 1.3"}
		p.Status.CurrentRevision = &workv1alpha1.RevisionReference{Revision: 3, Name: revisions[2].Name}
		p.Status.CompletedRevision = &workv1alpha1.RevisionReference{Revision: 1, Name: revisions[0].Name}
	})
	failed := &workv1alpha1.RevisionReference{Revision: 3, Name: revisions[2].Name}

	h := BuildHistory(pmw, failed, revisions)
	want := History{Name: "web", Namespace: "ns", Revisions: []HistoryItem{
		{Revision: 1, Name: revisions[0].Name, Created: revisions[0].CreationTimestamp, Completed: true, ChangeCause: "first   cut"},
		{Revision: 2, Name: revisions[1].Name, Created: revisions[1].CreationTimestamp},
		{Revision: 3, Name: revisions[2].Name, Created: revisions[2].CreationTimestamp, Current: true, Failed: true, ChangeCause: "image 1.3"},
	}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	var b bytes.Buffer
	if err := WriteHistory(&b, h); err != nil {
		t.Fatal(err)
	}
	wantText := "placementmanifestwork/web\n" +
		"REVISION  NAME            CREATED               STATUS          CHANGE-CAUSE\n" +
		"1         " + revisions[0].Name + "  2025-01-02T03:04:01Z  completed       first cut\n" +
		"2         " + revisions[1].Name + "  2025-01-02T03:04:02Z  -               <none>\n" +
		"3         " + revisions[2].Name + "  2025-01-02T03:04:03Z  current,failed  image 1.3\n"
	if diff := cmp.Diff(wantText, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	b.Reset()
	if err := WriteHistory(&b, BuildHistory(pmw, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if want := "placementmanifestwork/web\nREVISION  NAME  CREATED  STATUS  CHANGE-CAUSE\n(none)\n"; b.String() != want {
		t.Errorf("no revisions:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRevisionTemplate(t *testing.T) {
	cr := testRevision(t, templated("1", func(p *workv1alpha1.PlacementManifestWork) { p.Spec.PropagateDependencies = true }), 1, nil)
	got, err := RevisionTemplate(&cr)
	if err != nil {
		t.Fatal(err)
	}
	manifests := got["manifestWorkTemplate"].(map[string]any)["workload"].(map[string]any)["manifests"].([]any)
	if got["propagateDependencies"] != true || manifests[0].(map[string]any)["kind"] != "ConfigMap" {
		t.Errorf("template = %v", got)
	}
	if _, err := RevisionTemplate(&appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}); err == nil ||
		!strings.Contains(err.Error(), "ControllerRevision ns/x holds no data") {
		t.Errorf("empty data: %v", err)
	}
}

// unstructuredOf is p as the API server sends it, with extra fields of a newer CRD merged into its spec.
func unstructuredOf(t *testing.T, p *workv1alpha1.PlacementManifestWork, extraSpec map[string]any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	for k, v := range extraSpec {
		if err := unstructured.SetNestedField(u.Object, v, "spec", k); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func TestPlanUndo(t *testing.T) {
	split := []workv1alpha1.DistributionStrategy{{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
		Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}}
	overrides := []workv1alpha1.ClusterOverride{{Name: "eu", Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/data/v"}}}}
	one := templated("1", func(p *workv1alpha1.PlacementManifestWork) { p.Spec.DistributionStrategy = split })
	two := templated("2", nil)
	three := templated("3", func(p *workv1alpha1.PlacementManifestWork) {
		p.Spec.Overrides = overrides
		p.Spec.PropagateDependencies = true
	})
	revisions := []appsv1.ControllerRevision{
		testRevision(t, one, 1, map[string]string{workv1alpha1.AnnotationChangeCause: "the first"}),
		testRevision(t, two, 2, nil),
		testRevision(t, three, 3, nil),
	}
	// The live PMW is at revision 3, with fields outside the template and one a newer CRD has.
	live := templated("3", func(p *workv1alpha1.PlacementManifestWork) {
		p.Spec.Overrides = overrides
		p.Spec.PropagateDependencies = true
		p.Spec.PlacementRef = &workv1alpha1.LocalPlacementReference{Name: "prod"}
		p.Spec.RevisionHistoryLimit = new(int32)
		p.Annotations = map[string]string{workv1alpha1.AnnotationChangeCause: "the third", "keep": "me"}
	})

	cases := map[string]struct {
		to           int64
		wantRevision int64
		wantTemplate *workv1alpha1.PlacementManifestWork
		wantCause    string
		wantErr      string
	}{
		"the previous revision by default": {wantRevision: 2, wantTemplate: two},
		"revision 1, and its change cause": {to: 1, wantRevision: 1, wantTemplate: one, wantCause: "the first"},
		"the current revision":             {to: 3, wantErr: "placementmanifestwork/web is already at revision 3"},
		"a revision that does not exist":   {to: 7, wantErr: "placementmanifestwork/web has no revision 7; its revisions are 1, 2, 3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := unstructuredOf(t, live, map[string]any{"paused": true})
			before := in.DeepCopy()
			out, cr, err := PlanUndo(in, revisions, tc.to)
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("the live object changed (-before +after):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || ExitCode(err) != ExitUsage {
					t.Fatalf("error %v, want %q (exit 1)", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cr.Revision != tc.wantRevision {
				t.Errorf("revision %d, want %d", cr.Revision, tc.wantRevision)
			}
			got, err := toTyped(out)
			if err != nil {
				t.Fatal(err)
			}
			wantData, _ := revision.Data(tc.wantTemplate)
			gotData, _ := revision.Data(got)
			if diff := cmp.Diff(string(wantData), string(gotData)); diff != "" {
				t.Errorf("template (-want +got):\n%s", diff)
			}
			if got.Spec.PlacementRef == nil || got.Spec.PlacementRef.Name != "prod" || got.Spec.RevisionHistoryLimit == nil {
				t.Errorf("fields outside the template changed: %+v", got.Spec)
			}
			if p, _, _ := unstructured.NestedBool(out.Object, "spec", "paused"); !p {
				t.Error("spec.paused, which this plugin's type does not know of, was dropped")
			}
			wantAnnotations := map[string]string{"keep": "me"}
			if tc.wantCause != "" {
				wantAnnotations[workv1alpha1.AnnotationChangeCause] = tc.wantCause
			}
			if diff := cmp.Diff(wantAnnotations, out.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if out.GetResourceVersion() != "42" {
				t.Errorf("resourceVersion %q, want the live one for the optimistic lock", out.GetResourceVersion())
			}
		})
	}

	// A spec whose own template no revision records yet (the manager has not caught up): the newest is the
	// previous one.
	_, cr, err := PlanUndo(unstructuredOf(t, templated("4", nil), nil), revisions, 0)
	if err != nil || cr.Revision != 3 {
		t.Errorf("undo from an unrecorded template: revision %v, error %v; want 3", cr, err)
	}
	// Only the current revision: nothing to go back to.
	_, _, err = PlanUndo(unstructuredOf(t, two, nil), revisions[1:2], 0)
	if err == nil || err.Error() != "placementmanifestwork/web has no earlier revision to roll back to; its revisions are 2" {
		t.Errorf("undo with one revision: %v", err)
	}
}

func TestRolloutProgress(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: "says " + reason, ObservedGeneration: gen}
	}
	pmw := func(observed int64, total, available int32, conds ...metav1.Condition) *workv1alpha1.PlacementManifestWork {
		p := templated("1", nil)
		p.Status.ObservedGeneration = observed
		p.Status.Conditions = conds
		p.Status.PlacedManifestWorkSummary = workv1alpha1.PlacedManifestWorkSummary{Total: total, Available: available}
		p.Status.Rollout = &workv1alpha1.RolloutStatus{Updated: 1, Total: total, Succeeded: 1, CurrentGroup: "canary"}
		p.Status.CurrentRevision = &workv1alpha1.RevisionReference{Revision: 4, Name: "web-x"}
		return p
	}
	rollout := workv1alpha1.ConditionRolloutComplete
	cases := map[string]struct {
		pmw    *workv1alpha1.PlacementManifestWork
		paused bool
		want   Progress
	}{
		"an earlier generation observed": {pmw: pmw(2, 3, 3, cond(rollout, T, workv1alpha1.ReasonRolloutSucceeded, 2)),
			want: Progress{Message: "Waiting for the manager to observe generation 3 of placementmanifestwork/web (observed 2)..."}},
		"rolled out, every cluster available": {pmw: pmw(3, 3, 3, cond(rollout, T, workv1alpha1.ReasonRolloutSucceeded, 3)),
			want: Progress{Done: true, Message: "placementmanifestwork/web successfully rolled out (revision 4) to 3 clusters"}},
		"rolled out, some clusters not available yet": {pmw: pmw(3, 3, 2, cond(rollout, T, workv1alpha1.ReasonRolloutSucceeded, 3)),
			want: Progress{Message: "Waiting for the rollout of placementmanifestwork/web (revision 4) to finish: 2 of 3 clusters available..."}},
		"progressing": {pmw: pmw(3, 3, 1, cond(rollout, F, workv1alpha1.ReasonRolloutProgressing, 3)),
			want: Progress{Message: "Waiting for the rollout of placementmanifestwork/web (revision 4) to finish: 1 of 3 clusters updated, 1 succeeded, 0 failed, group canary..."}},
		"progressing, paused": {pmw: pmw(3, 3, 1, cond(rollout, F, workv1alpha1.ReasonRolloutProgressing, 3)), paused: true,
			want: Progress{Message: "Waiting for the rollout of placementmanifestwork/web (revision 4) to finish: 1 of 3 clusters updated, 1 succeeded, 0 failed, group canary; paused: kubectl pmw rollout resume web..."}},
		"waiting at a gate": {pmw: func() *workv1alpha1.PlacementManifestWork {
			p := pmw(3, 3, 1, cond(rollout, F, workv1alpha1.ReasonRolloutAwaitingApproval, 3))
			p.Status.Rollout.AwaitingApproval = "canary"
			return p
		}(),
			want: Progress{Message: "Waiting for the rollout of placementmanifestwork/web (revision 4) to finish: 1 of 3 clusters updated, 1 succeeded, 0 failed, group canary; waiting for approval at gate canary: kubectl pmw rollout approve web --gate canary..."}},
		"stopped by maxFailures, which also stalls it": {pmw: pmw(3, 3, 1, cond(rollout, F, workv1alpha1.ReasonRolloutMaxFailures, 3),
			cond(workv1alpha1.ConditionStalled, T, workv1alpha1.ReasonRolloutMaxFailures, 3)),
			want: Progress{Failed: true, Message: "the rollout of placementmanifestwork/web (revision 4) failed: RolloutMaxFailures: says RolloutMaxFailures"}},
		"rolled back": {pmw: pmw(3, 3, 3, cond(rollout, F, workv1alpha1.ReasonRolledBack, 3)),
			want: Progress{Failed: true, Message: "the rollout of placementmanifestwork/web (revision 4) failed: RolledBack: says RolledBack"}},
		"rolled back while paused: a failure is not a pause": {pmw: pmw(3, 3, 2, cond(rollout, F, workv1alpha1.ReasonRolledBack, 3),
			cond(workv1alpha1.ConditionStalled, T, workv1alpha1.ReasonRolledBack, 3)), paused: true,
			want: Progress{Failed: true, Message: "the rollout of placementmanifestwork/web (revision 4) failed: RolledBack: says RolledBack"}},
		"stalled": {pmw: pmw(3, 3, 3, cond(workv1alpha1.ConditionStalled, T, workv1alpha1.ReasonInvalidOverride, 3), cond(rollout, T, workv1alpha1.ReasonRolloutSucceeded, 3)),
			want: Progress{Failed: true, Message: "the rollout of placementmanifestwork/web cannot progress: InvalidOverride: says InvalidOverride"}},
		"a failure of an earlier generation": {pmw: pmw(3, 3, 1, cond(rollout, F, workv1alpha1.ReasonRolloutMaxFailures, 2)),
			want: Progress{Message: "Waiting for the manager to report the rollout of placementmanifestwork/web..."}},
		"no cluster decided, Ready": {pmw: pmw(3, 0, 0, cond(rollout, metav1.ConditionUnknown, workv1alpha1.ReasonNoClusters, 3),
			cond(workv1alpha1.ConditionReady, T, workv1alpha1.ReasonPlacementDecisionEmpty, 3)),
			want: Progress{Done: true, Message: "placementmanifestwork/web has no cluster to roll out to: says PlacementDecisionEmpty"}},
		"the Placement not decided yet": {pmw: pmw(3, 0, 0, cond(rollout, metav1.ConditionUnknown, workv1alpha1.ReasonPlacementNotDecided, 3)),
			want: Progress{Message: "Waiting for the rollout of placementmanifestwork/web: PlacementNotDecided: says PlacementNotDecided..."}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RolloutProgress(tc.pmw, tc.paused)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanRetry: retry names the failed revision, and refuses when none failed or when the manager already
// consumed a retry of it (status.retriedRevision), which it honours once per revision.
func TestPlanRetry(t *testing.T) {
	failed := func(failed, retried int64) *workv1alpha1.PlacementManifestWork {
		return templated("2", func(p *workv1alpha1.PlacementManifestWork) {
			if failed > 0 {
				p.Status.FailedRevision = &workv1alpha1.FailedRevision{Revision: failed, Name: "web-v2"}
			}
			p.Status.RetriedRevision = retried
		})
	}
	cases := map[string]struct {
		pmw     *workv1alpha1.PlacementManifestWork
		want    int64
		wantErr string
	}{
		"no failed revision": {pmw: failed(0, 0),
			wantErr: "nothing to retry: no failed revision (placementmanifestwork/web has no status.failedRevision)"},
		"no failed revision, an earlier one retried": {pmw: failed(0, 2),
			wantErr: "nothing to retry: no failed revision (placementmanifestwork/web has no status.failedRevision)"},
		"failed, never retried":          {pmw: failed(2, 0), want: 2},
		"failed, an earlier one retried": {pmw: failed(3, 2), want: 3},
		"failed again after its one retry": {pmw: failed(2, 2),
			wantErr: "revision 2 of placementmanifestwork/web failed again after its retry (status.retriedRevision), and the manager retries a revision once: change the spec (revert it in git) or go back with kubectl pmw rollout undo web"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PlanRetry(unstructuredOf(t, tc.pmw, nil))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				if code := ExitCode(err); code != ExitUsage {
					t.Errorf("exit code %d, want %d", code, ExitUsage)
				}
			}
			if got != tc.want || gotErr != tc.wantErr {
				t.Errorf("got %d, %q; want %d, %q", got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}

func TestRolloutPatches(t *testing.T) {
	cases := map[string]struct {
		got  []byte
		want string
	}{
		"pause":  {got: PausePatch(true), want: `{"spec":{"paused":true}}`},
		"resume": {got: PausePatch(false), want: `{"spec":{"paused":null}}`},
		"retry":  {got: RetryPatch(5), want: `{"metadata":{"annotations":{"work.open-cluster-management.io/retry-revision":"5"}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if string(tc.got) != tc.want {
				t.Errorf("%s, want %s", tc.got, tc.want)
			}
		})
	}
}
