package main

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want float64
	}{
		{"one", []float64{0.3}, 0.3},
		{"odd, unsorted", []float64{0.5, 0.1, 0.3}, 0.3},
		{"even: mean of the middle two", []float64{0.4, 0.1, 0.2, 0.3}, 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.in); got != tc.want {
				t.Fatalf("median(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// runRow is a contender's run with the given fan-out, roll-up (whole and agents' part) and churn times.
func runRow(contender string, run int, fanOut, rollUp, agents, churn float64) *row {
	return &row{Contender: contender, Kind: "clusters", N: 100, Jobs: 1, Works: 100, Run: run,
		FanOut: &step{Seconds: fanOut}, RollUp: &step{Seconds: rollUp, Agents: agents}, Churn: &step{Seconds: churn}}
}

func TestFindTakesMediansOfRuns(t *testing.T) {
	res := &results{Rows: []*row{
		runRow("manager", 1, 0.30, 0.50, 0.40, 0.20),
		runRow("manager", 2, 0.20, 0.60, 0.45, 0.40),
		runRow("manager", 3, 0.25, 0.70, 0.40, 0.10),
	}}
	m := res.find("manager", sizeKey{"clusters", 100, 1})
	if m.FanOut.Seconds != 0.25 || m.Churn.Seconds != 0.20 || m.RollUp.Seconds != 0.60 {
		t.Fatalf("medians: fan-out %v, churn %v, roll-up %v; want 0.25, 0.20, 0.60", m.FanOut.Seconds, m.Churn.Seconds, m.RollUp.Seconds)
	}
	// After the agents the runs took 0.10, 0.15 and 0.30 s: the median of those, not a difference of medians.
	if got := afterAgents(m.RollUp).Seconds; got < 0.1499 || got > 0.1501 {
		t.Fatalf("roll-up after the agents = %v, want 0.15", got)
	}
	if res.find("OCM MWRS", sizeKey{"clusters", 100, 1}) != nil {
		t.Fatal("a contender without rows has a row")
	}

	res.Rows = append(res.Rows, &row{Contender: "manager", Kind: "clusters", N: 100, Jobs: 1, Run: 4, FanOut: &step{Err: "timed out"}})
	if m := res.find("manager", sizeKey{"clusters", 100, 1}); m.FanOut.ok() {
		t.Fatalf("a failed run: median fan-out %v, want the failure", m.FanOut.Seconds)
	}
}

func TestRepeatsTable(t *testing.T) {
	res := &results{Rows: []*row{
		runRow("manager", 1, 0.30, 0.50, 0.40, 0.20), runRow("OCM MWRS", 1, 0.50, 0.55, 0.40, 0.10),
		runRow("manager", 2, 0.20, 0.60, 0.45, 0.40), runRow("OCM MWRS", 2, 0.40, 0.50, 0.45, 0.30),
		runRow("manager", 3, 0.25, 0.70, 0.40, 0.10), runRow("OCM MWRS", 3, 0.45, 0.60, 0.40, 0.20),
	}}
	got := res.repeatsTable()
	for _, want := range []string{
		"| N = 100 | fan-out | 0.30 0.20 0.25 | 0.50 0.40 0.45 | 0.56× | 3 of 3 |",
		"| N = 100 | churn | 0.20 0.40 0.10 | 0.10 0.30 0.20 | 1.00× | 1 of 3 |",
		"| N = 100 | roll-up (after the agents) | 0.10 0.15 0.30 | 0.15 0.05 0.20 | 1.00× | 1 of 3 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("repeats table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "update") {
		t.Errorf("a step no run has is listed:\n%s", got)
	}
	single := &results{Rows: []*row{runRow("manager", 0, 0.3, 0.5, 0.4, 0.2), runRow("OCM MWRS", 0, 0.5, 0.5, 0.4, 0.1)}}
	if got := single.repeatsTable(); got != "" {
		t.Fatalf("rows that ran once: repeats table %q, want none", got)
	}
}

func TestLimitVariantsShowRepeatedRowsOnce(t *testing.T) {
	limit := func(run int, fanOut, returned float64) *row {
		return &row{Contender: "limit-64", Kind: "clusters", N: 100, Jobs: 1, Run: run, FanOut: &step{Seconds: fanOut}, CreatesReturned: returned}
	}
	res := &results{Rows: []*row{
		limit(1, 0.30, 0.29), runRow("manager", 1, 0.20, 0.5, 0.4, 0.2),
		limit(2, 0.10, 0.09), runRow("manager", 2, 0.30, 0.5, 0.4, 0.2),
		limit(3, 0.20, 0.19), runRow("manager", 3, 0.40, 0.5, 0.4, 0.2),
	}}
	got := res.limitVariants()
	want := "| N = 100 | 64 in flight | 0.20 | 0.19 | 1.50× |"
	if !strings.Contains(got, want) || strings.Count(got, "| N = 100 |") != 1 {
		t.Fatalf("limit variants: want the one line %q, got:\n%s", want, got)
	}
}

// TestDeliveryTable: the roll-up beside the harness's watch is the median of each run's time after the watch saw
// the last report (0.05, 0.10 and 0.40 s), not a difference of medians; a contender whose watch time was not
// recorded has no row.
func TestDeliveryTable(t *testing.T) {
	res := &results{Rows: []*row{
		runRow("manager", 1, 0.30, 0.50, 0.40, 0.20), runRow("manager", 2, 0.20, 0.60, 0.45, 0.40),
		runRow("manager", 3, 0.25, 0.70, 0.40, 0.10), runRow("OCM MWRS", 1, 0.50, 0.55, 0.40, 0.10),
	}}
	for i, seen := range []float64{0.45, 0.50, 0.30} {
		res.Rows[i].RollUp.ReportsSeen = seen
	}
	got := res.deliveryTable()
	if want := "| N = 100 | manager | 0.40 | 0.45 | 0.60 | 0.10 |"; !strings.Contains(got, want) {
		t.Errorf("table\n%s\nwants the row %s", got, want)
	}
	if strings.Contains(got, "OCM MWRS") {
		t.Errorf("table\n%s\nhas a row for OCM's controller, whose watch time was not recorded", got)
	}
}
