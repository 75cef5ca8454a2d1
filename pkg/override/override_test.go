package override

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestCompileProblems(t *testing.T) {
	tooMany := make([]workv1alpha1.ClusterOverride, workv1alpha1.MaxOverrides+1)
	for i := range tooMany {
		tooMany[i] = overrideWith("o"+strings.Repeat("x", i), add("/data/k", `"v"`))
	}
	manyPatches := make([]workv1alpha1.OverridePatch, workv1alpha1.MaxOverridePatches+1)
	for i := range manyPatches {
		manyPatches[i] = add("/data/k", `1`)
	}
	cases := map[string]struct {
		overrides []workv1alpha1.ClusterOverride
		want      []Problem // Message compared by prefix
	}{
		"valid": {
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("a", add("/data/k", `"v"`), remove("/data/old"), computed(workv1alpha1.OverridePatchReplace, "/data/n", `cluster.name`)),
				{Name: "b", Image: &workv1alpha1.ImageOverride{Registry: literal("mirror.example.com:5000/hub"), Tag: expression(`cluster.labels["tag"]`)}},
			},
		},
		"an operation other than add, replace or remove": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", workv1alpha1.OverridePatch{Op: "move", Path: "/data/k", Value: jsonValue(`1`)})},
			want:      []Problem{{Override: "a", Field: "spec.overrides[0].patches[0].op", Message: `"move" is not add, replace or remove`}},
		},
		"a path that is not a JSON Pointer": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", add("data/k", `1`), add("/data/~2", `1`), add("", `{}`))},
			want: []Problem{
				{Override: "a", Field: "spec.overrides[0].patches[0].path", Message: `"data/k" is not a JSON Pointer`},
				{Override: "a", Field: "spec.overrides[0].patches[1].path", Message: `"/data/~2" is not a JSON Pointer`},
				{Override: "a", Field: "spec.overrides[0].patches[2].path", Message: `"" is not a JSON Pointer`},
			},
		},
		"paths into the identity": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a", replace("/apiVersion", `"v2"`), replace("/kind", `"X"`),
				replace("/metadata", `{}`), replace("/metadata/name", `"x"`), remove("/metadata/namespace"), add("/metadata/labels/x", `"y"`))},
			want: []Problem{
				{Override: "a", Field: "spec.overrides[0].patches[0].path", Message: "/apiVersion touches the manifest's identity"},
				{Override: "a", Field: "spec.overrides[0].patches[1].path", Message: "/kind touches the manifest's identity"},
				{Override: "a", Field: "spec.overrides[0].patches[2].path", Message: "/metadata touches the manifest's identity"},
				{Override: "a", Field: "spec.overrides[0].patches[3].path", Message: "/metadata/name touches the manifest's identity"},
				{Override: "a", Field: "spec.overrides[0].patches[4].path", Message: "/metadata/namespace touches the manifest's identity"},
			},
		},
		"value and expression": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchAdd, Path: "/data/k", Value: jsonValue(`1`), Expression: `1`},
				workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchReplace, Path: "/data/k"},
				workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchRemove, Path: "/data/k", Value: jsonValue(`1`)},
				workv1alpha1.OverridePatch{Op: workv1alpha1.OverridePatchAdd, Path: "/data/k", Value: jsonValue(`{`)},
			)},
			want: []Problem{
				{Override: "a", Field: "spec.overrides[0].patches[0]", Message: "add takes exactly one of value and expression"},
				{Override: "a", Field: "spec.overrides[0].patches[1]", Message: "replace takes exactly one of value and expression"},
				{Override: "a", Field: "spec.overrides[0].patches[2]", Message: "a remove patch takes no value and no expression"},
				{Override: "a", Field: "spec.overrides[0].patches[3].value", Message: "not JSON"},
			},
		},
		"expressions that do not compile, return the wrong type or cost too much": {
			overrides: []workv1alpha1.ClusterOverride{overrideWith("a",
				computed(workv1alpha1.OverridePatchAdd, "/data/a", `cluster.lables["x"]`),
				computed(workv1alpha1.OverridePatchAdd, "/data/b", `b"bytes"`),
				computed(workv1alpha1.OverridePatchAdd, "/data/c", `cluster.labels.?region`),
				computed(workv1alpha1.OverridePatchAdd, "/data/d", `[1, 2].map(x, cluster.labels.map(k, cluster.labels.map(j, cluster.claims.map(c, c))))`),
			), {Name: "b", Image: &workv1alpha1.ImageOverride{Tag: expression(`cluster.shares`)}}},
			want: []Problem{
				{Override: "a", Field: "spec.overrides[0].patches[0].expression", Message: "line 1, column 8: undefined field 'lables'"},
				{Override: "a", Field: "spec.overrides[0].patches[1].expression", Message: "returns bytes: return a JSON value"},
				{Override: "a", Field: "spec.overrides[0].patches[2].expression", Message: "returns optional_type(string): return a JSON value"},
				{Override: "a", Field: "spec.overrides[0].patches[3].expression", Message: "may cost up to"},
				{Override: "b", Field: "spec.overrides[1].image.tag.expression", Message: "returns map(string, int): return a string"},
			},
		},
		"image parts": {
			overrides: []workv1alpha1.ClusterOverride{
				{Name: "a", Image: &workv1alpha1.ImageOverride{}},
				{Name: "b", Image: &workv1alpha1.ImageOverride{Registry: literal("mirror"), Repository: literal("Team/Web"), Tag: literal(".1")}},
				{Name: "c", Image: &workv1alpha1.ImageOverride{Tag: &workv1alpha1.OverrideValue{Value: "1", Expression: "'1'"}}},
			},
			want: []Problem{
				{Override: "a", Field: "spec.overrides[0].image", Message: "set at least one of registry, repository and tag"},
				{Override: "b", Field: "spec.overrides[1].image.registry.value", Message: `"mirror" is not a registry host`},
				{Override: "b", Field: "spec.overrides[1].image.repository.value", Message: `"Team/Web" is not a repository`},
				{Override: "b", Field: "spec.overrides[1].image.tag.value", Message: `".1" is not a tag`},
				{Override: "c", Field: "spec.overrides[2].image.tag", Message: "set exactly one of value and expression"},
			},
		},
		"names, selectors and empty overrides": {
			overrides: []workv1alpha1.ClusterOverride{
				overrideWith("Bad_Name", add("/data/k", `1`)),
				overrideWith("dup", add("/data/k", `1`)),
				overrideWith("dup", add("/data/k", `2`)),
				{Name: "empty"},
				{Name: "sel", Patches: []workv1alpha1.OverridePatch{add("/data/k", `1`)}, Clusters: &workv1alpha1.OverrideClusters{
					ClaimSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sometimes"}}}}},
			},
			want: []Problem{
				{Override: "Bad_Name", Field: "spec.overrides[0].name", Message: `"Bad_Name" is not a name`},
				{Override: "dup", Field: "spec.overrides[2].name", Message: "dup is also the name of spec.overrides[1]"},
				{Override: "empty", Field: "spec.overrides[3]", Message: "the override changes nothing"},
				{Override: "sel", Field: "spec.overrides[4].clusters.claimSelector", Message: `matchExpressions[0]: "Sometimes" is not In, NotIn, Exists or DoesNotExist`},
			},
		},
		"too many overrides and patches": {
			overrides: append(tooMany[:workv1alpha1.MaxOverrides:workv1alpha1.MaxOverrides], overrideWith("last", manyPatches...)),
			want: []Problem{
				{Field: "spec.overrides", Message: "33 overrides, more than the 32 allowed"},
				{Override: "last", Field: "spec.overrides[32].patches", Message: "33 patches, more than the 32 allowed"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Compile(tc.overrides)
			var got Problems
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Compile: %v is not Problems", err)
			}
			// Compare messages by their prefixes: the rest explains.
			for i := range got {
				if i < len(tc.want) && strings.HasPrefix(got[i].Message, tc.want[i].Message) {
					got[i].Message = tc.want[i].Message
				}
			}
			if diff := cmp.Diff(tc.want, []Problem(got)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelects(t *testing.T) {
	us := Cluster{Name: "us-1", Labels: map[string]string{"region": "us"}, Claims: map[string]string{"platform.open-cluster-management.io": "GCP"}}
	bare := Cluster{Name: "bare"}
	patch := []workv1alpha1.OverridePatch{add("/data/k", `1`)}
	set := mustCompile(t,
		workv1alpha1.ClusterOverride{Name: "every", Patches: patch},
		workv1alpha1.ClusterOverride{Name: "empty-clusters", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{}},
		workv1alpha1.ClusterOverride{Name: "names", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{Names: []string{"us-1", "bare"}}},
		workv1alpha1.ClusterOverride{Name: "labels", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}},
		workv1alpha1.ClusterOverride{Name: "claims", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			ClaimSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpIn, Values: []string{"AWS", "GCP"}}}}}},
		workv1alpha1.ClusterOverride{Name: "all-parts", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			Names:         []string{"eu-1", "us-1"},
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "us"}},
			ClaimSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"platform.open-cluster-management.io": "GCP"}}}},
		workv1alpha1.ClusterOverride{Name: "no-region", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpDoesNotExist}}}}},
		// A claim's value need not be a label value: the kube version claim of a k3s cluster.
		workv1alpha1.ClusterOverride{Name: "k3s", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			ClaimSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubeversion.open-cluster-management.io": "v1.29.3+k3s1"}}}},
		workv1alpha1.ClusterOverride{Name: "not-k3s", Patches: patch, Clusters: &workv1alpha1.OverrideClusters{
			ClaimSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "kubeversion.open-cluster-management.io", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"v1.29.3+k3s1"}},
				{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpExists}}}}},
	)
	k3s := Cluster{Name: "edge-1", Claims: map[string]string{"kubeversion.open-cluster-management.io": "v1.29.3+k3s1", "platform.open-cluster-management.io": "Other"}}
	cases := map[string]struct {
		cluster Cluster
		want    []string
	}{
		"eu by labels and claims":              {cluster: eu, want: []string{"every", "empty-clusters", "labels", "claims", "not-k3s"}},
		"us by name, claims and all":           {cluster: us, want: []string{"every", "empty-clusters", "names", "claims", "all-parts", "not-k3s"}},
		"a claim value that is no label value": {cluster: k3s, want: []string{"every", "empty-clusters", "no-region", "k3s"}},
		"no labels or claims: by name":         {cluster: bare, want: []string{"every", "empty-clusters", "names", "no-region"}},
		"an unknown cluster: empty only":       {cluster: Cluster{Name: "x"}, want: []string{"every", "empty-clusters", "no-region"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, i := range set.Selects(tc.cluster) {
				got = append(got, set.Name(i))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Selects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManifestMatches(t *testing.T) {
	ms := manifests(t, cfg, web)
	cases := map[string]struct {
		entry workv1alpha1.OverrideManifest
		want  []bool // cfg, web
	}{
		"empty: any":        {entry: workv1alpha1.OverrideManifest{}, want: []bool{true, true}},
		"by kind":           {entry: workv1alpha1.OverrideManifest{Kind: "Deployment"}, want: []bool{false, true}},
		"by group":          {entry: workv1alpha1.OverrideManifest{Group: "apps"}, want: []bool{false, true}},
		"by name":           {entry: workv1alpha1.OverrideManifest{Name: "cfg"}, want: []bool{true, false}},
		"by namespace":      {entry: workv1alpha1.OverrideManifest{Namespace: "default"}, want: []bool{true, true}},
		"another namespace": {entry: workv1alpha1.OverrideManifest{Namespace: "prod"}, want: []bool{false, false}},
		"all four":          {entry: workv1alpha1.OverrideManifest{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment"}, want: []bool{false, true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := []bool{ManifestMatches(tc.entry, ms[0]), ManifestMatches(tc.entry, ms[1])}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ManifestMatches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckTemplate(t *testing.T) {
	ms := manifests(t, cfg, web)
	split := map[int][]string{1: {".spec.replicas"}}
	onlyCfg := []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}}
	cases := map[string]struct {
		override workv1alpha1.ClusterOverride
		want     Problems
	}{
		"a patch beside the split field": {override: overrideWith("a", replace("/spec/paused", `true`))},
		"a patch at the split field": {
			override: overrideWith("a", replace("/spec/replicas", `5`)),
			want: Problems{{Override: "a", Field: "spec.overrides[0].patches[0].path",
				Message: "/spec/replicas touches .spec.replicas of Deployment.apps default/web, a split field: the split sets it per cluster (select other manifests, or patch below or beside it)"}},
		},
		"a patch above the split field": {
			override: overrideWith("a", replace("/spec", `{}`)),
			want: Problems{{Override: "a", Field: "spec.overrides[0].patches[0].path",
				Message: "/spec touches .spec.replicas of Deployment.apps default/web, a split field: the split sets it per cluster (select other manifests, or patch below or beside it)"}},
		},
		"the same path on manifests that are not split": {
			override: workv1alpha1.ClusterOverride{Name: "a", Manifests: onlyCfg, Patches: []workv1alpha1.OverridePatch{replace("/spec/replicas", `5`)}},
		},
		"an entry that matches no manifest": {
			override: workv1alpha1.ClusterOverride{Name: "a", Manifests: []workv1alpha1.OverrideManifest{{Name: "gone"}}, Patches: []workv1alpha1.OverridePatch{add("/data/x", `1`)}},
			want:     Problems{{Override: "a", Field: "spec.overrides[0].manifests[0]", Message: "matches no manifest of the template"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustCompile(t, tc.override).CheckTemplate(ms, split)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckTemplate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckTemplateImage(t *testing.T) {
	const (
		svc         = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},"spec":{"ports":[{"port":80}]}}`
		workloadRef = `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"ref","namespace":"default"},
"spec":{"workloadRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}}`
	)
	ms := manifests(t, cfg, web, svc, rollout, nightly, ray, workloadRef)
	img := &workv1alpha1.ImageOverride{Registry: literal("mirror.example.com")}
	selecting := func(entries ...workv1alpha1.OverrideManifest) workv1alpha1.ClusterOverride {
		return workv1alpha1.ClusterOverride{Name: "mirror", Manifests: entries, Image: img}
	}
	const looked = "it reads the containers and initContainers with an image of a Pod's .spec and of the .spec.template.spec and " +
		".spec.jobTemplate.spec.template.spec of other kinds"
	cases := map[string]struct {
		override workv1alpha1.ClusterOverride
		docs     []string // ms when empty
		want     Problems
	}{
		// Selecting every manifest means the workloads the short form reads: objects with containers elsewhere
		// beside them (a HelmRelease's values, a KEDA ScaledJob) do not stall the whole PMW.
		"every manifest: the workloads are rewritten, the RayCluster beside them is not held against it": {override: selecting()},
		"every manifest of a Deployment and a HelmRelease whose values hold initContainers": {
			override: selecting(),
			docs: []string{web, `{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"db","namespace":"default"},
"spec":{"values":{"initContainers":[{"name":"init","image":"busybox"}]}}}`},
		},
		"the RayCluster named beside the workloads: its containers are not rewritten": {
			override: selecting(workv1alpha1.OverrideManifest{Name: "web"}, workv1alpha1.OverrideManifest{Kind: "RayCluster"}),
			want: Problems{{Override: "mirror", Field: "spec.overrides[0].image",
				Message: "RayCluster.ray.io default/ray has containers at /spec/headGroupSpec/template/spec/containers, where the image short form " +
					"does not look (it reads the containers and initContainers of .spec.template.spec and .spec.jobTemplate.spec.template.spec): " +
					"their images would stay as they are. Leave RayCluster.ray.io default/ray out of this override's manifests and rewrite its " +
					"images with patches (replace /spec/headGroupSpec/template/spec/containers/0/image)"}},
		},
		"every manifest of a Deployment, its ConfigMap and its Service": {override: selecting(), docs: []string{web, cfg, svc}},
		"a Deployment and its ConfigMap by name":                        {override: selecting(workv1alpha1.OverrideManifest{Name: "web"}, workv1alpha1.OverrideManifest{Name: "cfg"})},
		"an Argo Rollout":                                               {override: selecting(workv1alpha1.OverrideManifest{Kind: "Rollout", Name: "web"})},
		"a custom kind shaped like a CronJob":                           {override: selecting(workv1alpha1.OverrideManifest{Kind: "NightlyReport"})},
		"the ConfigMap only": {
			override: selecting(workv1alpha1.OverrideManifest{Kind: "ConfigMap"}),
			want: Problems{{Override: "mirror", Field: "spec.overrides[0].image",
				Message: "finds no container to rewrite: " + looked + ", and the manifests it selects (ConfigMap default/cfg) have none. " +
					"Select the workloads whose images to rewrite in manifests, or remove image"}},
		},
		"the ConfigMap only, with patches too: the image part still does nothing": {
			override: workv1alpha1.ClusterOverride{Name: "mirror", Manifests: []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}}, Image: img,
				Patches: []workv1alpha1.OverridePatch{add("/data/x", `"1"`)}},
			want: Problems{{Override: "mirror", Field: "spec.overrides[0].image",
				Message: "finds no container to rewrite: " + looked + ", and the manifests it selects (ConfigMap default/cfg) have none. " +
					"Select the workloads whose images to rewrite in manifests, or remove image"}},
		},
		"a Rollout with a workloadRef and a Service": {
			override: selecting(workv1alpha1.OverrideManifest{Name: "ref"}, workv1alpha1.OverrideManifest{Kind: "Service"}),
			want: Problems{{Override: "mirror", Field: "spec.overrides[0].image",
				Message: "finds no container to rewrite: " + looked + ", and the manifests it selects (Service default/web, Rollout.argoproj.io default/ref) " +
					"have none. Select the workloads whose images to rewrite in manifests, or remove image"}},
		},
		"many manifests without containers": {
			override: selecting(),
			docs: []string{cfg, svc, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`,
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"}}`,
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e"}}`},
			want: Problems{{Override: "mirror", Field: "spec.overrides[0].image",
				Message: "finds no container to rewrite: " + looked + ", and the manifests it selects (ConfigMap default/cfg, Service default/web, " +
					"ConfigMap a, ConfigMap b, ConfigMap c and 2 more) have none. Select the workloads whose images to rewrite in manifests, or remove image"}},
		},
		"an entry that matches nothing is reported once": {
			override: selecting(workv1alpha1.OverrideManifest{Name: "gone"}),
			want:     Problems{{Override: "mirror", Field: "spec.overrides[0].manifests[0]", Message: "matches no manifest of the template"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := ms
			if len(tc.docs) > 0 {
				in = manifests(t, tc.docs...)
			}
			set := mustCompile(t, tc.override)
			got := set.CheckTemplate(in, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckTemplate (-want +got):\n%s", diff)
			}
			// A revision delivered already is not refused for an image that rewrites nothing, only for the rest.
			var rest Problems
			for _, p := range tc.want {
				if !strings.HasSuffix(p.Field, ".image") {
					rest = append(rest, p)
				}
			}
			if diff := cmp.Diff(rest, set.CheckDelivered(in, nil)); diff != "" {
				t.Errorf("CheckDelivered (-want +got):\n%s", diff)
			}
		})
	}
}
