package controllers

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// overridesFleet are four clusters: a and c in region eu, b in us on AWS, d without labels or claims.
var overridesFleet = map[string]override.Cluster{
	"a": {Labels: map[string]string{"region": "eu"}},
	"b": {Labels: map[string]string{"region": "us"}, Claims: map[string]string{"platform.open-cluster-management.io": "AWS"}},
	"c": {Labels: map[string]string{"region": "eu"}},
	"d": {},
}

// overridesPMW splits 6 replicas of a Deployment that an HPA with minReplicas 4 scales, with three overrides:
// a regional registry by label, an environment variable by claim, and a patch that fails on c (its path is
// missing).
func overridesPMW(rollout *clusterv1alpha1.RolloutStrategy) *workv1alpha1.PlacementManifestWork {
	raw := func(s string) *workv1alpha1.JSON { return &workv1alpha1.JSON{Raw: []byte(s)} }
	p := framework.MakePMW("web", "ns").Placement("p").
		Manifest(framework.Deployment("web", "default", 6)).
		Manifest(framework.HPA("web", "default", "web", 4, 10)).
		Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Deployment", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).
		Overrides(
			workv1alpha1.ClusterOverride{Name: "mirror",
				Clusters:  &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: nil, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpExists}}}},
				Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Image:     &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Expression: `cluster.labels["region"] + ".mirror.example.com"`}}},
			workv1alpha1.ClusterOverride{Name: "cloud",
				Clusters:  &workv1alpha1.OverrideClusters{ClaimSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"platform.open-cluster-management.io": "AWS"}}},
				Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchAdd, Path: "/spec/template/spec/containers/0/env",
					Value: raw(`[{"name":"CLOUD","value":"aws"}]`)}}},
			workv1alpha1.ClusterOverride{Name: "paused",
				Clusters:  &workv1alpha1.OverrideClusters{Names: []string{"c"}},
				Manifests: []workv1alpha1.OverrideManifest{{Kind: "Deployment"}},
				Patches:   []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/paused", Value: raw(`true`)}}},
		).Obj()
	p.UID, p.Generation = "uid", 1
	p.Spec.RolloutStrategy = rollout
	return p
}

// overridesInputs are the inputs gather would read for the fleet, with the given works.
func overridesInputs(t testing.TB, p *workv1alpha1.PlacementManifestWork, fleet map[string]override.Cluster, owned map[string]*workv1.ManifestWork) *inputs {
	t.Helper()
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	set, err := override.Compile(p.Spec.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	clusters := make([]string, 0, len(fleet))
	for c := range fleet {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	if owned == nil {
		owned = map[string]*workv1.ManifestWork{}
	}
	decision := decisionOf(clusters...)
	return &inputs{placementName: "p", placementFound: true, clusters: clusters, owned: owned, shares: ownedShares(owned),
		template: manifests, overrides: set, workName: "w",
		placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
		decisions: []clusterv1beta1.PlacementDecision{decision},
		planInput: planner.Input{Overrides: set, ClusterFacts: fleet}}
}

// manifestOf decodes the manifest of the given kind in a cluster's planned manifests.
func manifestOf(t *testing.T, ms []workv1.Manifest, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, m := range ms {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() == kind {
			return u
		}
	}
	t.Fatalf("no %s in %d manifests", kind, len(ms))
	return nil
}

// TestDesiredStateOverrides: after the split each cluster gets its companions apportioned and its overrides
// applied; a cluster where an override fails gets nothing; the status counts them.
func TestDesiredStateOverrides(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	p := overridesPMW(nil)
	in := overridesInputs(t, p, overridesFleet, nil)
	d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desiredState: %v %v", err, invalid)
	}

	type clusterWant struct {
		image       string
		env         bool
		minReplicas int64
		maxReplicas int64
	}
	got := map[string]clusterWant{}
	for c, ms := range d.plan.Manifests {
		dep, hpa := manifestOf(t, ms, "Deployment"), manifestOf(t, ms, "HorizontalPodAutoscaler")
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		container := containers[0].(map[string]any)
		minR, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "minReplicas")
		maxR, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "maxReplicas")
		_, env := container["env"]
		got[c] = clusterWant{image: container["image"].(string), env: env, minReplicas: minR, maxReplicas: maxR}
	}
	// 6 replicas over 4 clusters: 2, 2, 1, 1; the HPA's 4 and 10 follow (ceil, at most the share for min).
	want := map[string]clusterWant{
		"a": {image: "eu.mirror.example.com/app:1", minReplicas: 2, maxReplicas: 4},
		"b": {image: "us.mirror.example.com/app:1", env: true, minReplicas: 2, maxReplicas: 4},
		"d": {image: "registry.example/app:1", minReplicas: 1, maxReplicas: 2},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(clusterWant{})); diff != "" {
		t.Errorf("per-cluster manifests (-want +got):\n%s", diff)
	}
	if ce := d.plan.OverrideFailures["c"]; ce == nil || len(ce.Failures) != 1 || ce.Failures[0].Override != "paused" || ce.Failures[0].Cluster != "c" {
		t.Errorf("failures = %v, want paused on c", d.plan.OverrideFailures)
	}
	if diff := cmp.Diff([]workv1alpha1.SplitCompanion{{Kind: "HorizontalPodAutoscaler", Name: "web", Fields: []string{"spec.minReplicas", "spec.maxReplicas"}}},
		d.plan.Splits[0].Companions); diff != "" {
		t.Errorf("companions in the split status (-want +got):\n%s", diff)
	}
	wantStatus := []workv1alpha1.OverrideStatus{
		{Name: "mirror", Clusters: 2},
		{Name: "cloud", Clusters: 1},
		{Name: "paused", Failed: 1, FailedClusters: []string{"c"}},
	}
	st := override.Status(in.overrides, d.plan.OverrideOutcomes)
	for i := range st {
		st[i].Message = ""
	}
	if diff := cmp.Diff(wantStatus, st); diff != "" {
		t.Errorf("status.overrides (-want +got):\n%s", diff)
	}

	// Template hashes: d, which no override selects, has the PMW's; the others their own.
	hashes := map[string]string{}
	for _, c := range in.clusters {
		hashes[c] = d.clusterTemplateHash(c)
	}
	if hashes["d"] != d.builder.TemplateHash() || hashes["a"] == hashes["d"] || hashes["a"] == hashes["b"] || hashes["a"] == hashes["c"] {
		t.Errorf("template hashes %v, want d's the PMW's %s and a, b, c their own", hashes, d.builder.TemplateHash())
	}
}

// TestOverridesTemplateHashes: which changes are template changes for which clusters.
func TestOverridesTemplateHashes(t *testing.T) {
	hashesOf := func(p *workv1alpha1.PlacementManifestWork, fleet map[string]override.Cluster) map[string]string {
		in := overridesInputs(t, p, fleet, nil)
		d, _, _, err := desiredState(p, in, remembered{deliveredKnown: true}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range in.clusters {
			out[c] = d.clusterTemplateHash(c)
		}
		return out
	}
	relabel := func(cluster, region string) map[string]override.Cluster {
		out := map[string]override.Cluster{}
		for c, f := range overridesFleet {
			out[c] = f
		}
		out[cluster] = override.Cluster{Labels: map[string]string{"region": region}}
		return out
	}
	base := hashesOf(overridesPMW(nil), overridesFleet)
	cases := map[string]struct {
		pmw     *workv1alpha1.PlacementManifestWork
		fleet   map[string]override.Cluster
		changed []string
	}{
		"nothing changes": {pmw: overridesPMW(nil), fleet: overridesFleet},
		"a label that an expression reads changes that cluster only": {
			pmw: overridesPMW(nil), fleet: relabel("a", "us"), changed: []string{"a"},
		},
		"a label that makes an override select a cluster": {
			pmw: overridesPMW(nil), fleet: relabel("d", "eu"), changed: []string{"d"},
		},
		"an override's change reaches the clusters it selects": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := overridesPMW(nil)
				p.Spec.Overrides[1].Patches[0].Value.Raw = []byte(`[{"name":"CLOUD","value":"amazon"}]`)
				return p
			}(),
			fleet: overridesFleet, changed: []string{"b"},
		},
		"widening an override's selector changes no cluster whose result stays the same": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := overridesPMW(nil)
				p.Spec.Overrides[1].Clusters = &workv1alpha1.OverrideClusters{ClaimSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpIn, Values: []string{"AWS", "GCP"}}}}}
				return p
			}(),
			fleet: overridesFleet,
		},
		"naming one more cluster in an override changes that cluster only": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := overridesPMW(nil)
				p.Spec.Overrides[1].Clusters = &workv1alpha1.OverrideClusters{Names: []string{"b", "d"}}
				return p
			}(),
			fleet: overridesFleet, changed: []string{"d"},
		},
		"renaming an override changes no cluster": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := overridesPMW(nil)
				p.Spec.Overrides[0].Name = "regional-mirror"
				return p
			}(),
			fleet: overridesFleet,
		},
		"a cluster that joins changes every share, and only its own template hash": {
			pmw: overridesPMW(nil),
			fleet: func() map[string]override.Cluster {
				out := relabel("e", "eu")
				return out
			}(),
			changed: []string{"e"},
		},
		"splitCompanions Copy is a template change everywhere": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := overridesPMW(nil)
				p.Spec.SplitCompanions = workv1alpha1.SplitCompanionsCopy
				return p
			}(),
			fleet: overridesFleet, changed: []string{"a", "b", "c", "d"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := hashesOf(tc.pmw, tc.fleet)
			var changed []string
			for c, h := range got {
				if base[c] != h {
					changed = append(changed, c)
				}
			}
			sort.Strings(changed)
			if diff := cmp.Diff(tc.changed, changed); diff != "" {
				t.Errorf("clusters whose template hash changed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanWritesOverrides: the per-cluster template hash is what planWrites and the rollout compare; a
// cluster where an override fails gets no write.
func TestPlanWritesOverrides(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	progressive := &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
	// delivered are the works one reconcile writes for the fleet.
	delivered := func(p *workv1alpha1.PlacementManifestWork, fleet map[string]override.Cluster) map[string]*workv1.ManifestWork {
		in := overridesInputs(t, p, fleet, nil)
		d, _, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
		if err != nil {
			t.Fatal(err)
		}
		wp := planWrites(p, &observation{inputs: *in, desired: d}, nil, now)
		out := map[string]*workv1.ManifestWork{}
		for _, op := range wp.ops {
			out[op.cluster] = op.desired
		}
		return out
	}
	relabelB := map[string]override.Cluster{}
	for c, f := range overridesFleet {
		relabelB[c] = f
	}
	relabelB["b"] = override.Cluster{Labels: map[string]string{"region": "eu"}, Claims: overridesFleet["b"].Claims}

	type want struct {
		writes, templateChanges, upToDate []string
	}
	cases := map[string]struct {
		pmw   *workv1alpha1.PlacementManifestWork
		fleet map[string]override.Cluster
		owned map[string]*workv1.ManifestWork
		want  want
	}{
		"first reconcile: every cluster but the failing one gets its work": {
			pmw: overridesPMW(nil), fleet: overridesFleet,
			want: want{writes: []string{"a", "b", "d"}, templateChanges: []string{"a", "b", "d"}},
		},
		"at rest: nothing to write; the failing cluster is not up to date": {
			pmw: overridesPMW(nil), fleet: overridesFleet, owned: delivered(overridesPMW(nil), overridesFleet),
			want: want{upToDate: []string{"a", "b", "d"}},
		},
		"a label change is a template change for that cluster only": {
			pmw: overridesPMW(nil), fleet: relabelB, owned: delivered(overridesPMW(nil), overridesFleet),
			want: want{writes: []string{"b"}, templateChanges: []string{"b"}, upToDate: []string{"a", "d"}},
		},
		"the rollout strategy governs it: two clusters progress, so b waits": {
			pmw: overridesPMW(progressive), fleet: relabelB, owned: delivered(overridesPMW(nil), overridesFleet),
			want: want{upToDate: []string{"a", "d"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := overridesInputs(t, tc.pmw, tc.fleet, tc.owned)
			d, invalid, _, err := desiredState(tc.pmw, in, remembered{deliveredKnown: true}, now)
			if err != nil || invalid != nil {
				t.Fatalf("desiredState: %v %v", err, invalid)
			}
			wp := planWrites(tc.pmw, &observation{inputs: *in, desired: d}, nil, now)
			var got want
			for _, op := range wp.ops {
				got.writes = append(got.writes, op.cluster)
				if op.templateChange {
					got.templateChanges = append(got.templateChanges, op.cluster)
				}
				if h := op.desired.Annotations[workv1alpha1.AnnotationTemplateHash]; h != d.clusterTemplateHash(op.cluster) {
					t.Errorf("%s's work carries template hash %s, want its own %s", op.cluster, h, d.clusterTemplateHash(op.cluster))
				}
			}
			for c := range wp.upToDate {
				got.upToDate = append(got.upToDate, c)
			}
			sort.Strings(got.writes)
			sort.Strings(got.templateChanges)
			sort.Strings(got.upToDate)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
