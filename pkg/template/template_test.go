package template

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func raw(s ...string) []workv1.Manifest {
	out := make([]workv1.Manifest, 0, len(s))
	for _, r := range s {
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}})
	}
	return out
}

const (
	deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}`
	configMap  = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`
	namespace  = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"web"}}`
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		manifests []workv1.Manifest
		wantIDs   []string
		wantErr   string
	}{
		"objects":            {manifests: raw(deployment, configMap, namespace), wantIDs: []string{"Deployment.apps default/web", "ConfigMap default/web", "Namespace web"}},
		"not JSON":           {manifests: raw(configMap, `{"kind":`), wantErr: "manifest 1 is not a Kubernetes object"},
		"no kind":            {manifests: raw(`{"apiVersion":"v1","metadata":{"name":"x"}}`), wantErr: "manifest 0"},
		"no name":            {manifests: raw(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`), wantErr: "manifest 0 (ConfigMap) has no metadata.name"},
		"a list, not object": {manifests: raw(`[1,2]`), wantErr: "manifest 0 is not a Kubernetes object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.manifests)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, 0, len(got))
			for _, m := range got {
				ids = append(ids, m.ID())
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchStrategies(t *testing.T) {
	manifests, err := Parse(raw(deployment, configMap, namespace))
	if err != nil {
		t.Fatal(err)
	}
	entry := func(name, ns, group, kind string) workv1alpha1.DistributionStrategy {
		return workv1alpha1.DistributionStrategy{Name: name, Namespace: ns, Group: group, Kind: kind, Type: workv1alpha1.DistributionReplicate}
	}
	cases := map[string]struct {
		strategies  []workv1alpha1.DistributionStrategy
		wantMatched map[int]int // manifest index -> entry index
		wantReasons []string
	}{
		"kind picks one of two manifests of the same name": {
			strategies:  []workv1alpha1.DistributionStrategy{entry("web", "default", "", "Deployment")},
			wantMatched: map[int]int{0: 0},
		},
		"group and kind": {
			strategies:  []workv1alpha1.DistributionStrategy{entry("web", "default", "apps", "Deployment"), entry("web", "default", "", "ConfigMap")},
			wantMatched: map[int]int{0: 0, 1: 1},
		},
		"cluster-scoped manifest has no namespace": {
			strategies:  []workv1alpha1.DistributionStrategy{entry("web", "", "", "")},
			wantMatched: map[int]int{2: 0},
		},
		"ambiguous entry matches nothing and is reported": {
			strategies:  []workv1alpha1.DistributionStrategy{entry("web", "default", "", "")},
			wantMatched: map[int]int{},
			wantReasons: []string{workv1alpha1.ReasonStrategyMatchesManyManifests},
		},
		"entry for a missing manifest is reported": {
			strategies:  []workv1alpha1.DistributionStrategy{entry("api", "default", "", ""), entry("web", "default", "batch", "Deployment")},
			wantMatched: map[int]int{},
			wantReasons: []string{workv1alpha1.ReasonStrategyMatchesNoManifest, workv1alpha1.ReasonStrategyMatchesNoManifest},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			matched, problems := MatchStrategies(manifests, tc.strategies)
			got := map[int]int{}
			for idx, s := range matched {
				for i := range tc.strategies {
					if s == &tc.strategies[i] {
						got[idx] = i
					}
				}
			}
			if diff := cmp.Diff(tc.wantMatched, got); diff != "" {
				t.Errorf("matched (-want +got):\n%s", diff)
			}
			var reasons []string
			for _, p := range problems {
				reasons = append(reasons, p.Reason)
			}
			if diff := cmp.Diff(tc.wantReasons, reasons); diff != "" {
				t.Errorf("problem reasons (-want +got):\n%s", diff)
			}
		})
	}
}
