package planner

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// The fuzzer runs as an ordinary test on its seeds and on the corpus committed under testdata/fuzz/FuzzCompute;
// `go test -fuzz=FuzzCompute ./pkg/planner` explores further.

// Flags of FuzzCompute.
const (
	fuzzSmallTotal   = 1 << iota // totals % 1000 (else up to 2^31-1)
	fuzzWeighted                 // split type Weighted, unless fuzzScore is set too
	fuzzScore                    // split type Score (neither flag: Balance)
	fuzzMin                      // set limitRange.min
	fuzzMax                      // set limitRange.max
	fuzzSecondSplit              // a second split manifest, on a custom field path
	fuzzDuplicates               // repeat some cluster names in the input
	fuzzNoDeployment             // point the first split's entry at no manifest (a problem, not an error)
)

const fuzzScoreSource = "usage"

// fuzzPMW is a PlacementManifestWork with a replicated ConfigMap, a Deployment whose replicas are split, and
// optionally a custom resource whose .spec.workers.count is split too.
func fuzzPMW(total, second int32, flags uint8, split workv1alpha1.SplitStrategy) *workv1alpha1.PlacementManifestWork {
	raw := func(obj map[string]any) workv1.Manifest {
		b, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: b}}
	}
	manifests := []workv1.Manifest{
		raw(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cfg", "namespace": "default"}, "data": map[string]any{"k": "v"}}),
		raw(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default"}, "spec": map[string]any{"replicas": total}}),
	}
	entryName := "web"
	if flags&fuzzNoDeployment != 0 {
		entryName = "absent"
	}
	s := split
	strategies := []workv1alpha1.DistributionStrategy{{Name: entryName, Namespace: "default", Kind: "Deployment",
		Type: workv1alpha1.DistributionSplit, Split: &s}}
	if flags&fuzzSecondSplit != 0 {
		manifests = append(manifests, raw(map[string]any{"apiVersion": "example.com/v1", "kind": "Pool",
			"metadata": map[string]any{"name": "pool"}, "spec": map[string]any{"workers": map[string]any{"count": second}}}))
		strategies = append(strategies, workv1alpha1.DistributionStrategy{Name: "pool", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: ".spec.workers.count"}})
	}
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Namespace: "ns", UID: "0c3f4c3e-fuzz"},
		Spec: workv1alpha1.PlacementManifestWorkSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: manifests}},
			DistributionStrategy: strategies,
		},
	}
}

// FuzzCompute plans arbitrary splits: totals, limits, cluster counts (with duplicates), weights by name and by
// label, scores, previous shares and failed-over clusters. Compute must not panic or fail on a valid template;
// every decided cluster gets every manifest; each split places exactly its total minus what it reports
// unplaced, and nothing is unplaced unless a problem says so; every cluster's manifest carries its share
// within the limits; the failed-over clusters keep their previous shares; and the plan is deterministic.
func FuzzCompute(f *testing.F) {
	f.Add(uint32(6), uint8(3), int32(0), int32(0), uint8(fuzzSmallTotal), []byte{}, []byte{}, uint64(0), uint32(0))
	f.Add(uint32(7), uint8(2), int32(0), int32(3), uint8(fuzzSmallTotal|fuzzMax), []byte{}, []byte{}, uint64(0), uint32(0))
	f.Add(uint32(8), uint8(3), int32(0), int32(0), uint8(fuzzSmallTotal|fuzzWeighted), []byte{3, 1, 0}, []byte{}, uint64(0), uint32(0))
	f.Add(uint32(10), uint8(3), int32(0), int32(0), uint8(fuzzSmallTotal|fuzzScore), []byte{60, 40, 200}, []byte{}, uint64(0), uint32(0))
	f.Add(uint32(5), uint8(4), int32(2), int32(4), uint8(fuzzSmallTotal|fuzzMin|fuzzMax), []byte{}, []byte{1, 2, 2, 0}, uint64(0b10), uint32(9))
	f.Add(uint32(12), uint8(6), int32(1), int32(0), uint8(fuzzSmallTotal|fuzzMin|fuzzSecondSplit|fuzzDuplicates), []byte{}, []byte{5, 5}, uint64(0b101), uint32(7))
	f.Add(uint32(0), uint8(0), int32(0), int32(0), uint8(fuzzSmallTotal), []byte{}, []byte{}, uint64(0), uint32(0))
	f.Add(uint32(3), uint8(5), int32(0), int32(0), uint8(fuzzSmallTotal|fuzzNoDeployment|fuzzSecondSplit), []byte{}, []byte{}, uint64(0), uint32(4))
	f.Add(uint32(math.MaxInt32), uint8(63), int32(1000), int32(1<<29), uint8(fuzzMin|fuzzMax|fuzzWeighted), []byte{255, 7, 3, 200}, []byte{1, 2, 3}, uint64(math.MaxUint64), uint32(math.MaxInt32))
	f.Add(uint32(9), uint8(3), int32(-4), int32(-1), uint8(fuzzSmallTotal|fuzzMin|fuzzMax), []byte{}, []byte{}, uint64(0), uint32(0))

	f.Fuzz(func(t *testing.T, total uint32, n uint8, minV, maxV int32, flags uint8, weights, prev []byte, failedMask uint64, second uint32) {
		tot := int32(total & math.MaxInt32)
		if flags&fuzzSmallTotal != 0 {
			tot %= 1000
		}
		secondTotal := int32(second & math.MaxInt32)
		if flags&fuzzSmallTotal != 0 {
			secondTotal %= 1000
		}

		var clusters []string
		for i := range int(n % 64) {
			clusters = append(clusters, fmt.Sprintf("cluster-%02d", i))
		}
		if flags&fuzzDuplicates != 0 && len(clusters) > 0 {
			clusters = append(clusters, clusters[0], clusters[len(clusters)/2])
		}
		distinct := map[string]bool{}
		for _, c := range clusters {
			distinct[c] = true
		}

		spec := workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}
		in := Input{Clusters: clusters}
		switch {
		case flags&fuzzWeighted != 0 && flags&fuzzScore == 0:
			// Byte i weighs cluster i: by name when even, by a label selector (tier=<byte/2%4>) when odd.
			spec.Type = workv1alpha1.SplitWeighted
			in.ClusterLabels = map[string]map[string]string{}
			for i, b := range weights {
				if i < len(clusters) {
					in.ClusterLabels[clusters[i]] = map[string]string{"tier": fmt.Sprint(b / 2 % 4)}
				}
				w := workv1alpha1.ClusterWeight{Weight: int32(b) * int32(b)}
				if b%2 == 0 && i < len(clusters) {
					w.ClusterName = clusters[i]
				} else {
					w.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": fmt.Sprint(b / 2 % 4)}}
				}
				spec.Weights = append(spec.Weights, w)
			}
		case flags&fuzzScore != 0:
			spec.Type = workv1alpha1.SplitScore
			spec.Score = &workv1alpha1.ScoreSource{ResourceName: fuzzScoreSource, ScoreName: "cpu"}
			scores := map[string]int32{}
			for i, b := range weights {
				if i < len(clusters) {
					scores[clusters[i]] = int32(int8(b)) // -128..127: beyond OCM's -100..100 on purpose
				}
			}
			in.Scores = map[workv1alpha1.ScoreSource]map[string]int32{*spec.Score: scores}
		}
		if flags&(fuzzMin|fuzzMax) != 0 {
			spec.LimitRange = &workv1alpha1.LimitRange{}
			if flags&fuzzMin != 0 {
				spec.LimitRange.Min = &minV
			}
			if flags&fuzzMax != 0 {
				spec.LimitRange.Max = &maxV
			}
		}
		p := fuzzPMW(tot, secondTotal, flags, spec)
		manifests, err := ParseTemplate(p)
		if err != nil {
			t.Fatalf("the fuzz template does not parse: %v", err)
		}
		keys := splitKeys(t, manifests, p)

		if len(prev) > 0 {
			in.Previous = map[string]map[string]int32{"gone": {keys[0]: int32(prev[0])}}
			for i, b := range prev[1:] {
				if i < len(clusters) {
					in.Previous[clusters[i]] = map[string]int32{}
					for _, k := range keys {
						in.Previous[clusters[i]][k] = int32(b) - 8 // some negative: a corrupt annotation
					}
				}
			}
		}
		for i, c := range clusters {
			if i < 64 && failedMask&(1<<i) != 0 {
				if in.FailedOver == nil {
					in.FailedOver = map[string]bool{}
				}
				in.FailedOver[c] = true
			}
		}

		plan, err := Compute(p, manifests, in)
		if err != nil {
			t.Fatalf("Compute failed on a valid template: %v", err)
		}
		again, err := Compute(p, manifests, in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(plan, again); diff != "" {
			t.Fatalf("Compute is not deterministic (-first +second):\n%s", diff)
		}

		// Every decided cluster, and only those, gets every manifest; replicated ones unchanged.
		if len(plan.Manifests) != len(distinct) {
			t.Fatalf("%d clusters planned for %d decided", len(plan.Manifests), len(distinct))
		}
		for c := range distinct {
			ms, ok := plan.Manifests[c]
			if !ok || len(ms) != len(manifests) {
				t.Fatalf("cluster %s gets %d manifests of %d", c, len(ms), len(manifests))
			}
			if string(ms[0].Raw) != string(p.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw) {
				t.Fatalf("cluster %s: the replicated ConfigMap changed: %s", c, ms[0].Raw)
			}
		}

		unplacedProblem := false
		for _, pr := range plan.Problems {
			if pr.Reason == workv1alpha1.ReasonReplicasUnplaced {
				unplacedProblem = true
			}
		}
		anyUnplaced := false
		for _, st := range plan.Splits {
			idx, fieldPath := manifestIndex(t, manifests, st)
			key := SplitKey(manifests[idx], fieldPath)

			if st.Placed < 0 || st.Unplaced < 0 || int64(st.Placed)+int64(st.Unplaced) != int64(st.Total) {
				t.Fatalf("%s: placed %d + unplaced %d != total %d", key, st.Placed, st.Unplaced, st.Total)
			}
			if st.Unplaced > 0 {
				anyUnplaced = true
			}
			var placed, keptOnFailedOver int64
			var counted int32
			for c := range distinct {
				share, ok := plan.Shares[c][key]
				if !ok {
					t.Fatalf("%s: cluster %s has no share", key, c)
				}
				if got := fieldIn(t, plan.Manifests[c][idx], fieldPath); got != int64(share) {
					t.Fatalf("%s: cluster %s's manifest carries %d, its share is %d", key, c, got, share)
				}
				if in.FailedOver[c] {
					// A failed-over cluster keeps the share its work carries, as recorded (0 when none).
					if want := in.Previous[c][key]; share != want {
						t.Fatalf("%s: failed-over cluster %s got %d, not its previous share %d", key, c, share, want)
					}
					keptOnFailedOver += int64(share)
					continue
				}
				placed += int64(share)
				if share < 0 {
					t.Fatalf("%s: cluster %s got a negative share %d", key, c, share)
				}
				if lr := p.Spec.DistributionStrategy[0].Split.LimitRange; lr != nil && fieldPath == workv1alpha1.DefaultSplitFieldPath {
					if lr.Max != nil && share > max(*lr.Max, 0) {
						t.Fatalf("%s: cluster %s got %d, above max %d", key, c, share, *lr.Max)
					}
					if lr.Min != nil && *lr.Min > 0 && share != 0 && share < *lr.Min {
						t.Fatalf("%s: cluster %s got %d, below min %d", key, c, share, *lr.Min)
					}
				}
			}
			if placed != int64(st.Placed) {
				t.Fatalf("%s: the active clusters' shares sum to %d, status says placed %d", key, placed, st.Placed)
			}
			if keptOnFailedOver != int64(st.FailedOver) {
				t.Fatalf("%s: failed-over clusters keep %d, status says %d", key, keptOnFailedOver, st.FailedOver)
			}
			for _, sc := range st.Shares {
				counted += sc.Clusters
			}
			active := 0
			for c := range distinct {
				if !in.FailedOver[c] {
					active++
				}
			}
			if int(counted) != active {
				t.Fatalf("%s: status counts %d clusters by share, %d are active", key, counted, active)
			}
			if len(st.Clusters) > maxListedClusters {
				t.Fatalf("%s: status names %d clusters", key, len(st.Clusters))
			}
		}
		if anyUnplaced != unplacedProblem {
			t.Fatalf("unplaced units %v, but a ReplicasUnplaced problem %v", anyUnplaced, unplacedProblem)
		}
		if len(plan.Problems) == 0 {
			for _, st := range plan.Splits {
				if st.Placed != st.Total {
					t.Fatalf("no problem reported, yet %s places %d of %d", st.Name, st.Placed, st.Total)
				}
			}
		}
		wantSplits := 0
		if flags&fuzzNoDeployment == 0 {
			wantSplits++
		}
		if flags&fuzzSecondSplit != 0 {
			wantSplits++
		}
		if len(plan.Splits) != wantSplits {
			t.Fatalf("%d splits planned, want %d", len(plan.Splits), wantSplits)
		}
	})
}

// splitKeys are the SplitKeys of the template's split manifests.
func splitKeys(t *testing.T, manifests []template.Manifest, p *workv1alpha1.PlacementManifestWork) []string {
	t.Helper()
	matched, _ := template.MatchStrategies(manifests, p.Spec.DistributionStrategy)
	var keys []string
	for idx, s := range matched {
		fp := s.Split.FieldPath
		if fp == "" {
			fp = workv1alpha1.DefaultSplitFieldPath
		}
		keys = append(keys, SplitKey(manifests[idx], fp))
	}
	if len(keys) == 0 {
		keys = append(keys, "none")
	}
	sort.Strings(keys)
	return keys
}

// manifestIndex finds the template manifest a SplitStatus describes, and its field path.
func manifestIndex(t *testing.T, manifests []template.Manifest, st workv1alpha1.SplitStatus) (int, string) {
	t.Helper()
	for _, m := range manifests {
		if m.Object.GetName() == st.Name && m.Object.GetNamespace() == st.Namespace && m.GVK.Kind == st.Kind && m.GVK.Group == st.Group {
			return m.Index, st.FieldPath
		}
	}
	t.Fatalf("split status %+v names no manifest", st)
	return 0, ""
}

// fieldIn reads the integer at fieldPath of a planned manifest.
func fieldIn(t *testing.T, m workv1.Manifest, fieldPath string) int64 {
	t.Helper()
	parsed, err := template.Parse([]workv1.Manifest{m})
	if err != nil {
		t.Fatalf("a planned manifest does not parse: %v", err)
	}
	keys, err := template.FieldPathKeys(fieldPath)
	if err != nil {
		t.Fatal(err)
	}
	var node any = parsed[0].Object.Object
	for _, k := range keys {
		node = node.(map[string]any)[k]
	}
	switch v := node.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	default:
		t.Fatalf("%s is a %T", fieldPath, node)
		return 0
	}
}
