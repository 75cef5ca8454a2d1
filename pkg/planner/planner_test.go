package planner

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

const (
	configMap = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"k":"v"}}`
	webKey    = "Deployment.apps default/web .spec.replicas"
)

func pmw(replicas int, strategies ...workv1alpha1.DistributionStrategy) *workv1alpha1.PlacementManifestWork {
	dep, _ := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"replicas": replicas},
	})
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid"},
		Spec: workv1alpha1.PlacementManifestWorkSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(configMap)}},
				{RawExtension: runtime.RawExtension{Raw: dep}},
			}}},
			DistributionStrategy: strategies,
		},
	}
}

func splitEntry(s workv1alpha1.SplitStrategy) workv1alpha1.DistributionStrategy {
	return workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Deployment", Type: workv1alpha1.DistributionSplit, Split: &s}
}

func replicasIn(t *testing.T, plan *Plan) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for cluster, ms := range plan.Manifests {
		obj := map[string]any{}
		if err := json.Unmarshal(ms[1].Raw, &obj); err != nil {
			t.Fatal(err)
		}
		out[cluster] = int64(obj["spec"].(map[string]any)["replicas"].(float64))
	}
	return out
}

func TestCompute(t *testing.T) {
	balance := workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}
	cases := map[string]struct {
		pmw          *workv1alpha1.PlacementManifestWork
		in           Input
		wantReplicas map[string]int64
		wantReasons  []string
		wantSplit    *workv1alpha1.SplitStatus
	}{
		"replicate by default": {
			pmw:          pmw(3),
			in:           Input{Clusters: []string{"c2", "c1", "c1"}},
			wantReplicas: map[string]int64{"c1": 3, "c2": 3},
		},
		"balance 3 over 2": {
			pmw:          pmw(3, splitEntry(balance)),
			in:           Input{Clusters: []string{"c1", "c2"}, Previous: map[string]map[string]int32{"c2": {webKey: 2}}},
			wantReplicas: map[string]int64{"c1": 1, "c2": 2},
			wantSplit: &workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment",
				FieldPath: ".spec.replicas", Total: 3, Placed: 3,
				Shares:   []workv1alpha1.ShareCount{{Share: 2, Clusters: 1}, {Share: 1, Clusters: 1}},
				Clusters: []workv1alpha1.ClusterShare{{Cluster: "c1", Share: 1}}},
		},
		"unplaced beyond max": {
			pmw:          pmw(7, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, LimitRange: &workv1alpha1.LimitRange{Max: ptr.To[int32](3)}})),
			in:           Input{Clusters: []string{"c1", "c2"}},
			wantReplicas: map[string]int64{"c1": 3, "c2": 3},
			wantReasons:  []string{workv1alpha1.ReasonReplicasUnplaced},
		},
		"weighted by name and selector, unmatched gets nothing": {
			pmw: pmw(8, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{
				{ClusterName: "c1", Weight: 3},
				{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "small"}}, Weight: 1},
			}})),
			in: Input{Clusters: []string{"c1", "c2", "c3"}, ClusterLabels: map[string]map[string]string{
				"c1": {"tier": "small"}, "c2": {"tier": "small"}, "c3": {"tier": "big"},
			}},
			wantReplicas: map[string]int64{"c1": 6, "c2": 2, "c3": 0},
		},
		"score weights; a missing score weighs 0": {
			pmw: pmw(10, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore,
				Score: &workv1alpha1.ScoreSource{ResourceName: "usage", ScoreName: "cpu"}})),
			in: Input{Clusters: []string{"c1", "c2", "c3"}, Scores: map[workv1alpha1.ScoreSource]map[string]int32{
				{ResourceName: "usage", ScoreName: "cpu"}: {"c1": 60, "c2": 40},
			}},
			wantReplicas: map[string]int64{"c1": 6, "c2": 4, "c3": 0},
		},
		"score: negative scores weigh 0, and all zero falls back to balance": {
			pmw: pmw(4, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore,
				Score: &workv1alpha1.ScoreSource{ResourceName: "usage", ScoreName: "cpu"}})),
			in: Input{Clusters: []string{"c1", "c2"}, Scores: map[workv1alpha1.ScoreSource]map[string]int32{
				{ResourceName: "usage", ScoreName: "cpu"}: {"c1": -50, "c2": 0},
			}},
			wantReplicas: map[string]int64{"c1": 2, "c2": 2},
		},
		"entry for no manifest is reported, the rest replicated": {
			pmw:          pmw(2, workv1alpha1.DistributionStrategy{Name: "api", Namespace: "default", Type: workv1alpha1.DistributionReplicate}),
			in:           Input{Clusters: []string{"c1"}},
			wantReplicas: map[string]int64{"c1": 2},
			wantReasons:  []string{workv1alpha1.ReasonStrategyMatchesNoManifest},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			manifests, err := ParseTemplate(tc.pmw)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Compute(tc.pmw, manifests, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantReplicas, replicasIn(t, plan)); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			var reasons []string
			for _, p := range plan.Problems {
				reasons = append(reasons, p.Reason)
			}
			if diff := cmp.Diff(tc.wantReasons, reasons); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tc.wantSplit != nil {
				if diff := cmp.Diff([]workv1alpha1.SplitStatus{*tc.wantSplit}, plan.Splits); diff != "" {
					t.Errorf("split status (-want +got):\n%s", diff)
				}
			}
			for cluster, ms := range plan.Manifests {
				if string(ms[0].Raw) != `{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}}` {
					t.Errorf("cluster %s: the replicated ConfigMap changed: %s", cluster, ms[0].Raw)
				}
			}
		})
	}
}

func TestComputeInvalid(t *testing.T) {
	broken := pmw(3)
	broken.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw = []byte(`{"kind":`)
	noField := pmw(3, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: ".spec.shards"}))
	// weighted weighs c1 by name and the clusters the second entry's selector (which the CRD admits) selects.
	weighted := func(req metav1.LabelSelectorRequirement) *workv1alpha1.PlacementManifestWork {
		return pmw(3, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{
			{ClusterName: "c1", Weight: 1},
			{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{req}}, Weight: 2},
		}}))
	}
	const selector = "spec.distributionStrategy[0].split.weights[1].clusterSelector: "
	cases := map[string]struct {
		pmw         *workv1alpha1.PlacementManifestWork
		wantReason  string
		wantMessage string
	}{
		"a manifest that is not an object": {pmw: broken, wantReason: workv1alpha1.ReasonInvalidTemplate},
		"a split field that is missing":    {pmw: noField, wantReason: workv1alpha1.ReasonInvalidSplitField},
		"a weights clusterSelector Exists with values": {
			pmw:         weighted(metav1.LabelSelectorRequirement{Key: "tier", Operator: metav1.LabelSelectorOpExists, Values: []string{"big"}}),
			wantReason:  workv1alpha1.ReasonInvalidSpec,
			wantMessage: selector + "values: Invalid value: [\"big\"]: values set must be empty for exists and does not exist",
		},
		"a weights clusterSelector In without values": {
			pmw:         weighted(metav1.LabelSelectorRequirement{Key: "tier", Operator: metav1.LabelSelectorOpIn}),
			wantReason:  workv1alpha1.ReasonInvalidSpec,
			wantMessage: selector + "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
		},
		"a weights clusterSelector with an unknown operator": {
			pmw:         weighted(metav1.LabelSelectorRequirement{Key: "tier", Operator: "Like", Values: []string{"big"}}),
			wantReason:  workv1alpha1.ReasonInvalidSpec,
			wantMessage: selector + "\"Like\" is not a valid label selector operator",
		},
		"a weights clusterSelector whose key is not a label key": {
			pmw:         weighted(metav1.LabelSelectorRequirement{Key: "a b", Operator: metav1.LabelSelectorOpExists}),
			wantReason:  workv1alpha1.ReasonInvalidSpec,
			wantMessage: selector + "key: Invalid value: \"a b\"",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			manifests, err := ParseTemplate(tc.pmw)
			if err == nil {
				_, err = Compute(tc.pmw, manifests, Input{Clusters: []string{"c1"}})
			}
			var invalid *InvalidError
			if !errors.As(err, &invalid) || invalid.Reason != tc.wantReason {
				t.Fatalf("Compute error = %v, want an InvalidError with reason %s", err, tc.wantReason)
			}
			if !strings.Contains(invalid.Message, tc.wantMessage) {
				t.Errorf("message %q, want it to contain %q", invalid.Message, tc.wantMessage)
			}
		})
	}
}

func TestSplitStatusIsBounded(t *testing.T) {
	clusters := make([]string, 0, 1000)
	for i := range 1000 {
		clusters = append(clusters, "cluster-"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))
	}
	p := pmw(1500, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}))
	manifests, err := ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compute(p, manifests, Input{Clusters: clusters})
	if err != nil {
		t.Fatal(err)
	}
	st := plan.Splits[0]
	if len(st.Clusters) != maxListedClusters || st.ClustersNotListed != 500-maxListedClusters {
		t.Errorf("listed %d clusters and %d not listed; want %d and %d", len(st.Clusters), st.ClustersNotListed, maxListedClusters, 500-maxListedClusters)
	}
	if diff := cmp.Diff([]workv1alpha1.ShareCount{{Share: 2, Clusters: 500}, {Share: 1, Clusters: 500}}, st.Shares); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
}

func TestComputeRejectsWorksOverTheSizeLimit(t *testing.T) {
	p := pmw(3)
	manifests, err := ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Compute(p, manifests, Input{Clusters: []string{"c1"}})
	if err != nil {
		t.Fatal(err)
	}
	jsonSize, ocmSize := 0, 0
	for _, m := range plan.Manifests["c1"] {
		jsonSize += len(m.Raw)
		ocmSize += 1 + len(m.Raw) + len(binary.AppendUvarint(nil, uint64(len(m.Raw)))) // OCM's ValidateManifests
	}
	cases := map[string]struct {
		limit   int
		wantErr bool
	}{
		"under the limit":        {limit: 10_000},
		"over a small limit":     {limit: 100, wantErr: true},
		"the default is 500 KiB": {limit: 0},
		// OCM's webhook counts each manifest's protobuf size: its JSON plus a tag and a length.
		"at the JSON's size, over the limit as OCM counts": {limit: jsonSize, wantErr: true},
		"at the size OCM counts":                           {limit: ocmSize},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Compute(p, manifests, Input{Clusters: []string{"c1"}, MaxManifestBytes: tc.limit})
			var invalid *InvalidError
			if got := errors.As(err, &invalid) && invalid.Reason == workv1alpha1.ReasonManifestWorkTooLarge; got != tc.wantErr {
				t.Errorf("Compute error = %v, want too large: %v", err, tc.wantErr)
			}
		})
	}
}

func TestUnplacedMessageNamesTheLimitThatBinds(t *testing.T) {
	cases := map[string]struct {
		limits *workv1alpha1.LimitRange
		total  int
		want   string
	}{
		"total below min":     {limits: &workv1alpha1.LimitRange{Min: ptr.To[int32](5)}, total: 3, want: "below limitRange.min 5"},
		"more than max takes": {limits: &workv1alpha1.LimitRange{Max: ptr.To[int32](1)}, total: 5, want: "within limitRange.max"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan, err := Compute(pmw(tc.total, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, LimitRange: tc.limits})),
				mustParse(t, pmw(tc.total)), Input{Clusters: []string{"a", "b"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Problems) != 1 || !strings.Contains(plan.Problems[0].Message, tc.want) {
				t.Fatalf("problems = %+v, want one naming %q", plan.Problems, tc.want)
			}
		})
	}
}

func TestDeliveredSplits(t *testing.T) {
	p := pmw(6, splitEntry(workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}))
	plan, err := Compute(p, mustParse(t, p), Input{Clusters: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		delivered  map[string]map[string]int32
		failedOver map[string]bool
		want       workv1alpha1.SplitStatus
	}{
		"as planned": {
			delivered: map[string]map[string]int32{"a": {webKey: 2}, "b": {webKey: 2}, "c": {webKey: 2}},
			want: workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", FieldPath: ".spec.replicas",
				Total: 6, Placed: 6, Shares: []workv1alpha1.ShareCount{{Share: 2, Clusters: 3}}},
		},
		"one cluster held without a work yet, one on its earlier share": {
			delivered: map[string]map[string]int32{"a": {webKey: 3}, "b": {webKey: 2}},
			want: workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", FieldPath: ".spec.replicas",
				Total: 6, Placed: 5, Shares: []workv1alpha1.ShareCount{{Share: 3, Clusters: 1}, {Share: 2, Clusters: 1}, {Share: 0, Clusters: 1}},
				Clusters: []workv1alpha1.ClusterShare{{Cluster: "b", Share: 2}, {Cluster: "c", Share: 0}}},
		},
		"a failed-over cluster's share is kept, not placed": {
			delivered:  map[string]map[string]int32{"a": {webKey: 3}, "b": {webKey: 3}, "c": {webKey: 2}},
			failedOver: map[string]bool{"c": true},
			want: workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment", FieldPath: ".spec.replicas",
				Total: 6, Placed: 6, FailedOver: 2, Shares: []workv1alpha1.ShareCount{{Share: 3, Clusters: 2}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DeliveredSplits(plan, tc.delivered, []string{"a", "b", "c"}, tc.failedOver)
			if diff := cmp.Diff([]workv1alpha1.SplitStatus{tc.want}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func mustParse(t *testing.T, p *workv1alpha1.PlacementManifestWork) []template.Manifest {
	t.Helper()
	ms, err := ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}
