package budget

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestLimit(t *testing.T) {
	cases := map[string]struct {
		total   int32
		max     *intstr.IntOrString
		want    int32
		wantErr bool
	}{
		"no budget":                          {total: 10, want: Unlimited},
		"a number":                           {total: 10, max: ptr(intstr.FromInt32(2)), want: 2},
		"zero":                               {total: 10, max: ptr(intstr.FromInt32(0)), want: 0},
		"a number above the total":           {total: 10, max: ptr(intstr.FromInt32(50)), want: 50},
		"a percentage":                       {total: 10, max: ptr(intstr.FromString("20%")), want: 2},
		"a percentage rounds down":           {total: 10, max: ptr(intstr.FromString("29%")), want: 2},
		"a percentage below one replica":     {total: 3, max: ptr(intstr.FromString("30%")), want: 0},
		"0%":                                 {total: 10, max: ptr(intstr.FromString("0%")), want: 0},
		"100%":                               {total: 7, max: ptr(intstr.FromString("100%")), want: 7},
		"a percentage of nothing":            {total: 0, max: ptr(intstr.FromString("50%")), want: 0},
		"a negative total counts as nothing": {total: -4, max: ptr(intstr.FromString("50%")), want: 0},
		"a huge percentage is clamped":       {total: 1 << 30, max: ptr(intstr.FromString("1000%")), want: 1<<31 - 1},
		"negative":                           {total: 10, max: ptr(intstr.FromInt32(-1)), wantErr: true},
		"a negative percentage":              {total: 10, max: ptr(intstr.FromString("-10%")), wantErr: true},
		"not a percentage":                   {total: 10, max: ptr(intstr.FromString("two")), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Limit(tc.total, tc.max)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want an error: %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("Limit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	// One cluster of ten holds 6 of 10 replicas: more than a budget of 2.
	skewed := Workload{Total: 10, Available: map[string]int32{"big": 6, "c1": 1, "c2": 1, "c3": 1, "c4": 1}}
	skewedDown := Workload{Total: 10, Available: map[string]int32{"big": 6, "c1": 0, "c2": 1, "c3": 1, "c4": 1}}
	five := Workload{Total: 10, Available: map[string]int32{"a": 2, "b": 2, "c": 2, "d": 2, "e": 2}}
	roll := func(c string) Action { return Action{Cluster: c, Kind: RolloutStep} }
	remove := func(c string) Action { return Action{Cluster: c, Kind: Removal} }
	decrease := func(c string, shares map[int]int32) Action {
		return Action{Cluster: c, Kind: ShareDecrease, NewShares: shares}
	}
	ok := Verdict{Admitted: true}
	progress := Verdict{Admitted: true, Progress: true}
	no := func(after, total, limit int32) Verdict {
		return Verdict{Reason: fmt.Sprintf("would make %d of %d replicas of workload 0 unavailable, maxUnavailableReplicas is %d", after, total, limit)}
	}
	cases := map[string]struct {
		workloads []Workload
		limits    []int32
		actions   []Action
		want      []Verdict
		wantNow   []int32
	}{
		"no budget: everything runs": {
			workloads: []Workload{skewedDown}, limits: []int32{Unlimited},
			actions: []Action{roll("big"), roll("c2"), remove("c3")},
			want:    []Verdict{ok, ok, ok}, wantNow: []int32{1},
		},
		"no limit given for the workload: no budget": {
			workloads: []Workload{skewedDown},
			actions:   []Action{roll("big"), roll("c2")},
			want:      []Verdict{ok, ok}, wantNow: []int32{1},
		},
		"no actions": {workloads: []Workload{five}, limits: []int32{2}, want: []Verdict{}, wantNow: []int32{0}},
		"skewed: the big cluster goes alone by the progress rule": {
			workloads: []Workload{skewed}, limits: []int32{2},
			actions: []Action{roll("big"), roll("c1"), roll("c2")},
			want:    []Verdict{progress, no(7, 10, 2), no(7, 10, 2)}, wantNow: []int32{0},
		},
		"skewed: the small clusters first use the budget, the big one waits": {
			workloads: []Workload{skewed}, limits: []int32{2},
			actions: []Action{roll("c1"), roll("big"), roll("c2"), roll("c3")},
			want:    []Verdict{ok, no(7, 10, 2), ok, no(3, 10, 2)}, wantNow: []int32{0},
		},
		"skewed: a replica down, no progress rule for the big cluster": {
			workloads: []Workload{skewedDown}, limits: []int32{2},
			actions: []Action{roll("big"), roll("c2"), roll("c3")},
			want:    []Verdict{no(7, 10, 2), ok, no(3, 10, 2)}, wantNow: []int32{1},
		},
		"skewed: no progress rule for a removal or a share decrease, they wait for replicas elsewhere": {
			workloads: []Workload{skewed}, limits: []int32{2},
			actions: []Action{remove("big"), decrease("big", map[int]int32{0: 1}), roll("c1")},
			want:    []Verdict{no(6, 10, 2), no(5, 10, 2), ok}, wantNow: []int32{0},
		},
		"several small clusters until the budget is used": {
			workloads: []Workload{five}, limits: []int32{5},
			actions: []Action{roll("a"), roll("b"), roll("c"), roll("d")},
			want:    []Verdict{ok, ok, no(6, 10, 5), no(6, 10, 5)}, wantNow: []int32{0},
		},
		"a cluster with nothing available puts nothing at risk": {
			workloads: []Workload{five}, limits: []int32{4},
			actions: []Action{roll("a"), roll("b"), roll("c"), roll("new")},
			want:    []Verdict{ok, ok, no(6, 10, 4), ok}, wantNow: []int32{0},
		},
		"budget 0: one cluster at a time by the progress rule": {
			workloads: []Workload{five}, limits: []int32{0},
			actions: []Action{roll("a"), roll("b")},
			want:    []Verdict{progress, no(4, 10, 0)}, wantNow: []int32{0},
		},
		"budget 0 and a replica down: nothing": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 2, "b": 2, "c": 2, "d": 2, "e": 1}}}, limits: []int32{0},
			actions: []Action{roll("a"), roll("b")},
			want:    []Verdict{no(3, 10, 0), no(3, 10, 0)}, wantNow: []int32{1},
		},
		"share decrease: only the available replicas above the new share": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 6, "b": 4}}}, limits: []int32{2},
			actions: []Action{decrease("a", map[int]int32{0: 4}), decrease("b", map[int]int32{0: 3})},
			want:    []Verdict{ok, no(3, 10, 2)}, wantNow: []int32{0},
		},
		"share decrease to at least what is available: nothing at risk": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 3, "b": 4}}}, limits: []int32{0},
			actions: []Action{decrease("a", map[int]int32{0: 5}), decrease("b", map[int]int32{0: 4})},
			want:    []Verdict{ok, ok}, wantNow: []int32{3},
		},
		"share decrease of another workload: this one untouched": {
			workloads: []Workload{{Total: 4, Available: map[string]int32{"a": 4}}}, limits: []int32{0},
			actions: []Action{decrease("a", map[int]int32{1: 0}), decrease("a", nil)},
			want:    []Verdict{ok, ok}, wantNow: []int32{0},
		},
		"removal: all its available replicas": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 3, "b": 3, "c": 4}}}, limits: []int32{3},
			actions: []Action{remove("a"), remove("b")},
			want:    []Verdict{ok, no(6, 10, 3)}, wantNow: []int32{0},
		},
		"removal of a leaving cluster whose replicas run elsewhere already: the surplus absorbs it": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"leaving": 5, "a": 5, "b": 5}}}, limits: []int32{1},
			actions: []Action{remove("leaving"), roll("a")},
			want:    []Verdict{ok, no(5, 10, 1)}, wantNow: []int32{0},
		},
		"already over budget: nothing at risk runs, the rest waits, no progress rule": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 3, "b": 4, "broken": 0}}}, limits: []int32{2},
			actions: []Action{roll("a"), roll("broken"), remove("b")},
			want:    []Verdict{no(6, 10, 2), ok, no(7, 10, 2)}, wantNow: []int32{3},
		},
		"several workloads: an action must fit all": {
			workloads: []Workload{
				{Total: 10, Available: map[string]int32{"a": 4, "b": 4, "d": 2}},
				{Name: "Deployment.apps default/worker", Total: 4, Available: map[string]int32{"a": 2, "b": 1, "c": 1}},
			},
			limits:  []int32{4, 1},
			actions: []Action{roll("c"), roll("a"), roll("d"), roll("b")},
			want: []Verdict{
				ok,
				{Reason: "would make 3 of 4 replicas of Deployment.apps default/worker unavailable, maxUnavailableReplicas is 1"},
				ok,
				no(6, 10, 4),
			},
			wantNow: []int32{0, 0},
		},
		"several workloads: the progress rule needs all of them available": {
			workloads: []Workload{
				{Total: 10, Available: map[string]int32{"a": 5, "b": 5}},
				{Total: 4, Available: map[string]int32{"a": 2, "b": 1}},
			},
			limits:  []int32{2, 1},
			actions: []Action{roll("b")},
			want:    []Verdict{no(5, 10, 2)}, wantNow: []int32{0, 1},
		},
		"several workloads: one without a budget does not stop the progress rule": {
			workloads: []Workload{
				{Total: 10, Available: map[string]int32{"a": 5, "b": 5}},
				{Total: 4, Available: map[string]int32{"a": 2, "b": 1}},
			},
			limits:  []int32{2, Unlimited},
			actions: []Action{roll("b")},
			want:    []Verdict{progress}, wantNow: []int32{0, 1},
		},
		"one cluster in two actions is at risk once: the larger first": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 3, "b": 7}}}, limits: []int32{3},
			actions: []Action{roll("a"), decrease("a", map[int]int32{0: 1}), remove("a")},
			want:    []Verdict{ok, ok, ok}, wantNow: []int32{0},
		},
		"one cluster in two actions is at risk once: the larger second adds the difference": {
			workloads: []Workload{{Total: 10, Available: map[string]int32{"a": 4, "b": 6}}}, limits: []int32{3},
			actions: []Action{decrease("a", map[int]int32{0: 2}), roll("b"), roll("a")},
			want:    []Verdict{ok, no(8, 10, 3), no(4, 10, 3)}, wantNow: []int32{0},
		},
		"negative counts count as nothing": {
			workloads: []Workload{{Total: 3, Available: map[string]int32{"a": -5, "b": 3}}}, limits: []int32{0},
			actions: []Action{roll("a"), decrease("b", map[int]int32{0: -2})},
			want:    []Verdict{ok, no(3, 3, 0)}, wantNow: []int32{0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Admit(tc.workloads, tc.limits, tc.actions)
			if diff := cmp.Diff(Decision{Verdicts: tc.want, Unavailable: tc.wantNow}, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
