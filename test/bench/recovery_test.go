package main

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestPercentile(t *testing.T) {
	ten := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	cases := map[string]struct {
		in   []float64
		p    float64
		want float64
	}{
		"one value is every percentile": {[]float64{0.4}, 50, 0.4},
		"p50 of ten: the fifth":         {ten, 50, 5},
		"p90 of ten: the ninth":         {ten, 90, 9},
		"p91 of ten: the tenth":         {ten, 91, 10},
		"max":                           {ten, 100, 10},
		"p50 of two: the lower":         {[]float64{2, 1}, 50, 1},
		"p90 of 100 jobs: the 90th":     {seq(100), 90, 90},
		"tiny p: the smallest":          {ten, 0.1, 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := percentile(tc.in, tc.p); got != tc.want {
				t.Fatalf("percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
			}
		})
	}
	if !math.IsNaN(percentile(nil, 50)) {
		t.Fatal("percentile of nothing is not NaN")
	}
	if in := []float64{3, 1, 2}; percentile(in, 50) != 2 || in[0] != 3 {
		t.Fatalf("percentile sorted its input: %v", in)
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(n - i)
	}
	return out
}

func TestParseMany(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []jobsOf
		wantErr bool
	}{
		"empty":             {in: ""},
		"zero":              {in: "0"},
		"one (the default)": {in: "500x20", want: []jobsOf{{500, 20}}},
		"the issue's rows":  {in: "10x5000, 2500x20", want: []jobsOf{{10, 5000}, {2500, 20}}},
		"same clusters":     {in: "500x20,2500x20", want: []jobsOf{{500, 20}, {2500, 20}}},
		"twice":             {in: "10x5,10x5", wantErr: true},
		"no x":              {in: "100", wantErr: true},
		"zero jobs":         {in: "0x5", wantErr: true},
		"empty item":        {in: "10x5,", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseMany(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseMany(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(jobsOf{})); diff != "" {
				t.Fatalf("parseMany(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseManagerMetrics(t *testing.T) {
	const text = `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
controller_runtime_reconcile_total{controller="placementmanifestwork",result="success"} 18
controller_runtime_reconcile_total{controller="placementmanifestwork",result="requeue_after"} 2
controller_runtime_reconcile_total{controller="placementmanifestwork",result="error"} 1
controller_runtime_reconcile_total{controller="resourceinterpreter",result="success"} 40
controller_runtime_reconcile_time_seconds_sum{controller="placementmanifestwork"} 2.5
controller_runtime_reconcile_time_seconds_sum{controller="resourceinterpreter"} 7
controller_runtime_active_workers{controller="placementmanifestwork"} 0
controller_runtime_active_workers{controller="resourceinterpreter"} 3
workqueue_depth{controller="placementmanifestwork",name="placementmanifestwork"} 0
workqueue_depth{controller="resourceinterpreter",name="resourceinterpreter"} 5
leader_election_master_status{name="placement-manifestwork.work.open-cluster-management.io"} 1
`
	cases := map[string]struct {
		text        string
		want        managerMetrics
		converged20 bool
	}{
		"idle leader, ours only": {text: text, want: managerMetrics{reconciles: 21, reconcileSeconds: 2.5, leader: true}, converged20: true},
		"standby": {
			text: strings.Replace(text, "open-cluster-management.io\"} 1", "open-cluster-management.io\"} 0", 1),
			want: managerMetrics{reconciles: 21, reconcileSeconds: 2.5}, converged20: true,
		},
		"queue not empty": {
			text: strings.Replace(text, `name="placementmanifestwork"} 0`, `name="placementmanifestwork"} 4`, 1),
			want: managerMetrics{reconciles: 21, reconcileSeconds: 2.5, depth: 4, leader: true},
		},
		"a reconcile running": {
			text: strings.Replace(text, `controller_runtime_active_workers{controller="placementmanifestwork"} 0`, `controller_runtime_active_workers{controller="placementmanifestwork"} 1`, 1),
			want: managerMetrics{reconciles: 21, reconcileSeconds: 2.5, active: 1, leader: true},
		},
		"nothing yet": {text: "", want: managerMetrics{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := parseManagerMetrics(tc.text)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(managerMetrics{})); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if got.converged(20) != tc.converged20 || got.converged(22) {
				t.Fatalf("converged(20) = %v, want %v; converged(22) = %v, want false", got.converged(20), tc.converged20, got.converged(22))
			}
		})
	}
}

func TestCompareStatuses(t *testing.T) {
	cond := func(status metav1.ConditionStatus) workv1alpha1.PlacementManifestWorkStatus {
		return workv1alpha1.PlacementManifestWorkStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{{Type: "Ready", Status: status, Reason: "Available"}},
			PlacedManifestWorkSummary: workv1alpha1.PlacedManifestWorkSummary{Total: 5, Available: 5}}
	}
	before := map[string]pmwStatus{"a": {"10", cond(metav1.ConditionTrue)}, "b": {"11", cond(metav1.ConditionTrue)}, "c": {"12", cond(metav1.ConditionTrue)}}
	cases := map[string]struct {
		after         map[string]pmwStatus
		wantUnchanged int
		wantChanged   []string // prefixes, in order
	}{
		"all the same": {after: map[string]pmwStatus{"a": before["a"], "b": before["b"], "c": before["c"]}, wantUnchanged: 3},
		"a status differs": {
			after:         map[string]pmwStatus{"a": before["a"], "b": {"11", cond(metav1.ConditionFalse)}, "c": before["c"]},
			wantUnchanged: 2, wantChanged: []string{"b: resourceVersion 11 -> 11; status"},
		},
		"written the same (resourceVersion only)": {
			after:         map[string]pmwStatus{"a": {"20", cond(metav1.ConditionTrue)}, "b": before["b"], "c": before["c"]},
			wantUnchanged: 2, wantChanged: []string{"a: resourceVersion 10 -> 20"},
		},
		"gone and new": {
			after:         map[string]pmwStatus{"a": before["a"], "b": before["b"], "d": before["c"]},
			wantUnchanged: 2, wantChanged: []string{"c: gone", "d: new"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			unchanged, changed := compareStatuses(before, tc.after)
			if unchanged != tc.wantUnchanged || len(changed) != len(tc.wantChanged) {
				t.Fatalf("unchanged %d, changed %q; want %d and %d changed", unchanged, changed, tc.wantUnchanged, len(tc.wantChanged))
			}
			for i, p := range tc.wantChanged {
				if !strings.HasPrefix(changed[i], p) {
					t.Errorf("changed[%d] = %q, want it to start with %q", i, changed[i], p)
				}
			}
		})
	}
}

func TestSplitWrites(t *testing.T) {
	got := tally{ByWrite: map[string]int{
		"create manifestworks": 2, "patch manifestworks": 3, "delete manifestworks": 1, "update manifestworks/status": 1,
		"update placementmanifestworks/status": 4, "patch placementmanifestworks": 5,
		"update leases": 7, "create events": 1,
	}}
	works, status, other := splitWrites(got)
	if works != 7 || status != 4 || other != 5 {
		t.Fatalf("splitWrites = %d works, %d status, %d other PMW; want 7, 4, 5", works, status, other)
	}
}

func TestRestartAndRolloutTables(t *testing.T) {
	clean := &restartStep{Seconds: 0.37, Started: 0.31, Reconciles: 2, ReconcilesWindow: 2, CPU: 0.4, PMWs: 1, Unchanged: 1, WindowSeconds: 10.4}
	handover := &restartStep{Seconds: 17.73, Started: 17.5, Reconciles: 2, ReconcilesWindow: 3, CPU: 1.1, PMWs: 1, Unchanged: 0, WindowSeconds: 27.7,
		Writes:             tally{ByWrite: map[string]int{"update leases": 4, "create events": 1, "patch manifestworks": 1}},
		ManifestWorkWrites: 1, WriteEntries: []string{"12:00:00.000 patch manifestworks cluster-00001/x -> 200"},
		Changed: []string{"bench: resourceVersion 1 -> 2"}}
	res := &results{Rows: []*row{
		{Contender: "manager", Kind: "clusters", N: 100, Jobs: 1, recovery: recovery{Restart: clean, Handover: handover}},
		{Contender: "manager", Kind: "clusters", N: 1000, Jobs: 1, recovery: recovery{Restart: &restartStep{Err: "not converged after 3m0s: ...\nlog"}}},
		{Contender: "manager", Kind: "concurrent", N: 20, Jobs: 10, Update: &step{Seconds: 1}, recovery: recovery{Rollout: &rollout{PatchesReturned: 0.2, Seconds: seq(10)}}},
		{Contender: "OCM MWRS", Kind: "concurrent", N: 20, Jobs: 10, Update: &step{Seconds: 2}, recovery: recovery{Rollout: &rollout{PatchesReturned: 0.3, Seconds: []float64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}}}},
		{Contender: "OCM MWRS", Kind: "concurrent", N: 50, Jobs: 2, Update: &step{Err: "timed out"}, recovery: recovery{Rollout: &rollout{}}},
		// The limit's update of the same works is one time, the main table's "limit update", not a rollout per job.
		{Contender: "limit", Kind: "concurrent", N: 20, Jobs: 10, Update: &step{Seconds: 0.8}},
	}}
	got := res.recoveryTables()
	for _, want := range []string{
		"| N = 100 | restart | 0.37 | 0.31 | 2 (2) | 0.4 | 0 | 0 | 0 | 0 | 1 of 1 | 10.4 |",
		"| N = 100 | leader hand-over | 17.73 | 17.50 | 2 (3) | 1.1 | 1 | 0 | 0 | create events: 1, update leases: 4 | 0 of 1 | 27.7 |",
		"| N = 1000 | restart | failed: not converged after 3m0s: ... |",
		"N = 100, leader hand-over:\n\n```\n12:00:00.000 patch manifestworks cluster-00001/x -> 200\nbench: resourceVersion 1 -> 2\n```",
		"| 10 PMWs × 20, concurrent rollout | manager | 0.20 | 5.00 | 9.00 | 10.00 | 0.50× | 0.50× | 0.50× |",
		"| 10 PMWs × 20, concurrent rollout | OCM MWRS | 0.30 | 10.00 | 18.00 | 20.00 | — | — | — |",
		"| 2 PMWs × 50, concurrent rollout | OCM MWRS | failed |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tables lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| limit |") {
		t.Errorf("the limit is listed as a rollout:\n%s", got)
	}
	if strings.Contains(got, "N = 100, restart:") {
		t.Errorf("a clean restart has findings:\n%s", got)
	}
	if (&results{Rows: []*row{runRow("manager", 0, 0.3, 0.5, 0.4, 0.2)}}).recoveryTables() != "" {
		t.Error("a run without restarts or rollouts has their tables")
	}
}
