package split

import (
	"math"
	"math/bits"
	"sort"
)

// MaxWeight is the largest weight Divide uses. Larger weights are treated as
// MaxWeight, negative weights as 0. The bound keeps every priority
// cross-multiplication (weight * (2*share+1)) inside int64.
const MaxWeight int64 = 1_000_000

// Limits bound each cluster's share. Nil means unbounded.
type Limits struct {
	// Min is the smallest non-zero share. Nil, 0 or negative means no minimum.
	Min *int32
	// Max is the largest share. Nil means no maximum; 0 or negative means
	// nothing can be placed.
	Max *int32
}

// Input is everything Divide needs. Divide does not modify it.
type Input struct {
	// Total is the number of units to divide (the manifest's own value).
	// A negative Total is treated as 0.
	Total int32
	// Clusters are the decided clusters, in any order. Duplicates are ignored.
	Clusters []string
	// Weights is nil for Balance (all weights equal). Otherwise it holds the
	// weight of each cluster (0..MaxWeight); a missing cluster has weight 0.
	Weights map[string]int64
	// Limits bound every cluster's share.
	Limits Limits
	// Previous holds the shares currently delivered. It may name clusters that
	// are no longer decided. It is used only to break ties (stability).
	Previous map[string]int32
	// Seed keys the stable tie-break order, e.g. PMW UID + "/" + manifest id.
	Seed string
}

// Result is the outcome of Divide.
type Result struct {
	// Shares has one entry for every distinct cluster in Input.Clusters
	// (0 allowed).
	Shares map[string]int32
	// Placed is the sum of Shares.
	Placed int32
	// Unplaced is Total - Placed: units no cluster could take.
	Unplaced int32
}

// member is the working state of one cluster.
type member struct {
	name   string
	hash   uint64 // FNV-1a 64 of Seed + "/" + name
	weight int64  // clamped raw weight; 1 for Balance
	eff    int64  // effective weight used by the highest-averages method
	prev   int32  // Previous share, negative/missing -> 0
	share  int32
	cap    int64 // largest share this cluster can reach in the current phase
}

// seedBefore reports whether a comes before b in the stable per-Seed order.
func seedBefore(a, b *member) bool {
	if a.hash != b.hash {
		return a.hash < b.hash
	}
	return a.name < b.name
}

// better reports whether the next unit goes to a rather than b: larger
// priority eff/(2*share+1), then a Previous share above the current share,
// then the per-Seed order.
func better(a, b *member) bool {
	// eff <= 1e6 < 2^20 and 2*share+1 < 2^32, so the products fit in int64.
	l := a.eff * (2*int64(b.share) + 1)
	r := b.eff * (2*int64(a.share) + 1)
	if l != r {
		return l > r
	}
	ap, bp := a.prev > a.share, b.prev > b.share
	if ap != bp {
		return ap
	}
	return seedBefore(a, b)
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnv1a continues the 64-bit FNV-1a hash h over the bytes of s. The per-Seed
// key of a cluster is fnv1a(fnv1a(fnvOffset64, Seed+"/"), name), i.e. the
// FNV-1a hash of Seed + "/" + name, computed without allocating.
func fnv1a(h uint64, s string) uint64 {
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

func clampWeight(w int64) int64 {
	switch {
	case w < 0:
		return 0
	case w > MaxWeight:
		return MaxWeight
	}
	return w
}

// Divide divides in.Total across in.Clusters. See the package documentation
// for the rules.
func Divide(in Input) Result {
	total := in.Total
	if total < 0 {
		total = 0
	}

	// Deduplicate (the result map doubles as the set of names seen) and
	// build the working state.
	shares := make(map[string]int32, len(in.Clusters))
	ms := make([]member, 0, len(in.Clusters))
	seedHash := fnv1a(fnv1a(fnvOffset64, in.Seed), "/")
	for _, name := range in.Clusters {
		if _, dup := shares[name]; dup {
			continue
		}
		shares[name] = 0
		m := member{name: name, hash: fnv1a(seedHash, name), weight: 1}
		if in.Weights != nil {
			m.weight = clampWeight(in.Weights[name])
		}
		if p := in.Previous[name]; p > 0 {
			m.prev = p
		}
		ms = append(ms, m)
	}

	minShare := int32(0)
	if in.Limits.Min != nil && *in.Limits.Min > 0 {
		minShare = *in.Limits.Min
	}
	maxShare := int32(math.MaxInt32) // shares never exceed Total anyway
	if in.Limits.Max != nil {
		maxShare = max(*in.Limits.Max, 0)
	}

	placed := int64(0)
	if len(ms) > 0 && total > 0 && maxShare > 0 && minShare <= maxShare {
		placed = divide(ms, int64(total), minShare, maxShare)
	}

	for i := range ms {
		if ms[i].share != 0 {
			shares[ms[i].name] = ms[i].share
		}
	}
	return Result{Shares: shares, Placed: int32(placed), Unplaced: total - int32(placed)}
}

// divide fills in the shares and returns the number of units placed.
// Preconditions: len(ms) > 0, total > 0, 0 < maxShare, minShare <= maxShare.
func divide(ms []member, total int64, minShare, maxShare int32) int64 {
	// Rule: Min floor. participants are the clusters that may hold a share.
	participants := make([]*member, len(ms))
	for i := range ms {
		participants[i] = &ms[i]
	}
	if minShare > 0 {
		if total < int64(len(ms))*int64(minShare) {
			k := total / int64(minShare)
			sort.Slice(participants, func(i, j int) bool {
				a, b := participants[i], participants[j]
				if a.prev != b.prev {
					return a.prev > b.prev
				}
				if a.weight != b.weight {
					return a.weight > b.weight
				}
				return seedBefore(a, b)
			})
			participants = participants[:k]
		}
		for _, p := range participants {
			p.share = minShare
		}
	}
	floor := int64(len(participants)) * int64(minShare)
	remaining := total - floor

	// Zero-weight rule: if no participant has a positive weight, all
	// participants count as weight 1 for the units beyond the floor.
	anyPositive := false
	for _, p := range participants {
		if p.weight > 0 {
			anyPositive = true
			break
		}
	}
	eligible := participants[:0:0]
	for _, p := range participants {
		p.eff = p.weight
		if !anyPositive {
			p.eff = 1
		}
		if p.eff > 0 && p.share < maxShare {
			eligible = append(eligible, p)
		}
	}
	left := highestAverages(eligible, remaining, maxShare)
	return total - left
}

// highestAverages hands out r units to el by the sequential Webster /
// Sainte-Laguë method (with the tie-break of better), each cluster capped at
// maxShare. It returns the units that could not be placed.
//
// Instead of handing out every unit one by one it first raises every cluster
// to a lower bound of its final share (see lowerBounds) and only hands out the
// rest one by one with a heap. The result is identical to the naive method.
func highestAverages(el []*member, r int64, maxShare int32) int64 {
	if r <= 0 || len(el) == 0 {
		return r
	}
	room := int64(0)
	for _, m := range el {
		// Nobody can get more than its start plus r; this keeps all sums small.
		m.cap = min(int64(maxShare), int64(m.share)+r)
		room += m.cap - int64(m.share)
	}
	if room <= r {
		// Everybody reaches its cap.
		for _, m := range el {
			m.share = int32(m.cap)
		}
		return r - room
	}

	r -= lowerBounds(el, r, room)

	// Hand out the rest one by one: max-heap ordered by better.
	h := make([]*member, 0, len(el))
	for _, m := range el {
		if int64(m.share) < m.cap {
			h = append(h, m)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for r > 0 && len(h) > 0 {
		top := h[0]
		top.share++
		r--
		if int64(top.share) >= top.cap {
			last := len(h) - 1
			h[0] = h[last]
			h = h[:last]
		}
		siftDown(h, 0)
	}
	return r
}

func siftDown(h []*member, i int) {
	n := len(h)
	for {
		best := i
		if l := 2*i + 1; l < n && better(h[l], h[best]) {
			best = l
		}
		if r := 2*i + 2; r < n && better(h[r], h[best]) {
			best = r
		}
		if best == i {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}

// above returns how many shares j >= 0 have priority w/(2j+1) strictly above
// the threshold 2^31/a, i.e. how many odd numbers o satisfy o*2^32 < 2*a*w.
// The threshold corresponds to the Webster divisor t = a/2^32: the count is
// the number of j with j + 1/2 < w*t. Exact, in 128-bit arithmetic.
func above(a uint64, w int64) int64 {
	hi, lo := bits.Mul64(a, uint64(2*w)) // P = 2*a*w < 2^85
	if hi == 0 && lo == 0 {
		return 0
	}
	lo, borrow := bits.Sub64(lo, 1, 0) // P - 1
	hi -= borrow
	q := hi<<32 | lo>>32 // floor((P-1) / 2^32) < 2^53
	return int64((q + 1) / 2)
}

// boundAt returns, for threshold a, the number of units the lower bound
// hands out: sum over el of (clamp(above(a,w), share, cap) - share).
func boundAt(el []*member, a uint64) int64 {
	s := int64(0)
	for _, m := range el {
		c := min(above(a, m.eff), m.cap)
		if c > int64(m.share) {
			s += c - int64(m.share)
		}
	}
	return s
}

// lowerBounds raises every share in el to a provable lower bound of its final
// share and returns the number of units it handed out (<= r).
//
// Every cluster m has a strictly decreasing sequence of keys, one per unit
// j in [share, cap): (priority eff/(2j+1), tie-break). The sequential method
// hands out exactly the r largest keys overall. For any threshold λ, if the
// number of keys with priority > λ is at most r, every one of them is among
// the r largest keys whatever the tie-break, so giving each cluster all its
// keys above λ is a lower bound of its final share. We search a λ (of the
// form 2^31/a) close to the smallest one for which that count is still <= r;
// it need not be optimal for correctness. The remaining units (at most
// len(el)) are handed out one by one by the caller.
func lowerBounds(el []*member, r, room int64) int64 {
	// Stop searching once at most this many units remain for the heap: one
	// more evaluation costs about as much as n/16 heap operations.
	slack := int64(len(el))/16 + 1
	var w, f float64
	for _, m := range el {
		w += float64(m.eff)
		f += float64(m.share)
	}
	const limit = uint64(1) << 63 // t = 2^31: every cluster reaches its cap (cap <= 2^31-1)
	toA := func(t float64) uint64 {
		x := t * (1 << 32)
		switch {
		case !(x > 0): // also NaN
			return 0
		case x >= float64(limit):
			return limit
		}
		return uint64(x)
	}

	// Invariant: boundAt(lo) = sLo <= r < boundAt(hi) = sHi. At t = 2^31
	// (a = limit) every cluster reaches its cap, and the caller made sure that
	// the total room is > r.
	lo, hi := uint64(0), limit
	sLo, sHi := int64(0), room
	probe := func(a uint64) int64 {
		if a <= lo || a >= hi {
			return -1
		}
		s := boundAt(el, a)
		if s <= r {
			lo, sLo = a, s
		} else {
			hi, sHi = a, s
		}
		return s
	}

	// 1. Estimate: without caps and floors, t = (r + f - n/2)/w gives
	//    r-n <= bound <= r. 2. One linear correction: t += (r - bound)/w.
	t := (float64(r) + f - float64(len(el))/2) / w
	if s := probe(toA(t)); s >= 0 && s != r {
		probe(toA(t + float64(r-s)/w))
	}
	// 3. Without an upper end yet, double t until the bound exceeds r.
	for hi == limit && r-sLo > slack && lo < limit/2 {
		probe(2*lo + 1)
	}
	// 4. Narrow the bracket until few units remain for the heap, alternating
	//    linear interpolation and bisection (at least halving every 2 steps).
	//    Once the heap has at most n units left to hand out, give up after a
	//    few probes: exact ties (Balance) cannot be split by any threshold.
	for i, tight := 0, 0; r-sLo > slack && hi-lo > 1 && tight < 4; i++ {
		if sHi-sLo <= int64(len(el)) {
			tight++
		}
		mid := lo + (hi-lo)/2
		if i%2 == 0 {
			frac := float64(r-sLo) / float64(sHi-sLo)
			mid = lo + max(1, min(hi-lo-1, uint64(frac*float64(hi-lo))))
		}
		probe(mid)
	}

	for _, m := range el {
		c := min(above(lo, m.eff), m.cap)
		if c > int64(m.share) {
			m.share = int32(c)
		}
	}
	return sLo
}
