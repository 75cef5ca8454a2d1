package split

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Flags of fuzzInput.
const (
	fuzzHugeTotal = 1 << iota // keep the total up to 2^31-1 (else total % 512)
	fuzzBalance               // Weights == nil
	fuzzMin                   // set Limits.Min
	fuzzMax                   // set Limits.Max
	fuzzDuplicate             // repeat a cluster name
	fuzzRawLimits             // use minV/maxV as they are (else small values)
)

// fuzzInput decodes fuzzer arguments into an Input.
func fuzzInput(total uint32, n uint8, minV, maxV int32, flags uint8, weights, prev []byte, seed string) Input {
	in := Input{Total: int32(total & math.MaxInt32), Seed: seed}
	if flags&fuzzHugeTotal == 0 {
		in.Total %= 512
	}
	for i := range int(n % 40) {
		in.Clusters = append(in.Clusters, fmt.Sprint("cluster-", i))
	}
	if flags&fuzzDuplicate != 0 && len(in.Clusters) > 0 {
		in.Clusters = append(in.Clusters, in.Clusters[int(total)%len(in.Clusters)])
	}
	if flags&fuzzBalance == 0 {
		in.Weights = map[string]int64{}
		for i, b := range weights {
			if i >= len(in.Clusters) {
				break
			}
			w := int64(b >> 2)
			if b&3 == 3 {
				w = int64(b) * 4000 // up to 1,020,000: exercises clamping
			}
			in.Weights[in.Clusters[i]] = w
		}
	}
	if len(prev) > 0 {
		in.Previous = map[string]int32{"gone": int32(prev[0])}
		for i, b := range prev[1:] {
			if i >= len(in.Clusters) {
				break
			}
			in.Previous[in.Clusters[i]] = int32(b) - 16
		}
	}
	if flags&fuzzRawLimits == 0 {
		minV, maxV = minV%8, maxV%64
	}
	if flags&fuzzMin != 0 {
		in.Limits.Min = ptr(minV)
	}
	if flags&fuzzMax != 0 {
		in.Limits.Max = ptr(maxV)
	}
	return in
}

func addFuzzSeeds(f *testing.F) {
	f.Add(uint32(3), uint8(2), int32(0), int32(0), uint8(fuzzBalance), []byte{}, []byte{}, "s")
	f.Add(uint32(7), uint8(4), int32(0), int32(0), uint8(fuzzBalance), []byte{}, []byte{0, 19, 18, 18}, "uid/0")
	f.Add(uint32(10), uint8(3), int32(0), int32(2), uint8(fuzzBalance|fuzzMax), []byte{}, []byte{}, "")
	f.Add(uint32(5), uint8(4), int32(2), int32(0), uint8(fuzzMin), []byte{4, 20, 12, 0}, []byte{0, 0, 0, 19, 18}, "x")
	f.Add(uint32(20), uint8(3), int32(3), int32(5), uint8(fuzzMin|fuzzMax), []byte{40, 4, 4}, []byte{}, "y")
	f.Add(uint32(8), uint8(3), int32(0), int32(0), uint8(0), []byte{12, 4, 0}, []byte{}, "z")
	f.Add(uint32(9), uint8(3), int32(0), int32(0), uint8(0), []byte{}, []byte{}, "all zero")
	f.Add(uint32(math.MaxInt32), uint8(39), int32(1000), int32(1<<29), uint8(fuzzHugeTotal|fuzzMin|fuzzMax|fuzzRawLimits), []byte{255, 7, 3, 200}, []byte{1, 2, 3}, "big")
}

// FuzzDivide checks the invariants of every Result, determinism under
// permutation of Clusters, and equality with the naive reference.
func FuzzDivide(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, total uint32, n uint8, minV, maxV int32, flags uint8, weights, prev []byte, seed string) {
		in := fuzzInput(total, n, minV, maxV, flags, weights, prev, seed)
		got := Divide(in)
		if err := checkInvariants(in, got); err != nil {
			t.Fatalf("%#v: %v", in, err)
		}
		r := rand.New(rand.NewPCG(uint64(total), uint64(n)))
		if diff := cmp.Diff(got, Divide(permuted(r, in))); diff != "" {
			t.Fatalf("%#v: not invariant under permutation (-first +permuted):\n%s", in, diff)
		}
		// The naive reference costs about Total * clusters steps.
		if int64(in.Total)*int64(len(in.Clusters)+1) <= 400_000 {
			if diff := cmp.Diff(naiveDivide(in), got); diff != "" {
				t.Fatalf("%#v: differs from the naive reference (-naive +got):\n%s", in, diff)
			}
		}
	})
}

// FuzzMonotone checks house-monotonicity: Total+1 decreases no share when
// Total >= n*Min.
func FuzzMonotone(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, total uint32, n uint8, minV, maxV int32, flags uint8, weights, prev []byte, seed string) {
		in := fuzzInput(total, n, minV, maxV, flags, weights, prev, seed)
		if in.Limits.Min != nil {
			floor := int64(len(in.Clusters)) * int64(*in.Limits.Min)
			if floor >= math.MaxInt32 {
				t.Skip()
			}
			in.Total = int32(max(int64(in.Total), floor))
		}
		if err := checkMonotone(in); err != nil {
			t.Fatalf("%#v: %v", in, err)
		}
	})
}

// FuzzMinimalMovement checks, for Balance, that when a cluster joins or
// leaves or the total changes, no more units move than the minimum any
// Balance result allows.
func FuzzMinimalMovement(f *testing.F) {
	f.Add(uint32(0), uint8(3), int32(7), int32(7), uint8(0), "s")           // rule 6 example: d joins
	f.Add(uint32(1), uint8(4), int32(10), int32(10), uint8(2), "s")         // a cluster leaves
	f.Add(uint32(2), uint8(5), int32(13), int32(9), uint8(4), "t")          // total shrinks
	f.Add(uint32(3), uint8(6), int32(20), int32(31), uint8(5), "arbitrary") // arbitrary previous shares
	f.Fuzz(func(t *testing.T, prevSeed uint32, n uint8, total, newTotal int32, mode uint8, seed string) {
		if err := checkMinimalMovement(prevSeed, n, total, newTotal, mode, seed); err != nil {
			t.Fatal(err)
		}
	})
}
