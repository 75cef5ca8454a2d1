package main

import (
	"reflect"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestMergeAndPoints(t *testing.T) {
	fan := func(c string, n int, s float64) row {
		return row{Contender: c, Kind: "clusters", N: n, FanOut: &step{Seconds: s}}
	}
	first := results{Date: "2026-11-24T12:45:40Z", CPU: "AMD EPYC", Cores: 2, Rows: []row{
		fan("manager", 100, 0.2), fan("manager", 1000, 2), fan("OCM MWRS", 1000, 18),
		{Contender: "manager", Kind: "many", N: 50, FanOut: &step{Seconds: 3}},
	}}
	second := results{Date: "2026-11-24T13:18:18Z", CPU: "AMD EPYC", Cores: 2, Rows: []row{
		fan("manager", 1000, 1), fan("manager", 1000, 5), fan("manager", 1000, 3), fan("manager", 5000, 13),
		{Contender: "OCM MWRS", Kind: "clusters", N: 5000, FanOut: &step{Seconds: 600, Err: "timed out"}},
	}}
	third := results{Date: "2026-11-25T09:00:00Z", CPU: "Intel Xeon", Cores: 8, Rows: []row{fan("OCM MWRS", 100, 0.4)}}
	tests := []struct {
		name      string
		runs      []results
		contender string
		want      plotter.XYs
		machines  []string
		dates     []string
	}{
		{"one run, single-PMW rows only", []results{first}, "manager",
			plotter.XYs{{X: 100, Y: 0.2}, {X: 1000, Y: 2}}, []string{"AMD EPYC, 2 cores"}, []string{"2026-11-24"}},
		{"later run wins, its repeats at their median", []results{first, second}, "manager",
			plotter.XYs{{X: 100, Y: 0.2}, {X: 1000, Y: 3}, {X: 5000, Y: 13}}, []string{"AMD EPYC, 2 cores"}, []string{"2026-11-24"}},
		{"order decides", []results{second, first}, "manager",
			plotter.XYs{{X: 100, Y: 0.2}, {X: 1000, Y: 2}, {X: 5000, Y: 13}}, []string{"AMD EPYC, 2 cores"}, []string{"2026-11-24"}},
		{"a failed step is left out, machines and dates listed", []results{first, second, third}, "OCM MWRS",
			plotter.XYs{{X: 100, Y: 0.4}, {X: 1000, Y: 18}}, []string{"AMD EPYC, 2 cores", "Intel Xeon, 8 cores"}, []string{"2026-11-24", "2026-11-25"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := merge(tt.runs)
			if got := m.points(tt.contender, fanOutStep); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("points = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(m.machines, tt.machines) || !reflect.DeepEqual(m.dates, tt.dates) {
				t.Errorf("machines, dates = %v, %v, want %v, %v", m.machines, m.dates, tt.machines, tt.dates)
			}
		})
	}
}
