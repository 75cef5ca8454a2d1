// Package split divides an integer total (for example the replicas of one
// manifest of a PlacementManifestWork) across the decided clusters.
//
// It is pure arithmetic: Divide takes an Input and returns a Result, touches
// no global state and is deterministic.
//
// # Normalising the input
//
//   - A negative Total is treated as 0.
//   - Duplicate cluster names are ignored; the order of Clusters and of map
//     iteration never matters.
//   - Weights == nil means Balance: every cluster has weight 1. Otherwise a
//     cluster missing from Weights has weight 0; weights are clamped to
//     [0, MaxWeight] (MaxWeight = 1,000,000).
//   - A missing or negative Previous share is treated as 0. Previous entries
//     for clusters that are not in Clusters are ignored.
//   - Limits.Min nil, 0 or negative means no minimum. Limits.Max nil means no
//     maximum; Max 0 (or negative) means nothing is placed. Min > Max (which
//     the API schema rejects) leaves no valid non-zero share, so nothing is
//     placed either.
//
// The Result has an entry in Shares for every distinct cluster (0 allowed),
// Placed = sum of Shares and Unplaced = Total - Placed.
//
// # Rule 1: method
//
// Shares are computed with Webster / Sainte-Laguë as a sequential
// highest-averages method: starting from the Min floor (rule 4), each next
// unit goes to the eligible cluster with the largest priority w/(2s+1), where w
// is its effective weight (rule 5) and s its current share. Priorities are
// compared exactly by integer cross-multiplication, w_a*(2s_b+1) versus
// w_b*(2s_a+1), in int64 (w <= 10^6 and s < 2^31 fit). Balance is the same
// method with all weights 1, so shares differ by at most one among clusters
// not bounded by limits.
//
// The method is house-monotone: with the same input except Total+1, no share
// decreases, as long as the Min rule does not change which clusters take part,
// i.e. whenever Min is unset or Total >= n*Min (n = number of clusters).
//
// # Rule 2: ties
//
// Equal priorities are broken, in this order, by
//
//  1. preferring the cluster whose Previous share is greater than its current
//     share s (it held that unit before: stability, minimal movement);
//  2. the stable per-Seed order: ascending FNV-1a 64-bit hash of the bytes
//     Seed + "/" + clusterName, then ascending name.
//
// So the cluster that wins a tie is not always the alphabetically first one,
// and which one wins differs between PlacementManifestWorks and manifests
// (different Seeds) but never changes between reconciles of the same one.
//
// # Rule 3: Max
//
// A cluster whose share equals Max is no longer eligible. Units that no
// cluster can take are Unplaced.
//
// # Rule 4: Min
//
// A non-zero share is never below Min.
//
//   - If Total >= n*Min, every cluster starts with Min and the rest is
//     divided by rule 1 starting from s = Min.
//   - Otherwise only k = Total/Min (integer division) clusters take part:
//     they get Min each and all other clusters get 0. The remainder
//     Total - k*Min (< Min, so it could not open another cluster) goes to
//     those k clusters by rule 1, respecting Max. The k clusters are the first
//     k in this order: larger Previous share first (keep serving where the
//     workload already runs), then larger weight, then the per-Seed order of
//     rule 2.
//
// # Rule 5: zero weights
//
// A cluster with weight 0 while some participating cluster (a cluster that
// got the Min floor, or any cluster when there is no Min) has a positive
// weight gets its Min floor (if any) and never more; if all positive-weight
// clusters are at Max, the rest is Unplaced. If every participating cluster
// has weight 0 (e.g. all weights are 0), the units beyond the Min floor are
// divided among the participating clusters with equal weights (as Balance).
//
// Consequently Unplaced > 0 only if there are no clusters, or Max == 0, or
// Min > Max, or every cluster is in one of these states: its share is Max; its
// share is 0 and Unplaced < Min (the Min remainder cannot open a cluster); or
// it has weight 0 among participating clusters with positive weight and holds
// exactly its floor (Min or 0).
//
// # Rule 6: stability
//
// For Balance without limits, when clusters join or leave or the total
// changes, the number of units moved, sum over the clusters that stay of
// max(0, previous - new), is the minimum that any Balance result (shares q or
// q+1, q = Total/n) allows: every cluster gets q, and the Total mod n extra
// units go first to clusters whose Previous share is at least q+1 (rule 2).
// Example: Total 7 over a, b, c is 3/2/2; when d joins, a, b and c keep 2 each
// and d gets 1 (one unit moves, from a), rather than d taking 2.
//
// # Rule 7: performance
//
// Divide does not hand out units one by one from the floor. Each cluster has
// a strictly decreasing sequence of keys (priority, tie-break), one per
// further unit, and the sequential method hands out exactly the R largest
// keys (R = units beyond the floor). For a threshold λ on the priority, if at
// most R keys have a priority > λ, all of them are among the R largest,
// whatever the tie-break; so each cluster is first raised to its number of
// keys above λ (clamped to its floor and Max), which is a provable lower bound
// of its final share. λ = 1/(2t) is the Webster divisor form, with t a
// multiple of 2^-32; the key counts are exact integer (128-bit) arithmetic.
// t is searched from the estimate t = (R + floors - n/2)/W, one linear
// correction, then doubling and interpolation/bisection, each step an O(n)
// pass (usually two passes in total). The remaining units, at most n, are
// handed out one by one with a heap. The result is identical to the naive
// sequential method; the cost is O(n log n) for n clusters, independent of
// Total (which may be up to 2^31-1).
//
// # Rule 8: determinism
//
// The same Input gives the same Result, independent of the order of Clusters
// and of map iteration.
package split
