package bundle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// object is a manifest for tests; fields are set with set.
func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	o.SetName(name)
	if namespace != "" {
		o.SetNamespace(namespace)
	}
	return o
}

func set(o *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	if err := unstructured.SetNestedField(o.Object, value, path...); err != nil {
		panic(err)
	}
	return o
}

func labelled(o *unstructured.Unstructured, labels map[string]string) *unstructured.Unstructured {
	o.SetLabels(labels)
	return o
}

func annotated(o *unstructured.Unstructured, annotations map[string]string) *unstructured.Unstructured {
	o.SetAnnotations(annotations)
	return o
}

func deployment(namespace, name string, replicas int64) *unstructured.Unstructured {
	return set(object("apps/v1", "Deployment", namespace, name), replicas, "spec", "replicas")
}

// ids names the manifests of a PlacementManifestWork, in order.
func ids(t *testing.T, pmw *workv1alpha1.PlacementManifestWork) []string {
	t.Helper()
	var out []string
	for _, m := range pmw.Spec.ManifestWorkTemplate.Workload.Manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(m.Raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, objectID(o))
	}
	return out
}

func TestWrapNamespacesAndOrder(t *testing.T) {
	crd := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "quotas.example.com")
	set(crd, "Cluster", "spec", "scope")
	set(crd, "example.com", "spec", "group")
	set(crd, "Quota", "spec", "names", "kind")
	objs := []*unstructured.Unstructured{
		deployment("", "web", 2),
		object("v1", "ConfigMap", "elsewhere", "web"),
		object("rbac.authorization.k8s.io/v1", "ClusterRole", "apps", "reader"),
		object("example.com/v1", "Quota", "apps", "default"),
		object("example.com/v1", "Widget", "", "w"),
		object("other.io/v1", "Widget", "", "w"),
		object("cert-manager.io/v1", "ClusterIssuer", "", "le"),
		object("v1", "Namespace", "", "apps"),
		crd,
	}
	pmw, _, err := Wrap(objs, Options{Name: "web", Namespace: "apps", ClusterScoped: []string{"ClusterIssuer", "Widget.other.io"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Namespace apps",
		"ConfigMap elsewhere/web",
		"CustomResourceDefinition.apiextensions.k8s.io quotas.example.com",
		"ClusterRole.rbac.authorization.k8s.io reader",
		"Deployment.apps apps/web",
		"ClusterIssuer.cert-manager.io le",
		"Quota.example.com default",
		"Widget.example.com apps/w",
		"Widget.other.io w",
	}
	if diff := cmp.Diff(want, ids(t, pmw)); diff != "" {
		t.Errorf("manifests (-want +got):\n%s", diff)
	}
	if objs[0].GetNamespace() != "" {
		t.Errorf("Wrap modified its input: the Deployment has namespace %q", objs[0].GetNamespace())
	}
	wantDelete := &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{
			{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "quotas.example.com"}}}}
	if diff := cmp.Diff(wantDelete, pmw.Spec.ManifestWorkTemplate.DeleteOption); diff != "" {
		t.Errorf("deleteOption (-want +got):\n%s", diff)
	}
}

func TestWrapName(t *testing.T) {
	instance := func(o *unstructured.Unstructured, v string) *unstructured.Unstructured {
		return labelled(o, map[string]string{InstanceLabel: v})
	}
	cases := map[string]struct {
		opts    Options
		objs    []*unstructured.Unstructured
		want    string
		wantErr string
	}{
		"given": {opts: Options{Name: "web"}, objs: []*unstructured.Unstructured{deployment("", "a", 1)}, want: "web"},
		"from the instance label, objects without it ignored": {
			objs: []*unstructured.Unstructured{instance(deployment("", "a", 1), "shop"), object("v1", "ConfigMap", "", "c")}, want: "shop"},
		"instance labels differ": {
			objs:    []*unstructured.Unstructured{instance(deployment("", "a", 1), "shop"), instance(deployment("", "b", 1), "cart")},
			wantErr: "no name for the PlacementManifestWork: the manifests' app.kubernetes.io/instance labels differ (cart, shop); pass --name"},
		"no instance label": {
			objs:    []*unstructured.Unstructured{deployment("", "a", 1)},
			wantErr: "no name for the PlacementManifestWork: pass --name (no manifest has the app.kubernetes.io/instance label to take it from)"},
		"not a valid name": {opts: Options{Name: "Web_1"}, objs: []*unstructured.Unstructured{deployment("", "a", 1)},
			wantErr: `name "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); pass another --name`},
		"longer than 63 without a placement": {opts: Options{Name: strings.Repeat("a", 64)}, objs: []*unstructured.Unstructured{deployment("", "a", 1)},
			wantErr: `name "` + strings.Repeat("a", 64) + `" has 64 characters: without --placement the generated Placement takes this name, which OCM puts in a label value (at most 63); pass a shorter --name or --placement`},
		"longer than 63 with a placement": {opts: Options{Name: strings.Repeat("a", 64), Placement: "all"},
			objs: []*unstructured.Unstructured{deployment("", "a", 1)}, want: strings.Repeat("a", 64)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.opts.Namespace = "apps"
			pmw, _, err := Wrap(tc.objs, tc.opts)
			checkErr(t, err, tc.wantErr)
			if err == nil && pmw.Name != tc.want {
				t.Errorf("name %q, want %q", pmw.Name, tc.want)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	got := ""
	if err != nil {
		got = err.Error()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("error (-want +got):\n%s", diff)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("error on several lines: %q", got)
	}
}

func TestWrapSplits(t *testing.T) {
	split := func(group, kind, namespace, name string) workv1alpha1.DistributionStrategy {
		return workv1alpha1.DistributionStrategy{Group: group, Kind: kind, Namespace: namespace, Name: name,
			Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}
	}
	objs := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			deployment("a", "web", 4),
			deployment("b", "web", 2),
			object("apps/v1", "Deployment", "a", "autoscaled"),
			set(object("apps/v1", "StatefulSet", "a", "db"), int64(3), "spec", "replicas"),
			set(object("batch/v1", "Job", "a", "crunch"), int64(4), "spec", "parallelism"),
			object("batch/v1", "Job", "a", "once"),
			annotated(set(object("batch/v1", "Job", "a", "migrate"), int64(1), "spec", "parallelism"), map[string]string{"helm.sh/hook": "pre-install"}),
			object("example.com/v1", "Web", "a", "web"),
			object("v1", "Service", "a", "web"),
		}
	}
	cases := map[string]struct {
		splits       []string
		all          bool
		want         []workv1alpha1.DistributionStrategy
		wantWarnings []string
		wantErr      string
	}{
		"Kind/namespace/name":          {splits: []string{"Deployment/b/web"}, want: []workv1alpha1.DistributionStrategy{split("apps", "Deployment", "b", "web")}},
		"kubectl's forms of a kind":    {splits: []string{"deploy/a/web", "deployments.apps/b/web", "sts/db"}, want: []workv1alpha1.DistributionStrategy{split("apps", "Deployment", "a", "web"), split("apps", "Deployment", "b", "web"), split("apps", "StatefulSet", "a", "db")}},
		"a custom kind is not checked": {splits: []string{"Web.example.com/web"}, want: []workv1alpha1.DistributionStrategy{split("example.com", "Web", "a", "web")}},
		"named twice, one entry":       {splits: []string{"Deployment/a/web", "deploy/a/web"}, want: []workv1alpha1.DistributionStrategy{split("apps", "Deployment", "a", "web")}},
		"names two manifests": {splits: []string{"Deployment/web"},
			wantErr: `split "Deployment/web" names 2 manifests (Deployment.apps a/web, Deployment.apps b/web); add the namespace or group, as Kind/namespace/name or Kind.group/name`},
		"names no manifest": {splits: []string{"Deployment/api"},
			wantErr: `split "Deployment/api" names no manifest of the input; give the kind and name of one (manifests of that kind: Deployment.apps a/autoscaled, Deployment.apps a/web, Deployment.apps b/web)`},
		"names no manifest of a kind the input lacks": {splits: []string{"DaemonSet/web"},
			wantErr: `split "DaemonSet/web" names no manifest of the input; give the kind and name of one (workloads: Deployment.apps a/autoscaled, Deployment.apps a/web, Deployment.apps b/web, StatefulSet.apps a/db, Job.batch a/crunch, ...)`},
		"the wrong group": {splits: []string{"Deployment.extensions/a/web"},
			wantErr: `split "Deployment.extensions/a/web" names no manifest of the input; give the kind and name of one (manifests of that kind: Deployment.apps a/autoscaled, Deployment.apps a/web, Deployment.apps b/web)`},
		"not a hint": {splits: []string{"web"},
			wantErr: `split "web": name one manifest as Kind/name, Kind.group/name or Kind/namespace/name (Deployment/web)`},
		"an empty part": {splits: []string{"Deployment//web"},
			wantErr: `split "Deployment//web": name one manifest as Kind/name, Kind.group/name or Kind/namespace/name (Deployment/web)`},
		"a workload without replicas": {splits: []string{"Deployment/autoscaled"},
			wantErr: `split "Deployment/autoscaled": Deployment.apps a/autoscaled: .spec.replicas is not set; set it to the total to divide, or drop the split`},
		"a Service": {splits: []string{"Service/web"},
			wantErr: `split "Service/web": Service a/web is not a workload and has no replicas to divide; split a Deployment, StatefulSet, ReplicaSet or Job, or drop the split`},
		"a Job without parallelism": {splits: []string{"Job/once"},
			wantErr: `split "Job/once": Job.batch a/once: .spec.parallelism is not set; set it to the total to divide, or drop the split`},
		"every workload": {all: true, splits: []string{"Web/web"},
			want: []workv1alpha1.DistributionStrategy{split("apps", "Deployment", "a", "web"), split("apps", "Deployment", "b", "web"),
				split("apps", "StatefulSet", "a", "db"), split("batch", "Job", "a", "crunch"), split("example.com", "Web", "a", "web")},
			wantWarnings: []string{"Deployment.apps a/autoscaled: not split, replicated: .spec.replicas is not set (an autoscaler owns it?); set it to split this workload"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pmw, warnings, err := Wrap(objs(), Options{Name: "x", Namespace: "a", Splits: tc.splits, SplitAllWorkloads: tc.all})
			checkErr(t, err, tc.wantErr)
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, pmw.Spec.DistributionStrategy); diff != "" {
				t.Errorf("distributionStrategy (-want +got):\n%s", diff)
			}
			var got []string
			for _, w := range warnings {
				if !strings.Contains(w.Message, "Helm") {
					got = append(got, w.String())
				}
			}
			if diff := cmp.Diff(tc.wantWarnings, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrapRollout(t *testing.T) {
	cfg := func(minSuccess, deadline string, maxFailures intstr.IntOrString) clusterv1alpha1.RolloutConfig {
		c := clusterv1alpha1.RolloutConfig{ProgressDeadline: deadline, MaxFailures: maxFailures}
		if minSuccess != "" {
			c.MinSuccessTime.Duration, _ = minSuccessTime(minSuccess)
		}
		return c
	}
	cases := map[string]struct {
		opts    Options
		want    *clusterv1alpha1.RolloutStrategy
		wantErr string
	}{
		"none": {},
		"All":  {opts: Options{Rollout: "All"}, want: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}},
		"All with a deadline": {opts: Options{Rollout: "all", ProgressDeadline: "None"},
			want: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All, All: &clusterv1alpha1.RolloutAll{RolloutConfig: cfg("", "None", intstr.IntOrString{})}}},
		"Progressive, every field": {opts: Options{Rollout: "Progressive", MaxConcurrency: "2", MinSuccessTime: "1h30m", ProgressDeadline: "1h", MaxFailures: "10%"},
			want: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
				RolloutConfig: cfg("1h30m", "1h", intstr.FromString("10%")), MaxConcurrency: intstr.FromInt32(2)}}},
		"Progressive alone": {opts: Options{Rollout: "Progressive"},
			want: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{}}},
		"ProgressivePerGroup": {opts: Options{Rollout: "ProgressivePerGroup", MinSuccessTime: "0", MaxFailures: "0"},
			want: &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
				RolloutConfig: cfg("0", "", intstr.FromInt32(0))}}},
		"an unknown type":          {opts: Options{Rollout: "Canary"}, wantErr: `rollout "Canary": use All, Progressive or ProgressivePerGroup`},
		"a field without a type":   {opts: Options{MaxFailures: "1"}, wantErr: "--max-failures needs a rollout strategy: add --rollout Progressive (or ProgressivePerGroup, or All)"},
		"maxConcurrency per group": {opts: Options{Rollout: "ProgressivePerGroup", MaxConcurrency: "1"}, wantErr: "--max-concurrency applies only to --rollout Progressive, not ProgressivePerGroup"},
		"maxFailures with All": {opts: Options{Rollout: "All", MaxFailures: "1"},
			wantErr: "--min-success-time and --max-failures apply only to --rollout Progressive or ProgressivePerGroup; All updates every cluster at once"},
		"days": {opts: Options{Rollout: "Progressive", MinSuccessTime: "1d"},
			wantErr: `--min-success-time "1d": use a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)`},
		"microseconds": {opts: Options{Rollout: "Progressive", MinSuccessTime: "5us"},
			wantErr: `--min-success-time "5us": use a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)`},
		"a fractional deadline": {opts: Options{Rollout: "Progressive", ProgressDeadline: "1.5h"},
			wantErr: `--progress-deadline "1.5h": use None or whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m`},
		"over 100%": {opts: Options{Rollout: "Progressive", MaxConcurrency: "101%"},
			wantErr: `--max-concurrency "101%": use a whole number of clusters from 0 to 2147483647 or a percentage from 0% to 100%`},
		"negative": {opts: Options{Rollout: "Progressive", MaxFailures: "-1"},
			wantErr: `--max-failures "-1": use a whole number of clusters from 0 to 2147483647 or a percentage from 0% to 100%`},
		"beyond int32": {opts: Options{Rollout: "Progressive", MaxFailures: "2147483648"},
			wantErr: `--max-failures "2147483648": use a whole number of clusters from 0 to 2147483647 or a percentage from 0% to 100%`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.opts.Name, tc.opts.Namespace = "x", "a"
			pmw, _, err := Wrap([]*unstructured.Unstructured{deployment("", "web", 1)}, tc.opts)
			checkErr(t, err, tc.wantErr)
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, pmw.Spec.RolloutStrategy); diff != "" {
				t.Errorf("rolloutStrategy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWrapErrors(t *testing.T) {
	big := set(object("v1", "ConfigMap", "", "big"), strings.Repeat("x", 600*1024), "data", "blob")
	cases := map[string]struct {
		objs    []*unstructured.Unstructured
		opts    Options
		wantErr string
	}{
		"over the size limit": {objs: []*unstructured.Unstructured{big},
			wantErr: "the manifests take 614499 bytes, more than the limit of 512000 bytes on one ManifestWork's manifests (OCM's is 500 KiB): split them into several PlacementManifestWorks, or raise --max-manifest-bytes if your hub allows more"},
		"over a limit given": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{MaxManifestBytes: 10},
			wantErr: "the manifests take 108 bytes, more than the limit of 10 bytes on one ManifestWork's manifests (OCM's is 500 KiB): split them into several PlacementManifestWorks, or raise --max-manifest-bytes if your hub allows more"},
		"under a limit given": {objs: []*unstructured.Unstructured{big}, opts: Options{MaxManifestBytes: 1 << 20}},
		"no namespace": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{Namespace: "-"},
			wantErr: "no namespace: pass --namespace, the PlacementManifestWork's namespace on the hub (also given to the manifests that have none)"},
		"a bad namespace": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{Namespace: "Apps"},
			wantErr: `namespace "Apps": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		"a bad placement": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{Placement: "EU"},
			wantErr: `placement "EU": name a Placement of the namespace: lower case letters, digits, '-' and '.', at most 63 characters`},
		"a bad label": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{Labels: map[string]string{"team": "a b"}},
			wantErr: `label team="a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		"nothing": {wantErr: "no manifests to wrap: the input has no Kubernetes objects (or only Helm tests and delete hooks)"},
		"only a test": {objs: []*unstructured.Unstructured{annotated(object("v1", "Pod", "", "t"), map[string]string{"helm.sh/hook": "test"})},
			wantErr: "no manifests to wrap: the input has no Kubernetes objects (or only Helm tests and delete hooks)"},
		"twice": {objs: []*unstructured.Unstructured{deployment("", "web", 1), deployment("a", "web", 2)},
			wantErr: "Deployment.apps a/web is in the input twice: a ManifestWork can hold one object of a name; remove one"},
		"generateName": {objs: []*unstructured.Unstructured{set(object("batch/v1", "Job", "", ""), "run-", "metadata", "generateName")},
			wantErr: `object 1 (Job) has generateName "run-" and no name: a ManifestWork needs fixed names, so set metadata.name`},
		"no name": {objs: []*unstructured.Unstructured{deployment("", "web", 1), object("v1", "ConfigMap", "", "")},
			wantErr: "object 2 (ConfigMap) has no metadata.name; every manifest needs one"},
		"no kind": {objs: []*unstructured.Unstructured{object("v1", "", "", "x")},
			wantErr: "object 1 has no apiVersion or kind; every manifest needs both"},
		"a bad cluster-scoped kind": {objs: []*unstructured.Unstructured{deployment("", "web", 1)}, opts: Options{ClusterScoped: []string{"apps/Deployment"}},
			wantErr: `cluster-scoped kind "apps/Deployment": give a kind, as Kind or Kind.group (ClusterIssuer.cert-manager.io)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.opts.Name = "x"
			switch tc.opts.Namespace {
			case "":
				tc.opts.Namespace = "a"
			case "-":
				tc.opts.Namespace = ""
			}
			_, _, err := Wrap(tc.objs, tc.opts)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func TestHookPolicy(t *testing.T) {
	hook := func(name, events string) *unstructured.Unstructured {
		return annotated(object("batch/v1", "Job", "a", name), map[string]string{"helm.sh/hook": events})
	}
	cases := map[string]struct {
		obj         *unstructured.Unstructured
		kept        bool
		wantWarning string
	}{
		"not a hook": {obj: deployment("a", "web", 1), kept: true},
		"a test": {obj: annotated(object("v1", "Pod", "a", "t"), map[string]string{"helm.sh/hook": "test"}),
			wantWarning: "Pod a/t: dropped: a Helm test (helm.sh/hook: test); the fleet has no helm test step"},
		"test-success, Helm 2's name": {obj: annotated(object("v1", "Pod", "a", "t"), map[string]string{"helm.sh/hook": "test-success"}),
			wantWarning: "Pod a/t: dropped: a Helm test (helm.sh/hook: test-success); the fleet has no helm test step"},
		"pre-install": {obj: hook("m", "pre-install"), kept: true,
			wantWarning: "Job.batch a/m: kept as an ordinary manifest: a Helm pre-install hook; every cluster applies it with the other manifests, in no particular order, when it first gets them and on every change, and keeps it (hook-delete-policy does not apply); a Job cannot be changed in place, so rename it when its spec changes"},
		"post-upgrade and pre-delete, kept for the upgrade": {obj: hook("m", "post-upgrade, pre-delete"), kept: true,
			wantWarning: "Job.batch a/m: kept as an ordinary manifest: a Helm post-upgrade,pre-delete hook; every cluster applies it with the other manifests, in no particular order, when it first gets them and on every change, and keeps it (hook-delete-policy does not apply); a Job cannot be changed in place, so rename it when its spec changes"},
		"a ConfigMap hook, no word on Jobs": {obj: annotated(object("v1", "ConfigMap", "a", "c"), map[string]string{"helm.sh/hook": "post-install"}), kept: true,
			wantWarning: "ConfigMap a/c: kept as an ordinary manifest: a Helm post-install hook; every cluster applies it with the other manifests, in no particular order, when it first gets them and on every change, and keeps it (hook-delete-policy does not apply)"},
		"pre-delete": {obj: hook("c", "pre-delete"),
			wantWarning: "Job.batch a/c: dropped: a Helm pre-delete hook; a PlacementManifestWork has no delete or rollback step to run it at"},
		"rollback": {obj: hook("c", "pre-rollback,post-rollback"),
			wantWarning: "Job.batch a/c: dropped: a Helm pre-rollback,post-rollback hook; a PlacementManifestWork has no delete or rollback step to run it at"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kept, warnings := applyHookPolicy([]*unstructured.Unstructured{tc.obj})
			if (len(kept) == 1) != tc.kept {
				t.Errorf("kept %d objects, want kept %v", len(kept), tc.kept)
			}
			var got string
			for _, w := range warnings {
				got += w.String()
			}
			if diff := cmp.Diff(tc.wantWarning, got); diff != "" {
				t.Errorf("warning (-want +got):\n%s", diff)
			}
		})
	}
}
