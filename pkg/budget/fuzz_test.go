package budget

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fuzzClusters are the clusters of fuzz inputs; the last one carries no work, so it has nothing available.
var fuzzClusters = []string{"a", "b", "c", "d", "e", "f", "none"}

// fuzzInput decodes fuzzer arguments: 1 to 3 workloads, a total (byte % 64) and a limit (byte % 32, 255 for
// no budget) each, an available count per workload and cluster (byte % 16, 255 for a negative report), and
// actions of three bytes: cluster, kind and workload of a share decrease (kind % 3, (b >> 2) % (workloads+1):
// the last one means every workload), new share (byte % 16, 255 for negative).
func fuzzInput(nw uint8, totals, limitBytes, avail, acts []byte) ([]Workload, []int32, []Action) {
	at := func(b []byte, i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	n := 1 + int(nw%3)
	workloads := make([]Workload, n)
	limits := make([]int32, n)
	for i := range n {
		workloads[i] = Workload{Total: int32(at(totals, i) % 64), Available: map[string]int32{}}
		limits[i] = int32(at(limitBytes, i) % 32)
		if at(limitBytes, i) == 255 {
			limits[i] = Unlimited
		}
		for c, name := range fuzzClusters[:len(fuzzClusters)-1] {
			b := at(avail, i*len(fuzzClusters)+c)
			switch {
			case b == 255:
				workloads[i].Available[name] = -3
			case b%16 > 0:
				workloads[i].Available[name] = int32(b % 16)
			}
		}
	}
	var actions []Action
	for j := 0; j+2 < len(acts) && len(actions) < 12; j += 3 {
		a := Action{Cluster: fuzzClusters[int(acts[j])%len(fuzzClusters)], Kind: Kind(acts[j+1] % 3)}
		if a.Kind == ShareDecrease {
			share := int32(acts[j+2] % 16)
			if acts[j+2] == 255 {
				share = -1
			}
			a.NewShares = map[int]int32{}
			if w := int(acts[j+1]>>2) % (n + 1); w < n {
				a.NewShares[w] = share
			} else {
				for i := range n {
					a.NewShares[i] = share
				}
			}
		}
		actions = append(actions, a)
	}
	return workloads, limits, actions
}

// refUnavailable is the reference: how many of workload i's replicas are unavailable once the actions picked
// from actions have run, each cluster at risk with the largest of its actions, written out plainly.
func refUnavailable(w Workload, i int, actions []Action, picked []int) int64 {
	var available int64
	for _, a := range w.Available {
		available += int64(max(a, 0))
	}
	largest := map[string]int64{}
	for _, j := range picked {
		a := actions[j]
		avail := int64(max(w.Available[a.Cluster], 0))
		r := avail
		if a.Kind == ShareDecrease {
			r = 0
			if s, ok := a.NewShares[i]; ok {
				r = max(avail-int64(max(s, 0)), 0)
			}
		}
		largest[a.Cluster] = max(largest[a.Cluster], r)
	}
	for _, r := range largest {
		available -= r
	}
	return max(int64(w.Total)-available, 0)
}

// checkDecision checks a decision against the rules of Admit, using the reference for every count.
func checkDecision(workloads []Workload, limits []int32, actions []Action, d Decision) error {
	if len(d.Verdicts) != len(actions) || len(d.Unavailable) != len(workloads) {
		return fmt.Errorf("%d verdicts and %d counts for %d actions and %d workloads", len(d.Verdicts), len(d.Unavailable), len(actions), len(workloads))
	}
	steady := true
	for i, w := range workloads {
		if now := refUnavailable(w, i, actions, nil); int64(d.Unavailable[i]) != now {
			return fmt.Errorf("workload %d: %d unavailable, want %d", i, d.Unavailable[i], now)
		}
		if limits[i] >= 0 && d.Unavailable[i] > 0 {
			steady = false
		}
	}
	var admitted, progress []int
	for j, v := range d.Verdicts {
		if v.Admitted == (v.Reason != "") || v.Progress && !v.Admitted {
			return fmt.Errorf("action %d: inconsistent verdict %+v", j, v)
		}
		// fits: every budgeted workload stays within its limit, or is not made worse.
		fits := true
		for i, w := range workloads {
			before := refUnavailable(w, i, actions, admitted)
			after := refUnavailable(w, i, actions, append(admitted[:len(admitted):len(admitted)], j))
			if limits[i] >= 0 && after > before && after > int64(limits[i]) {
				fits = false
			}
		}
		mayProgress := steady && len(admitted) == 0 && actions[j].Kind == RolloutStep
		switch {
		case v.Progress && (fits || !mayProgress):
			return fmt.Errorf("action %d: admitted by the progress rule, but it fits (%v) or the rule does not apply (%v)", j, fits, mayProgress)
		case v.Admitted && !v.Progress && !fits:
			return fmt.Errorf("action %d: admitted over the budget", j)
		case !v.Admitted && (fits || mayProgress):
			return fmt.Errorf("action %d: not admitted (%s), but it fits (%v) or the progress rule applies (%v)", j, v.Reason, fits, mayProgress)
		}
		if v.Progress {
			progress = append(progress, j)
		}
		if v.Admitted {
			admitted = append(admitted, j)
		}
	}
	// Together the admitted actions exceed no budget, but for the one progress-rule admission.
	for i, w := range workloads {
		if limits[i] < 0 {
			continue
		}
		bound := max(int64(limits[i]), refUnavailable(w, i, actions, progress))
		if got := refUnavailable(w, i, actions, admitted); got > bound {
			return fmt.Errorf("workload %d: the admitted actions make %d unavailable, more than %d", i, got, bound)
		}
	}
	if len(progress) > 1 || len(progress) == 1 && progress[0] != 0 {
		return fmt.Errorf("progress rule used by actions %v, want at most the first", progress)
	}
	return nil
}

func addFuzzSeeds(f *testing.F) {
	f.Add(uint8(0), []byte{10}, []byte{2}, []byte{6, 1, 1, 1, 1, 0}, []byte{0, 0, 0, 1, 0, 0, 2, 0, 0})          // skewed: progress rule
	f.Add(uint8(0), []byte{10}, []byte{2}, []byte{6, 1, 1, 1, 1, 0}, []byte{1, 0, 0, 0, 0, 0, 2, 0, 0})          // skewed: small ones first
	f.Add(uint8(0), []byte{10}, []byte{2}, []byte{6, 0, 1, 1, 1, 0}, []byte{0, 0, 0, 2, 0, 0, 6, 0, 0})          // a replica down
	f.Add(uint8(0), []byte{10}, []byte{5}, []byte{2, 2, 2, 2, 2, 0}, []byte{0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0}) // small clusters
	f.Add(uint8(0), []byte{10}, []byte{2}, []byte{6, 4}, []byte{0, 1, 4, 1, 1, 3})                               // share decreases
	f.Add(uint8(0), []byte{10}, []byte{1}, []byte{5, 5, 5}, []byte{0, 2, 0, 1, 0, 0})                            // surplus absorbs a removal
	f.Add(uint8(0), []byte{10}, []byte{2}, []byte{3, 4}, []byte{0, 0, 0, 6, 0, 0, 1, 2, 0})                      // over budget now
	f.Add(uint8(1), []byte{10, 4}, []byte{4, 1}, []byte{4, 4, 0, 2, 0, 0, 0, 2, 1, 1}, []byte{2, 0, 0, 0, 0, 0, 1, 0, 0})
	f.Add(uint8(2), []byte{20, 8, 5}, []byte{3, 255, 0}, []byte{5, 5, 5, 5, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 255, 3, 2},
		[]byte{0, 1, 12, 0, 0, 0, 3, 2, 0, 1, 5, 255, 6, 0, 0})
	f.Add(uint8(0), []byte{10}, []byte{255}, []byte{1, 2, 3}, []byte{0, 0, 0, 1, 2, 0}) // no budget
	f.Add(uint8(0), []byte{0}, []byte{0}, []byte{}, []byte{})                           // nothing
}

// FuzzAdmit checks every decision against the rules of Admit computed by the reference, and two properties of
// the order: a verdict depends only on the actions before it (a prefix of the actions gets the prefix of the
// verdicts), and a rejected action changes nothing (the admitted actions alone are all admitted again, the
// same one by the progress rule).
func FuzzAdmit(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, nw uint8, totals, limitBytes, avail, acts []byte) {
		workloads, limits, actions := fuzzInput(nw, totals, limitBytes, avail, acts)
		d := Admit(workloads, limits, actions)
		if err := checkDecision(workloads, limits, actions, d); err != nil {
			t.Fatalf("%+v %v %+v: %v", workloads, limits, actions, err)
		}
		for k := range actions {
			if diff := cmp.Diff(d.Verdicts[:k], Admit(workloads, limits, actions[:k]).Verdicts); diff != "" {
				t.Fatalf("%+v %v %+v: the first %d actions decided differently (-all +prefix):\n%s", workloads, limits, actions, k, diff)
			}
		}
		var kept []Action
		var want []Verdict
		for j, v := range d.Verdicts {
			if v.Admitted {
				kept, want = append(kept, actions[j]), append(want, v)
			}
		}
		if diff := cmp.Diff(want, Admit(workloads, limits, kept).Verdicts, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%+v %v %+v: without the rejected actions (-with +without):\n%s", workloads, limits, actions, diff)
		}
	})
}
