package split

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(v int32) *int32 { return &v }

// naiveDivide is the reference implementation: it follows the rules of the
// package documentation literally and hands out units one by one.
func naiveDivide(in Input) Result {
	total := max(in.Total, 0)
	var names []string
	seen := map[string]bool{}
	for _, c := range in.Clusters {
		if !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	shares := map[string]int32{}
	for _, c := range names {
		shares[c] = 0
	}
	minS := int32(0)
	if in.Limits.Min != nil && *in.Limits.Min > 0 {
		minS = *in.Limits.Min
	}
	maxS := int32(math.MaxInt32)
	if in.Limits.Max != nil {
		maxS = max(*in.Limits.Max, 0)
	}
	if len(names) == 0 || total == 0 || maxS == 0 || minS > maxS {
		return Result{Shares: shares, Unplaced: total}
	}
	weight := func(c string) int64 {
		if in.Weights == nil {
			return 1
		}
		return min(max(in.Weights[c], 0), 1_000_000)
	}
	prev := func(c string) int32 { return max(in.Previous[c], 0) }
	hash := func(c string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(in.Seed + "/" + c))
		return h.Sum64()
	}
	seedLess := func(a, b string) bool {
		if ha, hb := hash(a), hash(b); ha != hb {
			return ha < hb
		}
		return a < b
	}

	parts := slices.Clone(names)
	if minS > 0 {
		if int64(total) < int64(len(names))*int64(minS) {
			sort.Slice(parts, func(i, j int) bool {
				a, b := parts[i], parts[j]
				if prev(a) != prev(b) {
					return prev(a) > prev(b)
				}
				if weight(a) != weight(b) {
					return weight(a) > weight(b)
				}
				return seedLess(a, b)
			})
			parts = parts[:total/minS]
		}
		for _, p := range parts {
			shares[p] = minS
		}
	}
	rem := total - int32(len(parts))*minS
	allZero := true
	for _, p := range parts {
		if weight(p) > 0 {
			allZero = false
		}
	}
	eff := func(c string) int64 {
		if allZero {
			return 1
		}
		return weight(c)
	}
	beats := func(a, b string) bool {
		sa, sb := int64(shares[a]), int64(shares[b])
		l, r := eff(a)*(2*sb+1), eff(b)*(2*sa+1)
		if l != r {
			return l > r
		}
		pa, pb := prev(a) > shares[a], prev(b) > shares[b]
		if pa != pb {
			return pa
		}
		return seedLess(a, b)
	}
	for rem > 0 {
		best := ""
		found := false
		for _, p := range parts {
			if eff(p) == 0 || shares[p] >= maxS {
				continue
			}
			if !found || beats(p, best) {
				best, found = p, true
			}
		}
		if !found {
			break
		}
		shares[best]++
		rem--
	}
	return Result{Shares: shares, Placed: total - rem, Unplaced: rem}
}

func TestDivide(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want Result
	}{
		"3 over 2, seed s1: b wins the extra unit": {
			in:   Input{Total: 3, Clusters: []string{"a", "b"}, Seed: "s1"},
			want: Result{Shares: map[string]int32{"a": 1, "b": 2}, Placed: 3},
		},
		"3 over 2, seed s2: a wins the extra unit": {
			in:   Input{Total: 3, Clusters: []string{"a", "b"}, Seed: "s2"},
			want: Result{Shares: map[string]int32{"a": 2, "b": 1}, Placed: 3},
		},
		"3 over 3": {
			in:   Input{Total: 3, Clusters: []string{"a", "b", "c"}},
			want: Result{Shares: map[string]int32{"a": 1, "b": 1, "c": 1}, Placed: 3},
		},
		"4 over 2": {
			in:   Input{Total: 4, Clusters: []string{"b", "a"}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2}, Placed: 4},
		},
		"duplicates are ignored": {
			in:   Input{Total: 4, Clusters: []string{"a", "b", "a", "b"}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2}, Placed: 4},
		},
		"zero total": {
			in:   Input{Total: 0, Clusters: []string{"a", "b"}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 0}},
		},
		"negative total is treated as zero": {
			in:   Input{Total: -3, Clusters: []string{"a"}},
			want: Result{Shares: map[string]int32{"a": 0}},
		},
		"no clusters: everything unplaced": {
			in:   Input{Total: 5, Previous: map[string]int32{"gone": 5}},
			want: Result{Shares: map[string]int32{}, Unplaced: 5},
		},
		"max caps, rest unplaced": {
			in:   Input{Total: 10, Clusters: []string{"a", "b", "c"}, Limits: Limits{Max: ptr(2)}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2, "c": 2}, Placed: 6, Unplaced: 4},
		},
		"max 0: everything unplaced": {
			in:   Input{Total: 10, Clusters: []string{"a", "b"}, Limits: Limits{Max: ptr(0)}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 0}, Unplaced: 10},
		},
		"min > max (rejected by schema): everything unplaced": {
			in:   Input{Total: 10, Clusters: []string{"a", "b"}, Limits: Limits{Min: ptr(3), Max: ptr(2)}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 0}, Unplaced: 10},
		},
		"min 0 is no min": {
			in:   Input{Total: 4, Clusters: []string{"a", "b", "c", "d"}, Limits: Limits{Min: ptr(0)}},
			want: Result{Shares: map[string]int32{"a": 1, "b": 1, "c": 1, "d": 1}, Placed: 4},
		},
		"min: total >= n*min, everybody starts at min": {
			in:   Input{Total: 7, Clusters: []string{"a", "b", "c"}, Limits: Limits{Min: ptr(2)}, Previous: map[string]int32{"b": 3}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 3, "c": 2}, Placed: 7},
		},
		"min: total < n*min, clusters with a previous share keep it": {
			// k = 5/2 = 2 clusters get Min: c and d held shares before. The
			// remainder 1 goes to c, which held 3 (> its current 2).
			in: Input{Total: 5, Clusters: []string{"a", "b", "c", "d"}, Limits: Limits{Min: ptr(2)},
				Previous: map[string]int32{"c": 3, "d": 2}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 0, "c": 3, "d": 2}, Placed: 5},
		},
		"min: total < n*min, larger weights without previous": {
			in: Input{Total: 5, Clusters: []string{"a", "b", "c"}, Limits: Limits{Min: ptr(2)},
				Weights: map[string]int64{"a": 1, "b": 5, "c": 3}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 3, "c": 2}, Placed: 5},
		},
		"min: total < min, nothing placed": {
			in:   Input{Total: 2, Clusters: []string{"a", "b"}, Limits: Limits{Min: ptr(3)}},
			want: Result{Shares: map[string]int32{"a": 0, "b": 0}, Unplaced: 2},
		},
		"min+max: all at max": {
			in:   Input{Total: 20, Clusters: []string{"a", "b", "c"}, Limits: Limits{Min: ptr(3), Max: ptr(5)}},
			want: Result{Shares: map[string]int32{"a": 5, "b": 5, "c": 5}, Placed: 15, Unplaced: 5},
		},
		"min == max: remainder below min is unplaced": {
			in: Input{Total: 7, Clusters: []string{"a", "b", "c"}, Limits: Limits{Min: ptr(3), Max: ptr(3)},
				Previous: map[string]int32{"a": 3, "c": 3}},
			want: Result{Shares: map[string]int32{"a": 3, "b": 0, "c": 3}, Placed: 6, Unplaced: 1},
		},
		"min+max in between": {
			// a reaches Max; seed "": b comes before c in the per-Seed order.
			in: Input{Total: 11, Clusters: []string{"a", "b", "c"}, Limits: Limits{Min: ptr(2), Max: ptr(4)},
				Weights: map[string]int64{"a": 10, "b": 1, "c": 1}},
			want: Result{Shares: map[string]int32{"a": 4, "b": 4, "c": 3}, Placed: 11},
		},
		"weighted 3:1": {
			in:   Input{Total: 8, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 3, "b": 1}},
			want: Result{Shares: map[string]int32{"a": 6, "b": 2}, Placed: 8},
		},
		"weighted 3:1, total 4": {
			in:   Input{Total: 4, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 300, "b": 100}},
			want: Result{Shares: map[string]int32{"a": 3, "b": 1}, Placed: 4},
		},
		"weight 0 and missing weight get nothing": {
			in:   Input{Total: 5, Clusters: []string{"a", "b", "c"}, Weights: map[string]int64{"a": 2, "b": 0}},
			want: Result{Shares: map[string]int32{"a": 5, "b": 0, "c": 0}, Placed: 5},
		},
		"weight 0 gets only its min": {
			in: Input{Total: 5, Clusters: []string{"a", "b", "c"}, Weights: map[string]int64{"a": 2, "b": 0},
				Limits: Limits{Min: ptr(1)}},
			want: Result{Shares: map[string]int32{"a": 3, "b": 1, "c": 1}, Placed: 5},
		},
		"weight 0 never takes more, even when the others are at max": {
			in: Input{Total: 5, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 2, "b": 0},
				Limits: Limits{Max: ptr(2)}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 0}, Placed: 2, Unplaced: 3},
		},
		"all weights 0: equal weights": {
			in:   Input{Total: 4, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 0}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2}, Placed: 4},
		},
		"all weights 0 with min: equal weights beyond the floor": {
			// Seed "": the per-Seed order is b, c, a, so b wins the tie.
			in:   Input{Total: 7, Clusters: []string{"a", "b", "c"}, Weights: map[string]int64{}, Limits: Limits{Min: ptr(2)}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 3, "c": 2}, Placed: 7},
		},
		"weights are clamped to 1e6": {
			in:   Input{Total: 4, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 5_000_000, "b": 1_000_000}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2}, Placed: 4},
		},
		"large total, balance": {
			in: Input{Total: math.MaxInt32, Clusters: []string{"a", "b", "c"},
				Previous: map[string]int32{"b": 715827883}},
			want: Result{Shares: map[string]int32{"a": 715827882, "b": 715827883, "c": 715827882}, Placed: math.MaxInt32},
		},
		"large total, weighted 1:2": {
			in:   Input{Total: 2147483646, Clusters: []string{"a", "b"}, Weights: map[string]int64{"a": 1, "b": 2}},
			want: Result{Shares: map[string]int32{"a": 715827882, "b": 1431655764}, Placed: 2147483646},
		},
		"large total, max caps": {
			in:   Input{Total: math.MaxInt32, Clusters: []string{"a", "b"}, Limits: Limits{Min: ptr(1000), Max: ptr(1 << 29)}},
			want: Result{Shares: map[string]int32{"a": 1 << 29, "b": 1 << 29}, Placed: 1 << 30, Unplaced: 1<<30 - 1},
		},
		"previous-preferring tie-break: d joins": {
			// Previously 3/2/2 over a, b, c. With d: 1 each + 3 extra units, which
			// go to a, b and c (they held more than 1 before): only 1 unit moves.
			in: Input{Total: 7, Clusters: []string{"a", "b", "c", "d"},
				Previous: map[string]int32{"a": 3, "b": 2, "c": 2}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 2, "c": 2, "d": 1}, Placed: 7},
		},
		"previous-preferring tie-break: total shrinks": {
			in: Input{Total: 5, Clusters: []string{"a", "b", "c"}, Seed: "x",
				Previous: map[string]int32{"a": 1, "b": 2, "c": 3}},
			want: Result{Shares: map[string]int32{"a": 1, "b": 2, "c": 2}, Placed: 5},
		},
		"a cluster leaves: remaining shares still sum to total": {
			// c (previously 2) is gone: 2 each plus 1 extra unit, which nobody
			// held before (no previous share > 2), so seed s1 (b before a, d)
			// gives it to b.
			in: Input{Total: 7, Clusters: []string{"a", "b", "d"}, Seed: "s1",
				Previous: map[string]int32{"a": 2, "b": 2, "c": 2, "d": 1}},
			want: Result{Shares: map[string]int32{"a": 2, "b": 3, "d": 2}, Placed: 7},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Divide(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Divide() mismatch (-want +got):\n%s", diff)
			}
			if tc.in.Total <= 100_000 {
				if diff := cmp.Diff(naiveDivide(tc.in), got); diff != "" {
					t.Errorf("Divide() differs from the naive reference (-naive +got):\n%s", diff)
				}
			}
			if err := checkInvariants(tc.in, got); err != nil {
				t.Error(err)
			}
		})
	}
}

// seedFirst reports which of a and b comes first in the per-Seed order,
// computed independently with hash/fnv.
func seedFirst(seed, a, b string) string {
	h := func(c string) uint64 {
		f := fnv.New64a()
		f.Write([]byte(seed + "/" + c))
		return f.Sum64()
	}
	if h(a) < h(b) || (h(a) == h(b) && a < b) {
		return a
	}
	return b
}

func TestTieBreakDependsOnSeed(t *testing.T) {
	wins := map[string]int{}
	for i := range 64 {
		seed := fmt.Sprintf("uid-%d/manifest-0", i)
		got := Divide(Input{Total: 3, Clusters: []string{"a", "b"}, Seed: seed})
		winner := "a"
		if got.Shares["b"] == 2 {
			winner = "b"
		}
		wins[winner]++
		if want := seedFirst(seed, "a", "b"); winner != want {
			t.Errorf("seed %q: %s won the extra unit, the per-Seed order says %s", seed, winner, want)
		}
		if diff := cmp.Diff([]int32{1, 2}, sortedValues(got.Shares)); diff != "" {
			t.Errorf("seed %q: shares (-want +got):\n%s", seed, diff)
		}
	}
	if wins["a"] == 0 || wins["b"] == 0 {
		t.Errorf("the tie-break does not depend on the seed: wins %v", wins)
	}
	// The same seed always gives the same winner.
	for range 10 {
		if diff := cmp.Diff(Divide(Input{Total: 3, Clusters: []string{"a", "b"}, Seed: "s1"}),
			Divide(Input{Total: 3, Clusters: []string{"b", "a"}, Seed: "s1"})); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
	}
}

func TestPreviousBeatsSeedOrder(t *testing.T) {
	for i := range 32 {
		seed := fmt.Sprintf("seed-%d", i)
		loser := seedFirst(seed, "a", "b")
		other := map[string]string{"a": "b", "b": "a"}[loser]
		// other held 2 before, so it keeps the extra unit whatever the seed.
		got := Divide(Input{Total: 3, Clusters: []string{"a", "b"}, Seed: seed,
			Previous: map[string]int32{other: 2, loser: 1}})
		want := map[string]int32{other: 2, loser: 1}
		if diff := cmp.Diff(want, got.Shares); diff != "" {
			t.Errorf("seed %q (-want +got):\n%s", seed, diff)
		}
	}
}

func sortedValues(m map[string]int32) []int32 {
	var v []int32
	for _, s := range m {
		v = append(v, s)
	}
	slices.Sort(v)
	return v
}

// checkInvariants checks the properties every Result must have.
func checkInvariants(in Input, res Result) error {
	total := max(in.Total, 0)
	distinct := map[string]bool{}
	for _, c := range in.Clusters {
		distinct[c] = true
	}
	if len(res.Shares) != len(distinct) {
		return fmt.Errorf("%d shares for %d clusters", len(res.Shares), len(distinct))
	}
	minS := int32(0)
	if in.Limits.Min != nil && *in.Limits.Min > 0 {
		minS = *in.Limits.Min
	}
	maxS := int32(math.MaxInt32)
	if in.Limits.Max != nil {
		maxS = max(*in.Limits.Max, 0)
	}
	sum := int64(0)
	for c, s := range res.Shares {
		if !distinct[c] {
			return fmt.Errorf("share for unknown cluster %q", c)
		}
		if s < 0 || s > maxS {
			return fmt.Errorf("share %s=%d outside [0, %d]", c, s, maxS)
		}
		if s != 0 && s < minS {
			return fmt.Errorf("share %s=%d below min %d", c, s, minS)
		}
		sum += int64(s)
	}
	if sum != int64(res.Placed) || int64(res.Placed)+int64(res.Unplaced) != int64(total) || res.Unplaced < 0 {
		return fmt.Errorf("sum %d, placed %d, unplaced %d, total %d", sum, res.Placed, res.Unplaced, total)
	}
	if res.Unplaced == 0 || len(distinct) == 0 || maxS == 0 || minS > maxS {
		return nil
	}
	// Unplaced > 0: no cluster could have taken another unit.
	weighted := in.Weights != nil
	weight := func(c string) int64 { return min(max(in.Weights[c], 0), MaxWeight) }
	positive := false // some participating cluster has a positive weight
	for c, s := range res.Shares {
		if (minS == 0 || s > 0) && weight(c) > 0 {
			positive = true
		}
	}
	for c, s := range res.Shares {
		switch {
		case s == maxS:
		case s == 0 && minS > 0 && res.Unplaced < minS:
		case weighted && positive && weight(c) == 0 && (s == minS || s == 0):
		default:
			return fmt.Errorf("%d unplaced but %s=%d could take more (min %d, max %d)", res.Unplaced, c, s, minS, maxS)
		}
	}
	return nil
}

// randomInput returns a small random Input.
func randomInput(r *rand.Rand) Input {
	n := r.IntN(9)
	in := Input{Seed: fmt.Sprintf("seed-%d", r.IntN(1000))}
	for i := range n {
		in.Clusters = append(in.Clusters, fmt.Sprintf("c%d", i))
	}
	if n > 0 && r.IntN(8) == 0 {
		in.Clusters = append(in.Clusters, in.Clusters[r.IntN(n)]) // duplicate
	}
	switch r.IntN(4) {
	case 0:
		in.Total = int32(r.IntN(2000))
	default:
		in.Total = int32(r.IntN(40))
	}
	if r.IntN(2) == 0 {
		in.Weights = map[string]int64{}
		for _, c := range in.Clusters {
			switch r.IntN(6) {
			case 0: // missing
			case 1:
				in.Weights[c] = 0
			case 2:
				in.Weights[c] = int64(r.IntN(1_000_001))
			default:
				in.Weights[c] = int64(r.IntN(5))
			}
		}
	}
	if r.IntN(2) == 0 {
		in.Previous = map[string]int32{"gone": int32(r.IntN(10))}
		for _, c := range in.Clusters {
			if r.IntN(3) > 0 {
				in.Previous[c] = int32(r.IntN(12)) - 1
			}
		}
	}
	if r.IntN(3) == 0 {
		in.Limits.Min = ptr(int32(r.IntN(6)) - 1)
	}
	if r.IntN(3) == 0 {
		in.Limits.Max = ptr(int32(r.IntN(12)) - 1)
	}
	return in
}

// permuted returns a copy of in with shuffled clusters and rebuilt maps.
func permuted(r *rand.Rand, in Input) Input {
	out := in
	out.Clusters = slices.Clone(in.Clusters)
	r.Shuffle(len(out.Clusters), func(i, j int) { out.Clusters[i], out.Clusters[j] = out.Clusters[j], out.Clusters[i] })
	if in.Weights != nil {
		out.Weights = make(map[string]int64, len(in.Weights))
		for k, v := range in.Weights {
			out.Weights[k] = v
		}
	}
	if in.Previous != nil {
		out.Previous = make(map[string]int32, len(in.Previous))
		for k, v := range in.Previous {
			out.Previous[k] = v
		}
	}
	return out
}

func TestMatchesNaiveRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	for i := range iters {
		in := randomInput(r)
		got := Divide(in)
		if diff := cmp.Diff(naiveDivide(in), got); diff != "" {
			t.Fatalf("case %d: %#v\n(-naive +got):\n%s", i, in, diff)
		}
		if err := checkInvariants(in, got); err != nil {
			t.Fatalf("case %d: %#v: %v", i, in, err)
		}
		if diff := cmp.Diff(got, Divide(permuted(r, in))); diff != "" {
			t.Fatalf("case %d: not invariant under permutation: %#v\n%s", i, in, diff)
		}
	}
}

func TestMatchesNaiveLarger(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 12 {
		n := 50 + r.IntN(200)
		in := Input{Total: int32(r.IntN(60000)), Seed: fmt.Sprint(i), Weights: map[string]int64{}, Previous: map[string]int32{}}
		for j := range n {
			c := fmt.Sprintf("cluster-%03d", j)
			in.Clusters = append(in.Clusters, c)
			in.Weights[c] = int64(r.IntN(4) * r.IntN(1_000_000))
			in.Previous[c] = int32(r.IntN(300))
		}
		switch i % 4 {
		case 0:
			in.Weights = nil
		case 1:
			in.Limits = Limits{Min: ptr(int32(1 + r.IntN(500))), Max: ptr(int32(600 + r.IntN(3000)))}
		case 2:
			in.Limits = Limits{Max: ptr(int32(1 + r.IntN(2000)))}
		}
		if diff := cmp.Diff(naiveDivide(in), Divide(in)); diff != "" {
			t.Fatalf("case %d (-naive +got):\n%s", i, diff)
		}
	}
}

// TestWebsterBounds checks huge totals, where the naive method is too slow,
// against the divisor-method bounds of Webster:
// w_i*(T - n/2)/W - 1/2 <= s_i <= w_i*(T + n/2)/W + 1/2.
func TestWebsterBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		n := 1 + r.IntN(40)
		in := Input{Total: math.MaxInt32 - int32(r.IntN(1<<30)), Seed: fmt.Sprint(i), Weights: map[string]int64{}}
		W := int64(0)
		for j := range n {
			c := fmt.Sprint("c", j)
			in.Clusters = append(in.Clusters, c)
			w := int64(1 + r.IntN(1_000_000))
			if r.IntN(4) == 0 {
				w = int64(1 + r.IntN(3))
			}
			in.Weights[c] = w
			W += w
		}
		got := Divide(in)
		if err := checkInvariants(in, got); err != nil {
			t.Fatal(err)
		}
		if got.Unplaced != 0 {
			t.Fatalf("case %d: %d unplaced", i, got.Unplaced)
		}
		for c, s := range got.Shares {
			w := in.Weights[c]
			// 2*W*s >= w*(2T - n) - W  and  2*W*s <= w*(2T + n) + W, in big ints.
			lhs := new(big.Int).Mul(big.NewInt(2*W), big.NewInt(int64(s)))
			lo := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(w), big.NewInt(2*int64(in.Total)-int64(n))), big.NewInt(W))
			hi := new(big.Int).Add(new(big.Int).Mul(big.NewInt(w), big.NewInt(2*int64(in.Total)+int64(n))), big.NewInt(W))
			if lhs.Cmp(lo) < 0 || lhs.Cmp(hi) > 0 {
				t.Fatalf("case %d: share %s=%d (w=%d, W=%d, T=%d, n=%d) outside Webster bounds", i, c, s, w, W, in.Total, n)
			}
		}
	}
}

func TestHouseMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 3000 {
		in := randomInput(r)
		if in.Limits.Min != nil && int64(in.Total) < int64(len(in.Clusters))*int64(*in.Limits.Min) {
			in.Total = int32(len(in.Clusters)) * *in.Limits.Min
		}
		if err := checkMonotone(in); err != nil {
			t.Fatalf("case %d: %#v: %v", i, in, err)
		}
	}
}

// checkMonotone checks that Total+1 does not decrease any share.
func checkMonotone(in Input) error {
	if in.Total == math.MaxInt32 {
		return nil
	}
	a := Divide(in)
	next := in
	next.Total = max(in.Total, 0) + 1
	b := Divide(next)
	for c, s := range a.Shares {
		if b.Shares[c] < s {
			return fmt.Errorf("total %d -> %d: share of %s went from %d to %d", in.Total, next.Total, c, s, b.Shares[c])
		}
	}
	if b.Placed < a.Placed || b.Placed > a.Placed+1 {
		return fmt.Errorf("placed %d -> %d", a.Placed, b.Placed)
	}
	return nil
}

// minMovement is the smallest number of units that any Balance result
// (shares q or q+1 with total mod n of them at q+1) over clusters moves away
// from the clusters that stay, given their previous shares.
func minMovement(prev map[string]int32, clusters []string, total int32) int64 {
	n := int32(len(clusters))
	if n == 0 {
		return 0
	}
	q, r := total/n, total%n
	moved, keepExtra := int64(0), int32(0)
	for _, c := range clusters {
		p := max(prev[c], 0)
		moved += int64(max(0, p-q))
		if p >= q+1 {
			keepExtra++
		}
	}
	return moved - int64(min(r, keepExtra))
}

// movement is the number of units taken away from clusters that stay.
func movement(prev map[string]int32, shares map[string]int32) int64 {
	m := int64(0)
	for c, s := range shares {
		m += int64(max(0, max(prev[c], 0)-s))
	}
	return m
}

func TestMinimalMovement(t *testing.T) {
	// The example of rule 6.
	prev := Divide(Input{Total: 7, Clusters: []string{"a", "b", "c"}, Seed: "s"}).Shares
	if diff := cmp.Diff([]int32{2, 2, 3}, sortedValues(prev)); diff != "" {
		t.Fatalf("7 over 3 (-want +got):\n%s", diff)
	}
	got := Divide(Input{Total: 7, Clusters: []string{"a", "b", "c", "d"}, Seed: "s", Previous: prev})
	if diff := cmp.Diff(map[string]int32{"a": 2, "b": 2, "c": 2, "d": 1}, got.Shares); diff != "" {
		t.Errorf("d joins (-want +got):\n%s", diff)
	}
	if m := movement(prev, got.Shares); m != 1 {
		t.Errorf("moved %d units, want 1", m)
	}

	r := rand.New(rand.NewPCG(9, 10))
	for i := range 3000 {
		if err := checkMinimalMovement(r.Uint32(), uint8(r.IntN(20)), int32(r.IntN(100)), int32(r.IntN(100)), uint8(r.IntN(256)), fmt.Sprint(i)); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
}

// checkMinimalMovement builds a Balance result for n clusters, then changes
// the cluster set (join, leave) or the total per mode and checks that the new
// result moves no more units than the minimum.
func checkMinimalMovement(prevSeed uint32, n uint8, total, newTotal int32, mode uint8, seed string) error {
	total, newTotal = max(total, 0), max(newTotal, 0)
	var clusters []string
	for i := range int(n) % 24 {
		clusters = append(clusters, fmt.Sprint("c", i))
	}
	// Previous is either the previous Divide result or arbitrary.
	var prev map[string]int32
	if mode&1 == 0 {
		prev = Divide(Input{Total: total, Clusters: clusters, Seed: seed}).Shares
	} else {
		r := rand.New(rand.NewPCG(uint64(prevSeed), 0))
		prev = map[string]int32{}
		for _, c := range clusters {
			prev[c] = int32(r.IntN(int(total)/max(len(clusters), 1) + 3))
		}
	}
	next := slices.Clone(clusters)
	switch (mode >> 1) % 3 {
	case 0: // join
		next = append(next, "new")
	case 1: // leave
		if len(next) > 0 {
			i := int(prevSeed) % len(next)
			next = slices.Delete(next, i, i+1)
		}
	case 2: // total changes only
	}
	in := Input{Total: newTotal, Clusters: next, Seed: seed, Previous: prev}
	res := Divide(in)
	if got, want := movement(prev, res.Shares), minMovement(prev, next, newTotal); got != want {
		return fmt.Errorf("%#v: moved %d units, minimum is %d (shares %v)", in, got, want, res.Shares)
	}
	vals := sortedValues(res.Shares)
	if len(vals) > 0 && vals[len(vals)-1]-vals[0] > 1 {
		return fmt.Errorf("%#v: not balanced: %v", in, res.Shares)
	}
	return nil
}

func TestAbove(t *testing.T) {
	// above(a, w) must count j >= 0 with (2j+1)*2^32 < 2*a*w, checked with big ints.
	r := rand.New(rand.NewPCG(11, 12))
	two32 := new(big.Int).Lsh(big.NewInt(1), 32)
	for range 20000 {
		a := r.Uint64() >> uint(r.IntN(64))
		a = min(a, 1<<63)
		w := int64(r.IntN(1_000_001))
		got := above(a, w)
		P := new(big.Int).Mul(new(big.Int).SetUint64(a), big.NewInt(2*w))
		// Count the odd o with o*2^32 < P: o < P/2^32 <=> o <= floor((P-1)/2^32)
		// for P >= 1, and there are (q+1)/2 odd numbers in [1, q].
		want := int64(0)
		if P.Sign() > 0 {
			q := new(big.Int).Div(new(big.Int).Sub(P, big.NewInt(1)), two32)
			want = new(big.Int).Div(q.Add(q, big.NewInt(1)), big.NewInt(2)).Int64()
		}
		if got != want {
			t.Fatalf("above(%d, %d) = %d, want %d", a, w, got, want)
		}
		if j := got; w > 0 && j > 0 {
			// Key j-1 is above the threshold, key j is not.
			lhs := new(big.Int).Mul(big.NewInt(2*(j-1)+1), two32)
			if lhs.Cmp(P) >= 0 {
				t.Fatalf("above(%d, %d) = %d counts a key not above the threshold", a, w, got)
			}
			lhs = new(big.Int).Mul(big.NewInt(2*j+1), two32)
			if lhs.Cmp(P) < 0 {
				t.Fatalf("above(%d, %d) = %d misses a key above the threshold", a, w, got)
			}
		}
	}
}

func benchInput(n int, total int32, weighted bool) Input {
	in := Input{Total: total, Seed: "0f8e6a4c-uid/manifest-3", Previous: map[string]int32{}}
	if weighted {
		in.Weights = map[string]int64{}
	}
	r := rand.New(rand.NewPCG(13, 14))
	for i := range n {
		c := fmt.Sprintf("managed-cluster-%05d", i)
		in.Clusters = append(in.Clusters, c)
		if weighted {
			in.Weights[c] = int64(1 + r.IntN(1_000_000))
		}
		if i%3 == 0 {
			in.Previous[c] = total / int32(n)
		}
	}
	return in
}

func BenchmarkDivide(b *testing.B) {
	cases := []struct {
		name string
		in   Input
	}{
		{"balance/clusters=5000/total=1e6", benchInput(5000, 1_000_000, false)},
		{"balance/clusters=5000/total=10", benchInput(5000, 10, false)},
		{"weighted/clusters=5000/total=1e6", benchInput(5000, 1_000_000, true)},
		{"weighted/clusters=5000/total=10", benchInput(5000, 10, true)},
		{"weighted/clusters=5000/total=2^31-1", benchInput(5000, math.MaxInt32, true)},
		{"balance/clusters=3/total=2^31-1", benchInput(3, math.MaxInt32, false)},
	}
	minMax := benchInput(5000, 1_000_000, true)
	minMax.Limits = Limits{Min: ptr(150), Max: ptr(400)}
	cases = append(cases, struct {
		name string
		in   Input
	}{"weighted+min+max/clusters=5000/total=1e6", minMax})
	minOnly := benchInput(5000, 10_000, false)
	minOnly.Limits = Limits{Min: ptr(3)}
	cases = append(cases, struct {
		name string
		in   Input
	}{"balance+min/clusters=5000/total=1e4 (k<n)", minOnly})
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Divide(bc.in)
			}
		})
	}
}
