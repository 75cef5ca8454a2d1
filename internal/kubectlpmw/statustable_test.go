package kubectlpmw

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

const (
	hashA = "aaaaaaaa11111111"
	hashB = "bbbbbbbb22222222"
	hashC = "cccccccc33333333"
)

// testPMW is web in ns at generation 2, its status describing generation observed, with the given conditions
// (type=status) and unhealthy clusters.
func testPMW(observed int64, conds map[string]metav1.ConditionStatus, unhealthy ...workv1alpha1.ClusterHealth) *workv1alpha1.PlacementManifestWork {
	p := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 2, UID: "uid-1"}}
	p.Status.ObservedGeneration = observed
	p.Status.Placement = "web"
	for t, s := range conds {
		p.Status.Conditions = append(p.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: "R" + t, ObservedGeneration: observed})
	}
	p.Status.UnhealthyClusters = unhealthy
	return p
}

// testWork is the work of testPMW in cluster at generation 1 with the template hash and conditions
// (type=status) reported for generation 1, and shares of the web Deployment's replicas when share >= 0.
func testWork(cluster, hash string, share int, conds map[string]metav1.ConditionStatus) workv1.ManifestWork {
	owner := types.NamespacedName{Namespace: "ns", Name: "web"}
	w := workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{
		Name: manifestwork.WorkName(owner), Namespace: cluster, Generation: 1,
		Annotations: map[string]string{workv1alpha1.AnnotationTemplateHash: hash},
	}}
	if share >= 0 {
		w.Annotations[workv1alpha1.AnnotationShares] = `{"Deployment.apps default/web .spec.replicas":` + strconv.Itoa(share) + `}`
	}
	for t, s := range conds {
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: "Test", Message: "agent says " + t, ObservedGeneration: 1})
	}
	return w
}

var (
	T          = metav1.ConditionTrue
	F          = metav1.ConditionFalse
	applied    = map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T}
	notApplied = map[string]metav1.ConditionStatus{workv1.WorkApplied: F}
	ready      = map[string]metav1.ConditionStatus{workv1alpha1.ConditionReady: T, workv1alpha1.ConditionRolloutComplete: T}
	notReady   = map[string]metav1.ConditionStatus{workv1alpha1.ConditionReady: F, workv1alpha1.ConditionRolloutComplete: F}
	webShare   = func(n int32) map[string]int32 {
		return map[string]int32{"Deployment.apps default/web .spec.replicas": n}
	}
)

func TestBuildStatusClusters(t *testing.T) {
	workName := manifestwork.WorkName(types.NamespacedName{Namespace: "ns", Name: "web"})
	cases := map[string]struct {
		in         StatusInput
		want       []ClusterRow
		wantHashes []string
		wantReady  bool
		wantNotes  int
	}{
		"every cluster available, rollout complete": {
			in: StatusInput{
				PMW:        testPMW(2, ready),
				Works:      []workv1.ManifestWork{testWork("c1", hashA, 2, applied), testWork("c2", hashA, 1, applied)},
				WorksKnown: true, Decided: []string{"c2", "c1"}, DecidedKnown: true,
			},
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, Shares: webShare(2), TemplateHash: hashA, Template: TemplateCurrent},
				{Cluster: "c2", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, Shares: webShare(1), TemplateHash: hashA, Template: TemplateCurrent},
			},
			wantHashes: []string{hashA},
			wantReady:  true,
		},
		"a degraded cluster: the manager's reason, the other clusters' hash is current": {
			in: StatusInput{
				PMW:        testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed, Message: "not applied: quota"}),
				Works:      []workv1.ManifestWork{testWork("c1", hashA, -1, applied), testWork("c2", hashA, -1, notApplied)},
				WorksKnown: true, Decided: []string{"c1", "c2"}, DecidedKnown: true,
			},
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, TemplateHash: hashA, Template: TemplateCurrent},
				{Cluster: "c2", Work: workName, Decided: true, Applied: "False", Available: "Unknown", Health: HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed, Message: "not applied: quota", HealthSource: SourceManager, TemplateHash: hashA, Template: TemplateCurrent},
			},
			wantHashes: []string{hashA},
		},
		"a rollout on its way, without overrides: any hash but the current one is outdated": {
			in: StatusInput{
				PMW: testPMW(2, notReady,
					workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterProgressing, Reason: workv1alpha1.ReasonOutdatedTemplate},
					workv1alpha1.ClusterHealth{Cluster: "c3", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed}),
				Works:      []workv1.ManifestWork{testWork("c1", hashA, -1, applied), testWork("c2", hashB, -1, applied), testWork("c3", hashB, -1, notApplied)},
				WorksKnown: true, Decided: []string{"c1", "c2", "c3"}, DecidedKnown: true,
			},
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, TemplateHash: hashA, Template: TemplateCurrent},
				{Cluster: "c2", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthProgressing, Reason: workv1alpha1.ReasonOutdatedTemplate, HealthSource: SourceManager, TemplateHash: hashB, Template: TemplateOutdated},
				{Cluster: "c3", Work: workName, Decided: true, Applied: "False", Available: "Unknown", Health: HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed, HealthSource: SourceManager, TemplateHash: hashB, Template: TemplateOutdated},
			},
			wantHashes: []string{hashA},
		},
		"with overrides, a hash not seen current is unknown unless the manager says outdated": {
			in: func() StatusInput {
				p := testPMW(2, notReady,
					workv1alpha1.ClusterHealth{Cluster: "c3", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed},
					workv1alpha1.ClusterHealth{Cluster: "c4", State: workv1alpha1.ClusterProgressing, Reason: workv1alpha1.ReasonOutdatedTemplate})
				p.Spec.Overrides = []workv1alpha1.ClusterOverride{{Name: "region"}}
				return StatusInput{
					PMW: p,
					Works: []workv1.ManifestWork{testWork("c1", hashA, -1, applied), testWork("c2", hashB, -1, applied),
						testWork("c3", hashC, -1, notApplied), testWork("c4", hashC, -1, applied)},
					WorksKnown: true, Decided: []string{"c1", "c2", "c3", "c4"}, DecidedKnown: true,
				}
			}(),
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, TemplateHash: hashA, Template: TemplateCurrent},
				{Cluster: "c2", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceManager, TemplateHash: hashB, Template: TemplateCurrent},
				{Cluster: "c3", Work: workName, Decided: true, Applied: "False", Available: "Unknown", Health: HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed, HealthSource: SourceManager, TemplateHash: hashC, Template: TemplateUnknown},
				{Cluster: "c4", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthProgressing, Reason: workv1alpha1.ReasonOutdatedTemplate, HealthSource: SourceManager, TemplateHash: hashC, Template: TemplateOutdated},
			},
			wantHashes: []string{hashA, hashB},
		},
		"more unhealthy clusters than the status names: the unnamed are judged from their works": {
			in: func() StatusInput {
				p := testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c1", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed})
				p.Status.UnhealthyClustersNotListed = 1
				return StatusInput{
					PMW:        p,
					Works:      []workv1.ManifestWork{testWork("c1", hashA, -1, notApplied), testWork("c2", hashA, -1, notApplied)},
					WorksKnown: true, Decided: []string{"c1", "c2"}, DecidedKnown: true,
				}
			}(),
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "False", Available: "Unknown", Health: HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed, HealthSource: SourceManager, TemplateHash: hashA, Template: TemplateUnknown},
				{Cluster: "c2", Work: workName, Decided: true, Applied: "False", Available: "Unknown", Health: HealthDegraded, Reason: workv1alpha1.ReasonApplyFailed, Message: "not applied: agent says Applied", HealthSource: SourceWork, TemplateHash: hashA, Template: TemplateUnknown},
			},
		},
		"a status of an earlier generation: health from the works, templates unknown": {
			in: StatusInput{
				PMW:        testPMW(1, ready, workv1alpha1.ClusterHealth{Cluster: "c1", State: workv1alpha1.ClusterDegraded, Reason: "Old"}),
				Works:      []workv1.ManifestWork{testWork("c1", hashA, -1, applied)},
				WorksKnown: true, Decided: []string{"c1"}, DecidedKnown: true,
			},
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceWork, TemplateHash: hashA, Template: TemplateUnknown},
			},
			wantNotes: 1,
		},
		"a leaving cluster and a decided one without a work yet": {
			in: func() StatusInput {
				p := testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterProgressing, Reason: workv1alpha1.ReasonWorkNotCreated})
				p.Status.LeavingClusters = 1
				return StatusInput{
					PMW:        p,
					Works:      []workv1.ManifestWork{testWork("c1", hashA, -1, applied)},
					WorksKnown: true, Decided: []string{"c2"}, DecidedKnown: true,
				}
			}(),
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: false, Applied: "True", Available: "True", Health: HealthAvailable, HealthSource: SourceWork, TemplateHash: hashA, Template: TemplateUnknown},
				{Cluster: "c2", Decided: true, Health: HealthProgressing, Reason: workv1alpha1.ReasonWorkNotCreated, HealthSource: SourceManager},
			},
		},
		"works not readable: the decided clusters and what the status says": {
			in: StatusInput{
				PMW:     testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonWorkDegraded}),
				Decided: []string{"c1", "c2"}, DecidedKnown: true,
			},
			want: []ClusterRow{
				{Cluster: "c1", Work: workName, Decided: true, Health: HealthAvailable, HealthSource: SourceManager},
				{Cluster: "c2", Work: workName, Decided: true, Health: HealthDegraded, Reason: workv1alpha1.ReasonWorkDegraded, HealthSource: SourceManager},
			},
			wantNotes: 1,
		},
		"nothing readable but the status, with a truncated list": {
			in: func() StatusInput {
				p := testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonWorkDegraded})
				p.Status.UnhealthyClustersNotListed = 3
				return StatusInput{PMW: p}
			}(),
			want: []ClusterRow{
				{Cluster: "c2", Work: workName, Decided: true, Health: HealthDegraded, Reason: workv1alpha1.ReasonWorkDegraded, HealthSource: SourceManager},
			},
			wantNotes: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := BuildStatus(tc.in)
			if diff := cmp.Diff(tc.want, got.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHashes, got.TemplateHashes); diff != "" {
				t.Errorf("current template hashes (-want +got):\n%s", diff)
			}
			if got.Ready != tc.wantReady {
				t.Errorf("ready = %v, want %v", got.Ready, tc.wantReady)
			}
			if len(got.Notes) != tc.wantNotes {
				t.Errorf("notes = %q, want %d", got.Notes, tc.wantNotes)
			}
		})
	}
}

func TestConditionRowsOrderAndJudgement(t *testing.T) {
	p := testPMW(2, nil)
	p.Status.Conditions = []metav1.Condition{
		{Type: "Zeta", Status: T, ObservedGeneration: 2},
		{Type: workv1alpha1.ConditionDistributed, Status: F, Reason: workv1alpha1.ReasonReplicasUnplaced, ObservedGeneration: 2},
		{Type: workv1alpha1.ConditionStalled, Status: F, ObservedGeneration: 2},
		{Type: workv1alpha1.ConditionReady, Status: T, ObservedGeneration: 1},
		{Type: "Alpha", Status: F, ObservedGeneration: 2},
	}
	want := []ConditionRow{
		{Type: workv1alpha1.ConditionReady, Status: T, Stale: true, Good: true},
		{Type: workv1alpha1.ConditionStalled, Status: F, Good: true},
		{Type: workv1alpha1.ConditionDistributed, Status: F, Reason: workv1alpha1.ReasonReplicasUnplaced},
		{Type: "Alpha", Status: F},
		{Type: "Zeta", Status: T, Good: true},
	}
	if diff := cmp.Diff(want, conditionRows(p)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if IsReady(p) {
		t.Error("a Ready condition of an earlier generation is not ready")
	}
}

func TestShareText(t *testing.T) {
	cases := map[string]struct {
		shares map[string]int32
		want   string
	}{
		"none":          {},
		"replicas":      {shares: webShare(3), want: "Deployment/web=3"},
		"another field": {shares: map[string]int32{"Job.batch ns/run .spec.parallelism": 2}, want: "Job/run:.spec.parallelism=2"},
		"sorted, core kind without a namespace": {
			shares: map[string]int32{"Widget.example.com w .spec.size": 1, "Deployment.apps default/api .spec.replicas": 4},
			want:   "Deployment/api=4,Widget/w:.spec.size=1",
		},
		"a key of another form is printed as it is": {shares: map[string]int32{"odd": 1}, want: "odd=1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := shareText(tc.shares); got != tc.want {
				t.Errorf("shareText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWriteStatus(t *testing.T) {
	p := testPMW(2, notReady, workv1alpha1.ClusterHealth{Cluster: "c2", State: workv1alpha1.ClusterDegraded, Reason: workv1alpha1.ReasonApplyFailed, Message: "not applied:\nquota"})
	p.Status.PlacedManifestWorkSummary = workv1alpha1.PlacedManifestWorkSummary{Total: 2, Applied: 1, Available: 1, Degraded: 1}
	p.Status.Splits = []workv1alpha1.SplitStatus{{Kind: "Deployment", Namespace: "default", Name: "web", FieldPath: ".spec.replicas", Total: 3, Placed: 3}}
	p.Status.CurrentRevision = &workv1alpha1.RevisionReference{Revision: 3, Name: "web-a"}
	p.Status.CompletedRevision = &workv1alpha1.RevisionReference{Revision: 2, Name: "web-b"}
	r := BuildStatus(StatusInput{
		PMW:        p,
		Works:      []workv1.ManifestWork{testWork("c1", hashA, 2, applied), testWork("c2", hashB, 1, notApplied)},
		WorksKnown: true, Decided: []string{"c1", "c2"}, DecidedKnown: true,
		// The works' revisions, found by their template hashes: hashA is revision 3's; hashB has none (pruned), and is outdated.
		Revisions: []appsv1.ControllerRevision{
			{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Labels: map[string]string{workv1alpha1.LabelTemplateHash: hashA}}, Revision: 3},
			{ObjectMeta: metav1.ObjectMeta{Name: "web-b", Labels: map[string]string{workv1alpha1.LabelTemplateHash: hashC}}, Revision: 2},
		},
	})
	work := manifestwork.WorkName(types.NamespacedName{Namespace: "ns", Name: "web"})
	pad := strings.Repeat(" ", len(work)-len("WORK"))

	var out bytes.Buffer
	if err := WriteStatus(&out, r, false, false); err != nil {
		t.Fatal(err)
	}
	want := `PlacementManifestWork ns/web: not Ready (generation 2, observed 2), placement web
Clusters: 2 decided, 1 available, 0 progressing, 1 degraded, 1 applied
Revision: current 3 (web-a), completed 2 (web-b)
Current template: aaaaaaaa
Split Deployment default/web .spec.replicas: total 3, placed 3, unplaced 0

CONDITION        STATUS  REASON            MESSAGE
Ready            False   RReady
RolloutComplete  False   RRolloutComplete

CLUSTER  WORK` + pad + `  APPLIED  HEALTH     REASON       SHARES            TEMPLATE           REVISION
c1       ` + work + `  True     Available               Deployment/web=2  aaaaaaaa current   3
c2       ` + work + `  False    Degraded   ApplyFailed  Deployment/web=1  bbbbbbbb outdated  -
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	out.Reset()
	if err := WriteStatus(&out, r, true, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "c2       "+work+"  yes      False    Unknown    Degraded   ApplyFailed  manager  Deployment/web=1  bbbbbbbb outdated  -         not applied: quota\n") {
		t.Errorf("wide table lacks c2's row with its message on one line:\n%s", out.String())
	}

	// Colours wrap the cells after padding: without the escape codes the text is the plain table.
	out.Reset()
	if err := WriteStatus(&out, r, false, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\x1b[31mDegraded\x1b[0m") {
		t.Errorf("no red Degraded in:\n%q", out.String())
	}
	stripped := strings.NewReplacer("\x1b[31m", "", "\x1b[32m", "", "\x1b[33m", "", "\x1b[0m", "").Replace(out.String())
	if diff := cmp.Diff(want, stripped); diff != "" {
		t.Errorf("coloured table without its colours (-plain +coloured):\n%s", diff)
	}
}
