package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		cfg     Config
		wantErr bool
	}{
		"defaults":              {cfg: Config{}.withDefaults()},
		"failing clusters":      {cfg: Config{Clusters: 5, FailApply: []string{"cluster2"}, NeverReady: []string{"cluster3"}}},
		"zero clusters":         {cfg: Config{Clusters: 0}, wantErr: true},
		"too many clusters":     {cfg: Config{Clusters: MaxClusters + 1}, wantErr: true},
		"unknown cluster":       {cfg: Config{Clusters: 3, FailApply: []string{"cluster4"}}, wantErr: true},
		"cluster in both flags": {cfg: Config{Clusters: 3, FailApply: []string{"cluster1"}, NeverReady: []string{"cluster1"}}, wantErr: true},
		"bad namespace":         {cfg: Config{Clusters: 3, Namespaces: []string{"Team_A"}}, wantErr: true},
		"once with a duration":  {cfg: Config{Clusters: 3, Once: true, Duration: 1}, wantErr: true},
		"negative ready delay":  {cfg: Config{Clusters: 3, ReadyDelay: -1}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err != nil) != tc.wantErr {
				t.Errorf("Validate() = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

func TestBehaviors(t *testing.T) {
	got := Config{Clusters: 3, FailApply: []string{"cluster2"}, NeverReady: []string{"cluster3"}}.Behaviors()
	want := map[string]Behavior{"cluster1": BehaviorHealthy, "cluster2": BehaviorFailApply, "cluster3": BehaviorNeverReady}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("behaviors (-want +got):\n%s", diff)
	}
}

func TestBoundNamespaces(t *testing.T) {
	got := Config{Namespaces: []string{"team-b", "default", "team-a"}}.BoundNamespaces()
	if diff := cmp.Diff([]string{"default", "team-a", "team-b"}, got); diff != "" {
		t.Errorf("bound namespaces (-want +got):\n%s", diff)
	}
}

func TestSplitList(t *testing.T) {
	cases := map[string][]string{
		"":                               nil,
		"cluster2":                       {"cluster2"},
		" cluster3, cluster1,,cluster3 ": {"cluster1", "cluster3"}, //nolint:gocritic // mapKey: the spaces are the input SplitList trims
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, SplitList(in)); diff != "" {
			t.Errorf("SplitList(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestClusterLabels(t *testing.T) {
	var regions []string
	for i, n := range ClusterNames(4) {
		regions = append(regions, ClusterLabels(n, i)[LabelRegion])
	}
	if diff := cmp.Diff([]string{"us-east", "eu-west", "ap-south", "us-east"}, regions); diff != "" {
		t.Errorf("regions (-want +got):\n%s", diff)
	}
}

// The repository's samples are what the sandbox applies and what its smoke test checks.
func TestLoadSamples(t *testing.T) {
	objs, err := LoadSamples("../../config/samples")
	if err != nil {
		t.Fatal(err)
	}
	want := []types.NamespacedName{{Namespace: "default", Name: "hello"}, {Namespace: "default", Name: "web"}}
	if diff := cmp.Diff(want, SamplePMWs(objs)); diff != "" {
		t.Errorf("sample PlacementManifestWorks (-want +got):\n%s", diff)
	}
}
