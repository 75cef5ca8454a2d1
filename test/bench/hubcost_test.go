package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestParseEtcdDB(t *testing.T) {
	cases := map[string]struct {
		in   string
		want etcdDB
	}{
		"both, among other metrics": {
			in: "# HELP etcd_mvcc_db_total_size_in_bytes Total size of the underlying database physically allocated in bytes.\n" +
				"# TYPE etcd_mvcc_db_total_size_in_bytes gauge\n" +
				"etcd_mvcc_db_total_size_in_bytes 2.4576e+07\n" +
				"etcd_mvcc_db_total_size_in_use_in_bytes 1.2288e+07\n" +
				"etcd_mvcc_db_total_size_in_bytes_other 7\n" +
				`etcd_server_has_leader{a="b"} 1` + "\n",
			want: etcdDB{total: 24576000, inUse: 12288000},
		},
		"none": {in: "process_cpu_seconds_total 3\n", want: etcdDB{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseEtcdDB(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("parseEtcdDB = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestQuietest(t *testing.T) {
	at := func(sec float64, api, etcd float64) hubSample {
		return hubSample{At: time.Unix(1000, 0).Add(time.Duration(sec * float64(time.Second))), APIServer: procStats{CPU: api}, Etcd: procStats{CPU: etcd}}
	}
	cases := map[string]struct {
		in   []hubSample
		want hubRates
	}{
		"no window":                  {in: []hubSample{at(0, 1, 1)}, want: hubRates{}},
		"one window":                 {in: []hubSample{at(0, 1, 1), at(2, 1.5, 1.1)}, want: hubRates{APIServer: 0.25, Etcd: 0.05}},
		"busy first, quiet after":    {in: []hubSample{at(0, 1, 1), at(1, 1.25, 1.01), at(2, 1.26, 1.02), at(3, 1.5, 1.03)}, want: hubRates{APIServer: 0.01, Etcd: 0.01}},
		"a window of no time is not": {in: []hubSample{at(0, 1, 1), at(0, 1, 1), at(1, 1.5, 1)}, want: hubRates{APIServer: 0.5}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := quietest(tc.in)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Fatalf("quietest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupLabels(t *testing.T) {
	cases := map[string]struct {
		group   string
		want    client.MatchingLabels
		wantErr bool
	}{
		"manager":  {group: "pmw:bench.bench", want: client.MatchingLabels{workv1alpha1.LabelPlacementManifestWork: "bench.bench"}},
		"OCM":      {group: "mwrs:bench-ocm.bench", want: client.MatchingLabels{"work.open-cluster-management.io/manifestworkreplicaset": "bench-ocm.bench"}},
		"limit":    {group: "limit:plain-n100", want: client.MatchingLabels{labelLimit: "plain-n100"}},
		"no kind":  {group: "bench", wantErr: true},
		"unknown":  {group: "job:bench", wantErr: true},
		"no value": {group: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := groupLabels(tc.group)
			if (err != nil) != tc.wantErr {
				t.Fatalf("groupLabels(%q) error %v, want error %v", tc.group, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("groupLabels(%q) (-want +got):\n%s", tc.group, diff)
			}
		})
	}
}

func TestHubTables(t *testing.T) {
	withHub := func(x *row, h hubCost) *row {
		x.Hub = &h
		return x
	}
	end := &hubSample{
		APIServer: procStats{RSS: 300 << 20, HWM: 400 << 20},
		Etcd:      procStats{RSS: 100 << 20, HWM: 150 << 20},
		DBFile:    64 << 20, DBInUse: 3 << 19,
	}
	cases := map[string]struct {
		rows []*row
		want []string
		not  []string
	}{
		"no hub measured": {rows: []*row{runRow("manager", 0, 0.3, 0.5, 0.4, 0.2)}, not: []string{"Bytes", "end of each row"}},
		"per work, ×plain and the end of the row": {
			rows: []*row{
				withHub(limitRow(limitPlain, 0.1, 0.1), hubCost{FanOutAPIServerCPU: 0.5, FanOutEtcdCPU: 0.1, FanOutDBGrowth: 200000, WorkBytes: 1500, WorkBytesWithStatus: 3000,
					FanOutSeconds: 2, AtRest: hubRates{APIServer: 0.1},
					Start: &hubSample{DBInUse: 1 << 19}, End: end}),
				withHub(runRow("manager", 0, 0.3, 0.5, 0.4, 0.2), hubCost{FanOutAPIServerCPU: 1.2, FanOutEtcdCPU: 0.3, FanOutDBGrowth: 500000, WorkBytes: 4500, WorkBytesWithStatus: 9000}),
			},
			want: []string{
				"| N = 100 | limit plain | 1500 | 1.00× | 3000 | 2000 | 0.50 | 5.00 | 3.00 | 1.00 |",
				"| N = 100 | manager | 4500 | 3.00× | 9000 | 5000 | 1.20 | 12.00 | 12.00 | 3.00 |",
				"| N = 100 | limit plain | 300 | 400 | 100 | 150 | 64.0 | 1.5 | 1.0 |",
			},
			not: []string{"| N = 100 | manager | — |"},
		},
		"medians of runs, end of the first run": {
			rows: []*row{
				withHub(runRow("manager", 1, 0.3, 0.5, 0.4, 0.2), hubCost{FanOutAPIServerCPU: 1.0, WorkBytes: 4000, End: end}),
				withHub(runRow("manager", 2, 0.3, 0.5, 0.4, 0.2), hubCost{FanOutAPIServerCPU: 3.0, WorkBytes: 4000, End: &hubSample{}}),
				withHub(runRow("manager", 3, 0.3, 0.5, 0.4, 0.2), hubCost{FanOutAPIServerCPU: 2.0, WorkBytes: 4000, End: &hubSample{}}),
			},
			want: []string{"| N = 100 | manager | 4000 | — | — | — | 2.00 | 20.00 | 20.00 | 0.00 |", "| N = 100 | manager | 300 | 400 | 100 | 150 | 64.0 | 1.5 | — |"},
			not:  []string{"| N = 100 | manager | — | — |"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := (&results{Rows: tc.rows}).hubTables()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("has %q:\n%s", w, got)
				}
			}
		})
	}
}
