package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const customValues = "test/deploy/testdata/values-custom.yaml"

// TestChartInSync fails when the chart's CRDs, generated RBAC templates or interpreter copies are not what config/
// gives: run `make chart` after `make manifests`.
func TestChartInSync(t *testing.T) {
	run(t, filepath.Join(root, "hack", "chart-sync.sh"), "--verify")

	// The same for the CRDs, byte for byte, without the script.
	bases, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	copies, _ := filepath.Glob(filepath.Join(root, chartDir, "crds", "*.yaml"))
	if len(copies) != len(bases) {
		t.Errorf("the chart has %d CRD files, config/crd/bases %d", len(copies), len(bases))
	}
	for _, b := range bases {
		want, _ := os.ReadFile(b)
		got, err := os.ReadFile(filepath.Join(root, chartDir, "crds", filepath.Base(b)))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s/crds/%s is not a copy of config/crd/bases/%s: run `make chart`", chartDir, filepath.Base(b), filepath.Base(b))
		}
	}
}

func TestHelmLint(t *testing.T) {
	for name, args := range map[string][]string{
		"default values": nil,
		"custom values":  {"--values", customValues},
	} {
		t.Run(name, func(t *testing.T) {
			out := run(t, helmBin(t), append([]string{"lint", "--strict", chartDir}, args...)...)
			if !strings.Contains(string(out), "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
}

// clusterScoped are the kinds of the chart's cluster-scoped objects.
var clusterScoped = map[string]bool{"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}

func TestHelmTemplateDefaultValues(t *testing.T) {
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-default")
	objs := render(t, "placement-manifestwork", ns)

	if got, want := kinds(objs), []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment",
		"PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}; !slices.Equal(got, want) {
		t.Errorf("rendered kinds %v, want %v", got, want)
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && !strings.HasPrefix(o.GetName(), "placement-manifestwork") {
			t.Errorf("%s: names start with the release's full name", describe(o))
		}
		if !clusterScoped[o.GetKind()] && o.GetNamespace() != ns {
			t.Errorf("%s: not in the release namespace %s", describe(o), ns)
		}
	}

	d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	m := managerContainer(t, d)
	wantArgs := []string{"--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--leader-elect",
		"--leader-election-namespace=" + ns, "--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-reconciles=8",
		"--concurrent-writes=64", "--max-manifest-bytes=512000", "--zap-log-level=info", "--zap-encoder=json"}
	if !slices.Equal(m.Args, wantArgs) {
		t.Errorf("args %q, want %q", m.Args, wantArgs)
	}
	if m.Image != "placement-manifestwork:0.1.0" {
		t.Errorf("image %s, want the appVersion tag", m.Image)
	}
	checkHardened(t, d)
	checkProbes(t, m, 8081)
	if got := m.Resources.Requests.Memory(); got.Cmp(resource.MustParse("128Mi")) != 0 {
		t.Errorf("memory request %s, want 128Mi", got)
	}
	if got := m.Resources.Limits.Memory(); got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("memory limit %s, want 1Gi", got)
	}
	if d.Spec.Template.Spec.Affinity == nil || d.Spec.Template.Spec.Affinity.PodAntiAffinity == nil {
		t.Error("the replicas should prefer different nodes by default")
	}

	svc := convert[corev1.Service](t, one(t, objs, "Service"))
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("metrics Service ports %+v", svc.Spec.Ports)
	}
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("the metrics Service's selector %v does not select the manager's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}

	role := one(t, objs, "Role")
	if role.GetNamespace() != ns {
		t.Errorf("the leader election Role is in %s, want the release namespace", role.GetNamespace())
	}

	dryRunApply(t, c, w, objs)
}

func TestHelmTemplateCustomValues(t *testing.T) {
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-custom")
	objs := render(t, "custom", ns, "--values", customValues)

	if got, want := kinds(objs), []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment",
		"PrometheusRule", "Service", "ServiceAccount", "ServiceMonitor"}; !slices.Equal(got, want) {
		t.Errorf("rendered kinds %v, want %v (no leader election Role, no PodDisruptionBudget, no validation policy)", got, want)
	}

	d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if d.Name != "pmw" || *d.Spec.Replicas != 1 {
		t.Errorf("Deployment %s with %d replicas, want pmw with 1", d.Name, *d.Spec.Replicas)
	}
	m := managerContainer(t, d)
	wantArgs := []string{"--metrics-bind-address=:9090", "--health-probe-bind-address=:9091", "--kube-api-qps=50.5",
		"--kube-api-burst=100", "--concurrent-reconciles=2", "--concurrent-writes=4", "--max-manifest-bytes=1048576", "--zap-log-level=debug",
		"--zap-encoder=console", "--zap-stacktrace-level=panic"}
	if !slices.Equal(m.Args, wantArgs) {
		t.Errorf("args %q, want %q", m.Args, wantArgs)
	}
	wantImage := "registry.example.com/ocm/placement-manifestwork@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if m.Image != wantImage || m.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %s (%s), want %s (Always)", m.Image, m.ImagePullPolicy, wantImage)
	}
	checkHardened(t, d)
	checkProbes(t, m, 9091)
	if got := m.Resources.Limits.Cpu(); got.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("cpu limit %s, want 1", got)
	}
	if got := m.Resources.Requests.Memory(); got.Cmp(resource.MustParse("256Mi")) != 0 {
		t.Errorf("memory request %s, want 256Mi", got)
	}
	if d.Spec.Template.Spec.ServiceAccountName != "pmw-manager" {
		t.Errorf("ServiceAccount %s, want pmw-manager", d.Spec.Template.Spec.ServiceAccountName)
	}
	if sa := one(t, objs, "ServiceAccount"); sa.GetName() != "pmw-manager" {
		t.Errorf("the ServiceAccount is named %s, want pmw-manager", sa.GetName())
	}
	if crb := one(t, objs, "ClusterRoleBinding"); !strings.Contains(fmt.Sprint(crb.Object["subjects"]), "pmw-manager") {
		t.Errorf("the ClusterRoleBinding does not bind pmw-manager: %v", crb.Object["subjects"])
	}
	spec := d.Spec.Template.Spec
	if spec.PriorityClassName != "system-cluster-critical" || len(spec.Tolerations) != 1 || len(spec.NodeSelector) != 1 ||
		len(spec.TopologySpreadConstraints) != 1 || len(spec.ImagePullSecrets) != 1 || *spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("scheduling values not rendered: %+v", spec)
	}
	if d.Spec.Template.Labels["example.com/tier"] != "control-plane" || d.Spec.Template.Annotations["example.com/team"] != "platform" {
		t.Errorf("pod labels %v, annotations %v", d.Spec.Template.Labels, d.Spec.Template.Annotations)
	}

	sm := one(t, objs, "ServiceMonitor")
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels %v lack the Prometheus selector label", sm.GetLabels())
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	svc := convert[corev1.Service](t, one(t, objs, "Service"))
	if !selects(selector, svc.Labels) {
		t.Errorf("the ServiceMonitor's selector %v does not select the metrics Service %v", selector, svc.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name || endpoints[0].(map[string]any)["interval"] != "15s" {
		t.Errorf("ServiceMonitor endpoints %v, want the Service's port %s every 15s", endpoints, svc.Spec.Ports[0].Name)
	}
	checkHonorLabels(t, "the chart with custom values", sm)
	rule := one(t, objs, "PrometheusRule")
	if rule.GetLabels()["release"] != "kube-prometheus-stack" || rule.GetAnnotations()["example.com/owner"] != "platform" {
		t.Errorf("PrometheusRule labels %v, annotations %v: not the values'", rule.GetLabels(), rule.GetAnnotations())
	}
	checkAlerts(t, "the chart with custom values", rule, false)
	if svc.Spec.Ports[0].Port != 9090 {
		t.Errorf("metrics Service port %d, want 9090", svc.Spec.Ports[0].Port)
	}

	dryRunApply(t, c, w, objs)
}

// TestHelmTemplateWithoutRBAC renders the chart for a ServiceAccount and RBAC managed elsewhere.
func TestHelmTemplateWithoutRBAC(t *testing.T) {
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-norbac")
	objs := render(t, "placement-manifestwork", ns, "--set", "rbac.create=false", "--set", "serviceAccount.create=false",
		"--set", "serviceAccount.name=existing", "--set", "metrics.service.enabled=false")
	if got, want := kinds(objs), []string{"CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment", "PodDisruptionBudget",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}; !slices.Equal(got, want) {
		t.Errorf("rendered kinds %v, want %v", got, want)
	}
	d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if d.Spec.Template.Spec.ServiceAccountName != "existing" {
		t.Errorf("ServiceAccount %s, want existing", d.Spec.Template.Spec.ServiceAccountName)
	}
	dryRunApply(t, c, w, objs)
}

// TestHelmTemplateInterpreters renders the shipped interpreter library: none by default, every ResourceInterpreter
// config/interpreters/kustomization.yaml lists with interpreters.install=true (named as in the library, the
// spec unchanged, the chart's labels added), minus interpreters.exclude; and applies them with a dry run, so the
// ResourceInterpreter CRD's schema accepts every shipped interpreter.
func TestHelmTemplateInterpreters(t *testing.T) {
	library := interpreterLibrary(t)
	names := slices.Sorted(maps.Keys(library))

	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-interpreters")
	if got := ofKind(render(t, "placement-manifestwork", ns), "ResourceInterpreter"); len(got) != 0 {
		t.Errorf("the default values render %d ResourceInterpreters, want none (interpreters.install is false)", len(got))
	}

	objs := render(t, "placement-manifestwork", ns, "--set", "interpreters.install=true")
	interpreters := ofKind(objs, "ResourceInterpreter")
	if got := interpreterNames(interpreters); !slices.Equal(got, names) {
		t.Errorf("interpreters.install=true renders %v, want the library's %v", got, names)
	}
	chartLabels := one(t, objs, "ServiceAccount").GetLabels() // the labels every object of the chart carries
	for _, o := range interpreters {
		want, ok := library[o.GetName()]
		if !ok {
			continue
		}
		if o.GetNamespace() != "" {
			t.Errorf("%s has namespace %s; ResourceInterpreters are cluster-scoped", describe(o), o.GetNamespace())
		}
		if o.GetAPIVersion() != want.GetAPIVersion() {
			t.Errorf("%s: apiVersion %s, the library's %s", describe(o), o.GetAPIVersion(), want.GetAPIVersion())
		}
		if diff := cmp.Diff(want.Object["spec"], o.Object["spec"]); diff != "" {
			t.Errorf("%s: the spec is not the library's (-library +rendered):\n%s", describe(o), diff)
		}
		for k, v := range chartLabels {
			if o.GetLabels()[k] != v {
				t.Errorf("%s: label %s=%q, want the chart's %q", describe(o), k, o.GetLabels()[k], v)
			}
		}
	}
	dryRunApply(t, c, w, objs)

	excluded := []string{"rayjobs.ray.io", "scaledobjects.keda.sh"}
	objs = render(t, "placement-manifestwork", ns, "--set", "interpreters.install=true",
		"--set", "interpreters.exclude={"+strings.Join(excluded, ",")+"}")
	want := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(excluded, n) })
	if got := interpreterNames(ofKind(objs, "ResourceInterpreter")); !slices.Equal(got, want) {
		t.Errorf("interpreters.exclude=%v renders %v, want %v", excluded, got, want)
	}
}

// interpreterLibrary reads the ResourceInterpreters config/interpreters/kustomization.yaml lists, by name, and
// checks that it lists every YAML file there.
func interpreterLibrary(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	dir := filepath.Join(root, "config", "interpreters")
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := decodeAll(t, data)
	if len(kustomization) != 1 {
		t.Fatalf("config/interpreters/kustomization.yaml holds %d objects", len(kustomization))
	}
	resources, _, err := unstructured.NestedStringSlice(kustomization[0].Object, "resources")
	if err != nil || len(resources) < 8 {
		t.Fatalf("config/interpreters/kustomization.yaml lists %v (%v), want the library", resources, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(resources, base) {
			t.Errorf("config/interpreters/kustomization.yaml does not list %s", base)
		}
	}
	library := map[string]*unstructured.Unstructured{}
	for _, r := range resources {
		data, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		objs := decodeAll(t, data)
		if len(objs) != 1 || objs[0].GetKind() != "ResourceInterpreter" {
			t.Fatalf("config/interpreters/%s: want one ResourceInterpreter, got %v", r, kinds(objs))
		}
		library[objs[0].GetName()] = objs[0]
	}
	return library
}

func interpreterNames(objs []*unstructured.Unstructured) []string {
	var names []string
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	sort.Strings(names)
	return names
}

// TestHelmTemplateRejects checks that values that cannot work fail the render with a message saying why.
func TestHelmTemplateRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		set     []string
		message string
	}{
		"replicas without leader election": {[]string{"replicas=2", "leaderElection.enabled=false"}, "replicas > 1 needs leaderElection.enabled=true"},
		"a ServiceMonitor without Service": {[]string{"metrics.serviceMonitor.enabled=true", "metrics.service.enabled=false"}, "needs metrics.service.enabled=true"},
		"an unknown log level":             {[]string{"logLevel=verbose"}, "logLevel"},
		"an unknown value":                 {[]string{"watchNamespaces={a,b}"}, "watchNamespaces"},
		"zero burst":                       {[]string{"kubeAPI.burst=0"}, "burst"},
		"the same port twice":              {[]string{"metrics.port=8081"}, "metrics.port and healthProbe.port must differ"},
		"no ServiceAccount name":           {[]string{"serviceAccount.create=false"}, "serviceAccount.name is required"},
		"an unknown interpreter excluded":  {[]string{"interpreters.install=true", "interpreters.exclude={rollouts.argoproj.io,nope}"}, "interpreters.exclude names nope, which is not a shipped interpreter"},
		"interpreters.install not boolean": {[]string{"interpreters.install=yes"}, "interpreters"},
	} {
		t.Run(name, func(t *testing.T) { expectRenderRefused(t, tc.set, tc.message) })
	}
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind())
	}
	sort.Strings(out)
	return out
}

func managerContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	t.Fatalf("Deployment %s has no manager container", d.Name)
	return corev1.Container{}
}

// checkHardened checks the security context: non-root, read-only root filesystem, no privilege
// escalation, seccomp RuntimeDefault, every capability dropped.
func checkHardened(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot {
		t.Error("the pod must run as non-root")
	}
	if pod == nil || pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the pod must use the RuntimeDefault seccomp profile")
	}
	if pod != nil && (pod.RunAsUser == nil || *pod.RunAsUser == 0) {
		t.Error("the pod must run as a non-zero UID (the distroless nonroot image's 65532)")
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Errorf("container %s has no security context", c.Name)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("container %s: the root filesystem must be read-only", c.Name)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("container %s: privilege escalation must be off", c.Name)
		case sc.Privileged != nil && *sc.Privileged:
			t.Errorf("container %s must not be privileged", c.Name)
		case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
			t.Errorf("container %s must drop every capability and add none", c.Name)
		}
	}
}

func checkProbes(t *testing.T, m corev1.Container, port int32) {
	t.Helper()
	var health int32
	for _, p := range m.Ports {
		if p.Name == "health" {
			health = p.ContainerPort
		}
	}
	if health != port {
		t.Errorf("the health port is %d, want %d", health, port)
	}
	for name, p := range map[string]*corev1.Probe{"/healthz": m.LivenessProbe, "/readyz": m.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != name || p.HTTPGet.Port.String() != "health" {
			t.Errorf("want an HTTP probe of %s on the health port, got %+v", name, p)
		}
	}
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// expectRenderRefused renders the chart with set and expects helm to refuse it with an error containing message.
func expectRenderRefused(t *testing.T, set []string, message string) {
	t.Helper()
	args := []string{"template", "x", chartDir}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := runErr(helmBin(t), args...)
	if err == nil {
		t.Fatalf("rendered:\n%s", out)
	}
	if !strings.Contains(err.Error(), message) {
		t.Errorf("error %v, want one containing %q", err, message)
	}
}
