package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/bundle"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/headroom"
)

// The score agent's addon (config/addon, and the chart's scoreAgent option) as OCM's addon manager reads it:
// a ClusterManagementAddOn whose default config is an AddOnTemplate, the template's agent manifests and
// registration, the hub ClusterRole its hubPermissions bind and the grant that lets the addon manager bind it.
// OCM's addon manager itself is not run here: the tests check what it needs of these objects (its documented
// template variables, its volume for the hub kubeconfig, its RoleBinding in the cluster namespace, which the
// hub's RBAC must let it create) and apply them to the envtest hub with OCM's addon CRDs installed; the agent
// the Dockerfile builds then runs with exactly the permissions they give it.

const (
	addonName         = "score-agent"
	addonHubRole      = "open-cluster-management:score-agent:hub"
	addonManagerSA    = "addon-manager-controller-sa"
	addonManagerNS    = "open-cluster-management-hub"
	addonInstallNS    = "open-cluster-management-agent-addon"
	addonConfigImage  = "placement-manifestwork:dev" // as config/default's, which make deploy substitutes
	addonComponentKey = "app.kubernetes.io/component"
)

// addonTemplateVariables are the variables OCM's addon manager always sets for a template with a KubeClient
// registration (ocm pkg/addon/templateagent: the built-in CLUSTER_NAME and the default HUB_KUBECONFIG, the path
// of the registration's kubeconfig in the volume it mounts). INSTALL_NAMESPACE is set only with an
// AddOnDeploymentConfig that names one, and others only by an AddOnDeploymentConfig's customizedVariables, so
// the template uses none of them.
var addonTemplateVariables = map[string]string{
	"CLUSTER_NAME":   "", // the managed cluster's name, filled in per test
	"HUB_KUBECONFIG": "/managed/hub-kubeconfig/kubeconfig",
}

// The volume the addon manager adds to every container of the template's Deployments for a KubeClient
// registration: the Secret <addon>-hub-kubeconfig the klusterlet writes, at /managed/hub-kubeconfig.
const (
	hubKubeconfigVolume    = "hub-kubeconfig"
	hubKubeconfigMountPath = "/managed/hub-kubeconfig"
)

// addonHubPermissions are the agent's permissions on the hub in its cluster's namespace, as
// "group|resource|verb": the generators it reads and reports on, the scores it writes, its events.
var addonHubPermissions = []string{
	"cluster.open-cluster-management.io|addonplacementscoregenerators|get",
	"cluster.open-cluster-management.io|addonplacementscoregenerators|list",
	"cluster.open-cluster-management.io|addonplacementscoregenerators|watch",
	"cluster.open-cluster-management.io|addonplacementscoregenerators/status|update",
	"cluster.open-cluster-management.io|addonplacementscores|create",
	"cluster.open-cluster-management.io|addonplacementscores|get",
	"cluster.open-cluster-management.io|addonplacementscores|list",
	"cluster.open-cluster-management.io|addonplacementscores|update",
	"cluster.open-cluster-management.io|addonplacementscores|watch",
	"cluster.open-cluster-management.io|addonplacementscores/status|update",
	"events.k8s.io|events|create",
	"events.k8s.io|events|patch",
}

// addonSpokePermissions are the agent's permissions on its managed cluster: the nodes and pods the headroom
// plugin reads. No Lease: one replica, no leader election.
var addonSpokePermissions = []string{"|nodes|get", "|nodes|list", "|nodes|watch", "|pods|get", "|pods|list", "|pods|watch"}

// OCM's addon CRDs (open-cluster-management.io/api's addon/v1alpha1, the version this module builds against)
// are installed into the shared test hub once, by the first test that needs them (the other suites' hubs do
// not serve them).
var (
	addonCRDsOnce sync.Once
	addonCRDsErr  error
)

// addonHubClient is hubClient on a hub with OCM's addon CRDs.
func addonHubClient(t *testing.T) (client.Client, *warnings) {
	t.Helper()
	cfg := hub(t)
	addonCRDsOnce.Do(func() {
		ocm, err := envhub.ModuleDir("open-cluster-management.io/api")
		if err != nil {
			addonCRDsErr = err
			return
		}
		_, addonCRDsErr = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(ocm, "addon", "v1alpha1")},
			ErrorIfPathMissing: true,
		})
	})
	if addonCRDsErr != nil {
		t.Fatalf("installing OCM's addon CRDs: %v", addonCRDsErr)
	}
	return hubClient(t)
}

// configAddon renders config/addon with kustomize's Go API (as kubectl kustomize does).
func configAddon(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := bundle.RenderKustomize(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// chartAddon renders the chart with the score agent on and returns its objects (the whole chart's).
func chartAddon(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return render(t, "placement-manifestwork", "pmw-system", append([]string{"--set", "scoreAgent.enabled=true"}, args...)...)
}

// scoreAgentObjects are the objects of the score agent's component among objs.
func scoreAgentObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()[addonComponentKey] == addonName {
			out = append(out, o)
		}
	}
	return out
}

// addon is the addon's objects, typed.
type addon struct {
	cma       *addonv1alpha1.ClusterManagementAddOn
	template  *addonv1alpha1.AddOnTemplate
	roles     map[string]*rbacv1.ClusterRole
	bindings  map[string]*rbacv1.ClusterRoleBinding
	manifests []*unstructured.Unstructured // the template's agent manifests
}

func readAddon(t *testing.T, objs []*unstructured.Unstructured) addon {
	t.Helper()
	a := addon{roles: map[string]*rbacv1.ClusterRole{}, bindings: map[string]*rbacv1.ClusterRoleBinding{}}
	a.cma = convert[addonv1alpha1.ClusterManagementAddOn](t, one(t, objs, "ClusterManagementAddOn"))
	a.template = convert[addonv1alpha1.AddOnTemplate](t, one(t, objs, "AddOnTemplate"))
	for _, o := range ofKind(objs, "ClusterRole") {
		a.roles[o.GetName()] = convert[rbacv1.ClusterRole](t, o)
	}
	for _, o := range ofKind(objs, "ClusterRoleBinding") {
		a.bindings[o.GetName()] = convert[rbacv1.ClusterRoleBinding](t, o)
	}
	for i, m := range a.template.Spec.AgentSpec.Workload.Manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(m.Raw); err != nil {
			t.Fatalf("the AddOnTemplate's manifest %d: %v", i, err)
		}
		a.manifests = append(a.manifests, o)
	}
	return a
}

// agentDeployment is the template's only Deployment, typed.
func (a addon) agentDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	return convert[appsv1.Deployment](t, one(t, a.manifests, "Deployment"))
}

func agentContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Name != "score-agent" {
		t.Fatalf("the agent's Deployment should have the one container score-agent: %+v", d.Spec.Template.Spec.Containers)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// TestAddonConfig checks config/addon as OCM's addon manager reads it.
func TestAddonConfig(t *testing.T) {
	objs := configAddon(t, "config/addon")
	if got, want := kinds(objs), []string{"AddOnTemplate", "ClusterManagementAddOn", "ClusterRole", "ClusterRole", "ClusterRoleBinding"}; !slices.Equal(got, want) {
		t.Fatalf("config/addon renders %v, want %v", got, want)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			t.Errorf("%s: the addon's hub objects are cluster-scoped", describe(o))
		}
		if o.GetLabels()[addonComponentKey] != addonName {
			t.Errorf("%s lacks the label %s=%s (the chart's copies are told by it)", describe(o), addonComponentKey, addonName)
		}
	}
	a := readAddon(t, objs)
	checkAddon(t, a)
	if c := agentContainer(t, a.agentDeployment(t)); c.Image != addonConfigImage {
		t.Errorf("the agent's image is %s, want %s: the manager's image, which carries /score-agent too", c.Image, addonConfigImage)
	}
}

// checkAddon checks what the addon manager and the agent need of the addon's objects.
func checkAddon(t *testing.T, a addon) {
	t.Helper()

	// The ClusterManagementAddOn: managed by the addon manager, its default config the template.
	if a.cma.Name != addonName || a.template.Spec.AddonName != addonName {
		t.Errorf("ClusterManagementAddOn %s, AddOnTemplate for addon %s: both must be %s (the agent's --addon-name default)",
			a.cma.Name, a.template.Spec.AddonName, addonName)
	}
	if got := a.cma.Annotations[addonv1alpha1.AddonLifecycleAnnotationKey]; got != addonv1alpha1.AddonLifecycleAddonManagerAnnotationValue {
		t.Errorf("the ClusterManagementAddOn's %s annotation is %q, want %s: otherwise the addon manager does not deploy a template addon",
			addonv1alpha1.AddonLifecycleAnnotationKey, got, addonv1alpha1.AddonLifecycleAddonManagerAnnotationValue)
	}
	// OCM's v1alpha1 API, the addon's, has them as supportedConfigs (v1beta1 renames them defaultConfigs).
	supported := a.cma.Spec.SupportedConfigs //nolint:staticcheck // SA1019: the v1alpha1 field the objects are written with
	var templateConfig *addonv1alpha1.ConfigMeta
	for i, c := range supported {
		if c.Group == addonv1alpha1.GroupName && c.Resource == "addontemplates" {
			templateConfig = &supported[i]
		}
	}
	if templateConfig == nil || templateConfig.DefaultConfig == nil || templateConfig.DefaultConfig.Name != a.template.Name ||
		templateConfig.DefaultConfig.Namespace != "" {
		t.Errorf("the ClusterManagementAddOn's supportedConfigs %+v should name the AddOnTemplate %s as the addontemplates default config",
			supported, a.template.Name)
	}
	if want := addonName + "-"; !strings.HasPrefix(a.template.Name, want) {
		t.Errorf("the AddOnTemplate %s should be named %s<version>", a.template.Name, want)
	}

	// The registration: a hub kubeconfig, and the hub ClusterRole bound in the cluster's namespace.
	regs := a.template.Spec.Registration
	if len(regs) != 1 || regs[0].Type != addonv1alpha1.RegistrationTypeKubeClient || regs[0].KubeClient == nil {
		t.Fatalf("the AddOnTemplate's registration %+v: want one of type KubeClient", regs)
	}
	perms := regs[0].KubeClient.HubPermissions
	if len(perms) != 1 || perms[0].Type != addonv1alpha1.HubPermissionsBindingCurrentCluster || perms[0].CurrentCluster == nil {
		t.Fatalf("the registration's hubPermissions %+v: want one of type CurrentCluster (the cluster's namespace only)", perms)
	}
	hubRole := a.roles[perms[0].CurrentCluster.ClusterRoleName]
	if hubRole == nil || hubRole.Name != addonHubRole {
		t.Fatalf("hubPermissions binds the ClusterRole %s, which is not the addon's %s", perms[0].CurrentCluster.ClusterRoleName, addonHubRole)
	}
	if got := permissions(hubRole.Rules); !slices.Equal(got, slices.Sorted(slices.Values(addonHubPermissions))) {
		t.Errorf("the agent's hub ClusterRole grants %v, want %v", got, addonHubPermissions)
	}
	for _, r := range hubRole.Rules {
		if len(r.ResourceNames) > 0 || slices.ContainsFunc(slices.Concat(r.APIGroups, r.Resources, r.Verbs), func(s string) bool { return strings.Contains(s, "*") }) {
			t.Errorf("the agent's hub ClusterRole has a wildcard or names: %+v", r)
		}
	}

	// The addon manager may bind that ClusterRole, and nothing else.
	if len(a.roles) != 2 || len(a.bindings) != 1 {
		t.Fatalf("want the hub ClusterRole and the addon manager's ClusterRole and binding, got roles %v, bindings %v", len(a.roles), len(a.bindings))
	}
	var grant *rbacv1.ClusterRoleBinding
	for _, b := range a.bindings {
		grant = b
	}
	managerRole := a.roles[grant.RoleRef.Name]
	if grant.RoleRef.Kind != "ClusterRole" || managerRole == nil || managerRole.Name == addonHubRole {
		t.Fatalf("the ClusterRoleBinding %s binds %s %s, want the addon manager's ClusterRole", grant.Name, grant.RoleRef.Kind, grant.RoleRef.Name)
	}
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{addonHubRole}, Verbs: []string{"bind"}}}
	if diff := cmp.Diff(wantRules, managerRole.Rules); diff != "" {
		t.Errorf("the addon manager's ClusterRole should grant bind on %s only (-want +got):\n%s", addonHubRole, diff)
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: addonManagerSA, Namespace: addonManagerNS}}
	if diff := cmp.Diff(wantSubjects, grant.Subjects); diff != "" {
		t.Errorf("the grant should bind OCM's addon manager (-want +got):\n%s", diff)
	}

	// The agent's manifests.
	if got, want := kinds(a.manifests), []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace", "ServiceAccount"}; !slices.Equal(got, want) {
		t.Fatalf("the AddOnTemplate's manifests are %v, want %v", got, want)
	}
	ns := convert[corev1.Namespace](t, one(t, a.manifests, "Namespace"))
	if ns.Name != addonInstallNS {
		t.Errorf("the agent's namespace is %s, want OCM's addon install namespace %s", ns.Name, addonInstallNS)
	}
	if _, ok := ns.Annotations["addon.open-cluster-management.io/deletion-orphan"]; !ok {
		t.Errorf("the namespace %s is shared with other addons: it needs the deletion-orphan annotation, so deleting the addon keeps it", ns.Name)
	}
	for _, m := range a.manifests {
		namespaced := m.GetKind() == "Deployment" || m.GetKind() == "ServiceAccount"
		if namespaced && m.GetNamespace() != ns.Name || !namespaced && m.GetNamespace() != "" {
			t.Errorf("the manifest %s is not in the addon's namespace %s", describe(m), ns.Name)
		}
	}
	sa := one(t, a.manifests, "ServiceAccount")
	spokeRole := convert[rbacv1.ClusterRole](t, one(t, a.manifests, "ClusterRole"))
	if got := permissions(spokeRole.Rules); !slices.Equal(got, slices.Sorted(slices.Values(addonSpokePermissions))) {
		t.Errorf("the agent's ClusterRole on the managed cluster grants %v, want %v", got, addonSpokePermissions)
	}
	if spokeRole.Name == addonHubRole {
		t.Errorf("the agent's ClusterRole on the managed cluster must not be named like its hub ClusterRole: on a hub that is also a managed cluster one would overwrite the other")
	}
	crb := convert[rbacv1.ClusterRoleBinding](t, one(t, a.manifests, "ClusterRoleBinding"))
	if crb.RoleRef.Name != spokeRole.Name || len(crb.Subjects) != 1 || crb.Subjects[0].Kind != "ServiceAccount" ||
		crb.Subjects[0].Name != sa.GetName() || crb.Subjects[0].Namespace != ns.Name {
		t.Errorf("the ClusterRoleBinding %+v should bind %s to the ServiceAccount %s/%s", crb, spokeRole.Name, ns.Name, sa.GetName())
	}

	d := a.agentDeployment(t)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("the agent runs without leader election: want 1 replica with the Recreate strategy, got %v replicas, %s", d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	if d.Spec.Template.Spec.ServiceAccountName != sa.GetName() {
		t.Errorf("the agent runs as %s, want the ServiceAccount %s", d.Spec.Template.Spec.ServiceAccountName, sa.GetName())
	}
	checkHardened(t, d)
	c := agentContainer(t, d)
	checkProbes(t, c, 8081)
	if !slices.Equal(c.Command, []string{"/score-agent"}) {
		t.Errorf("the agent's command is %v, want [/score-agent] (the image's entrypoint is the manager)", c.Command)
	}
	args := flagValues(c.Args)
	for flag, want := range map[string]string{
		"--hub-kubeconfig":            "{{HUB_KUBECONFIG}}",
		"--cluster-name":              "{{CLUSTER_NAME}}",
		"--addon-name":                addonName,
		"--metrics-bind-address":      ":8080",
		"--health-probe-bind-address": ":8081",
	} {
		if got := args[flag]; len(got) != 1 || got[0] != want {
			t.Errorf("the agent's args %q: want %s=%s", c.Args, flag, want)
		}
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == hubKubeconfigVolume {
			t.Errorf("the Deployment declares the volume %s, which the addon manager adds itself (a duplicate volume fails)", v.Name)
		}
	}
	for _, m := range c.VolumeMounts {
		if m.Name == hubKubeconfigVolume || m.MountPath == hubKubeconfigMountPath {
			t.Errorf("the container mounts %s at %s, where the addon manager mounts the hub kubeconfig", m.Name, m.MountPath)
		}
	}

	// Only variables the addon manager always sets.
	for _, m := range a.manifests {
		data, _ := m.MarshalJSON()
		for _, v := range regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`).FindAllStringSubmatch(string(data), -1) {
			if _, ok := addonTemplateVariables[v[1]]; !ok {
				t.Errorf("the manifest %s uses the template variable %s, which the addon manager does not always set", describe(m), v[0])
			}
		}
	}
}

// flagValues maps each --flag=value argument's flag to its values.
func flagValues(args []string) map[string][]string {
	out := map[string][]string{}
	for _, a := range args {
		flag, value, _ := strings.Cut(a, "=")
		out[flag] = append(out[flag], value)
	}
	return out
}

// renderTemplate renders the template's manifests for a cluster as OCM's addon manager does: its variables
// replaced, and the hub kubeconfig's volume and the variables' environment added to the Deployments.
func renderTemplate(t *testing.T, a addon, cluster string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, m := range a.manifests {
		data, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for name, value := range addonTemplateVariables {
			if name == "CLUSTER_NAME" {
				value = cluster
			}
			s = strings.ReplaceAll(s, "{{"+name+"}}", value)
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if o.GetKind() == "Deployment" {
			d := convert[appsv1.Deployment](t, o)
			pod := &d.Spec.Template.Spec
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: hubKubeconfigVolume, VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: a.template.Spec.AddonName + "-hub-kubeconfig"}}})
			for i := range pod.Containers {
				pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts, corev1.VolumeMount{Name: hubKubeconfigVolume, MountPath: hubKubeconfigMountPath})
				pod.Containers[i].Env = append(pod.Containers[i].Env,
					corev1.EnvVar{Name: "CLUSTER_NAME", Value: cluster}, corev1.EnvVar{Name: "HUB_KUBECONFIG", Value: addonTemplateVariables["HUB_KUBECONFIG"]})
			}
			d.Status = appsv1.DeploymentStatus{}
			obj, err := toUnstructured(d)
			if err != nil {
				t.Fatal(err)
			}
			o = obj
		}
		out = append(out, o)
	}
	return out
}

func toUnstructured(d *appsv1.Deployment) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

// TestAddonAdmitted applies config/addon to the hub with OCM's addon CRDs, the samples too, and the agent's
// manifests as the addon manager renders them for a cluster, to the same API server standing in for a managed
// cluster, in the addon namespace enforcing the restricted Pod Security Standard: no refusal, no warning.
func TestAddonAdmitted(t *testing.T) {
	c, w := addonHubClient(t)
	objs := configAddon(t, "config/addon")
	dryRunApply(t, c, w, objs)

	samples := configAddon(t, "config/addon/samples")
	if got, want := kinds(samples), []string{"AddOnPlacementScoreGenerator", "ManagedClusterAddOn", "Placement"}; !slices.Equal(got, want) {
		t.Errorf("config/addon/samples renders %v, want %v", got, want)
	}
	for _, s := range samples {
		if s.GetNamespace() != "" {
			ensureNamespace(t, c, s.GetNamespace(), nil)
		}
	}
	mca := convert[addonv1alpha1.ManagedClusterAddOn](t, one(t, samples, "ManagedClusterAddOn"))
	if mca.Name != addonName {
		t.Errorf("the sample ManagedClusterAddOn is named %s, want the addon's name %s", mca.Name, addonName)
	}
	gen := one(t, samples, "AddOnPlacementScoreGenerator")
	if got, _, _ := unstructured.NestedString(gen.Object, "spec", "addOnPlacementSelector", "name"); got != addonName || gen.GetNamespace() != mca.Namespace {
		t.Errorf("the sample generator %s addresses addon %q, want %s in the sample cluster's namespace %s", describe(gen), got, addonName, mca.Namespace)
	}
	// Its plugins are the agent's, with options they accept.
	plugins, _, _ := unstructured.NestedSlice(gen.Object, "spec", "otherPlugin")
	for _, p := range plugins {
		p := p.(map[string]any)
		if p["plugin"] != headroom.Name {
			t.Errorf("the sample generator uses the plugin %v; the agent's second plugin is %s", p["plugin"], headroom.Name)
			continue
		}
		opts := map[string]string{}
		for k, v := range p["options"].(map[string]any) {
			opts[k] = fmt.Sprint(v)
		}
		if _, err := headroom.ParseOptions(opts); err != nil {
			t.Errorf("the sample generator's %s options: %v", headroom.Name, err)
		}
	}
	dryRunApply(t, c, w, samples)

	a := readAddon(t, objs)
	ensureNamespace(t, c, addonInstallNS, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})
	dryRunApply(t, c, w, renderTemplate(t, a, "cluster1"))
}

// ensureNamespace creates a namespace, with labels, unless it exists.
func ensureNamespace(t *testing.T, c client.Client, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestAddonHubPermissions applies config/addon's RBAC to the hub and does what OCM's addon manager does with
// it: as the addon manager's ServiceAccount, with the addon manager's own permission on RoleBindings, it binds
// the agent's hub ClusterRole in a cluster's namespace to the agent's registration group. That needs the
// addon's bind grant (without it the API server refuses the binding as an escalation). The agent may then do
// exactly addonHubPermissions in its cluster's namespace and nothing in another cluster's.
func TestAddonHubPermissions(t *testing.T) {
	c, _ := addonHubClient(t)
	objs := configAddon(t, "config/addon")
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			apply(t, c, o)
		}
	}

	// The addon manager's permission on RoleBindings (OCM's cluster-manager gives it), to its ServiceAccount
	// and to another that lacks the addon's grant.
	suffix := rand.String(5)
	rbRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-addon-manager-rolebindings-" + suffix},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}}}}
	other := "addon-manager-without-grant"
	rbBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: rbRole.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rbRole.Name},
		Subjects: []rbacv1.Subject{
			{Kind: "ServiceAccount", Name: addonManagerSA, Namespace: addonManagerNS},
			{Kind: "ServiceAccount", Name: other, Namespace: addonManagerNS},
		}}
	for _, o := range []client.Object{rbRole, rbBinding} {
		if err := c.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}

	cluster, otherCluster := "addon-c1-"+suffix, "addon-c2-"+suffix
	for _, ns := range []string{cluster, otherCluster} {
		ensureNamespace(t, c, ns, nil)
	}
	group := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", cluster, addonName)
	binding := func() *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("open-cluster-management:%s:clusterrole:agent", addonName), Namespace: cluster},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: addonHubRole},
			Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: group}},
		}
	}
	withoutGrant := impersonatingClient(t, "system:serviceaccount:"+addonManagerNS+":"+other,
		"system:serviceaccounts", "system:serviceaccounts:"+addonManagerNS, "system:authenticated")
	eventually(t, 10*time.Second, "the RoleBindings permission to take effect", func() error {
		err := withoutGrant.Create(context.Background(), binding(), client.DryRunAll)
		if err == nil {
			return fmt.Errorf("an addon manager without the addon's grant may bind %s: the test proves nothing", addonHubRole)
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "attempting to grant RBAC permissions not currently held") {
			return fmt.Errorf("want a refusal as an escalation, got %v", err)
		}
		return nil
	})
	manager := impersonatingClient(t, "system:serviceaccount:"+addonManagerNS+":"+addonManagerSA,
		"system:serviceaccounts", "system:serviceaccounts:"+addonManagerNS, "system:authenticated")
	eventually(t, 10*time.Second, "the addon manager to bind the agent's hub ClusterRole", func() error {
		return manager.Create(context.Background(), binding())
	})

	// The agent's identity, as OCM's registration gives it.
	user := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:%s-agent", cluster, addonName, addonName)
	groups := []string{group, "system:open-cluster-management:addon:" + addonName, "system:authenticated"}
	allowed := func(ns, perm string) bool {
		parts := strings.Split(perm, "|")
		resource, sub, _ := strings.Cut(parts[1], "/")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: parts[2], Group: parts[0], Resource: resource, Subresource: sub},
		}}
		if err := c.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	eventually(t, 10*time.Second, "the agent's permissions in its cluster's namespace", func() error {
		for _, p := range addonHubPermissions {
			if !allowed(cluster, p) {
				return fmt.Errorf("the agent may not %s in its cluster's namespace %s", p, cluster)
			}
		}
		return nil
	})
	for _, p := range addonHubPermissions {
		if allowed(otherCluster, p) {
			t.Errorf("the agent of %s may %s in another cluster's namespace %s", cluster, p, otherCluster)
		}
	}
	for _, p := range []string{
		"cluster.open-cluster-management.io|addonplacementscoregenerators|update",
		"cluster.open-cluster-management.io|addonplacementscoregenerators|delete",
		"cluster.open-cluster-management.io|addonplacementscores|delete",
		"|secrets|get",
		"work.open-cluster-management.io|manifestworks|list",
	} {
		if allowed(cluster, p) {
			t.Errorf("the agent may %s in its cluster's namespace, which it does not need", p)
		}
	}
}

// impersonatingClient is a hub client acting as user in groups.
func impersonatingClient(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(hub(t))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAddonChart checks the chart's scoreAgent option: off by default (none of the addon's objects), and on,
// the objects of config/addon with the chart's labels and the image, and nothing else different; the values
// reach the objects, and the API server admits them.
func TestAddonChart(t *testing.T) {
	for _, o := range render(t, "placement-manifestwork", "pmw-system") {
		if o.GetKind() == "ClusterManagementAddOn" || o.GetKind() == "AddOnTemplate" || o.GetLabels()[addonComponentKey] == addonName {
			t.Errorf("the chart renders %s with default values; scoreAgent.enabled is false by default", describe(o))
		}
	}
	out := run(t, helmBin(t), "lint", "--strict", chartDir, "--set", "scoreAgent.enabled=true")
	if !strings.Contains(string(out), "0 chart(s) failed") {
		t.Fatalf("helm lint with scoreAgent.enabled:\n%s", out)
	}

	all := chartAddon(t)
	chart := scoreAgentObjects(all)
	if len(all)-len(chart) != len(render(t, "placement-manifestwork", "pmw-system")) {
		t.Errorf("scoreAgent.enabled adds objects without the label %s=%s", addonComponentKey, addonName)
	}
	a := readAddon(t, chart)
	checkAddon(t, a)
	if c := agentContainer(t, a.agentDeployment(t)); c.Image != "placement-manifestwork:0.1.0" {
		t.Errorf("the chart's agent image is %s, want the manager's, placement-manifestwork:0.1.0", c.Image)
	}

	// The same objects as config/addon, but for the chart's labels and the image.
	config := configAddon(t, "config/addon")
	key := func(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range config {
		byKey[key(o)] = o
	}
	if len(chart) != len(config) {
		t.Errorf("the chart renders %d score agent objects, config/addon %d", len(chart), len(config))
	}
	for _, o := range chart {
		want := byKey[key(o)]
		if want == nil {
			t.Errorf("the chart renders %s, which config/addon does not have", describe(o))
			continue
		}
		got := o.DeepCopy()
		for k, v := range want.GetLabels() {
			if got.GetLabels()[k] != v {
				t.Errorf("%s: the chart's labels %v lack config/addon's %s=%s", describe(o), got.GetLabels(), k, v)
			}
		}
		got.SetLabels(want.GetLabels())
		if got.GetKind() == "AddOnTemplate" {
			setAgentImage(t, got, addonConfigImage)
		}
		if diff := cmp.Diff(normalized(t, want), normalized(t, got)); diff != "" {
			t.Errorf("the chart's %s differs from config/addon's (-config/addon +chart): keep templates/score-agent.yaml and config/addon in step\n%s", describe(o), diff)
		}
	}

	c, w := addonHubClient(t)
	dryRunApply(t, c, w, chart)

	t.Run("values", func(t *testing.T) {
		digest := "sha256:" + strings.Repeat("ab", 32)
		for name, tc := range map[string]struct {
			set   []string
			image string
			args  []string // after the fixed ones
			check func(t *testing.T, a addon, objs []*unstructured.Unstructured)
		}{
			"manager's image with a digest": {set: []string{"image.repository=reg.example.com/pmw", "image.digest=" + digest}, image: "reg.example.com/pmw@" + digest},
			"agent tag":                     {set: []string{"image.repository=reg.example.com/pmw", "scoreAgent.image.tag=v9"}, image: "reg.example.com/pmw:v9"},
			"agent repository and digest":   {set: []string{"scoreAgent.image.repository=reg.example.com/agent", "scoreAgent.image.digest=" + digest}, image: "reg.example.com/agent@" + digest},
			"allow": {set: []string{"scoreAgent.allow={10.0.0.0/8,*.example.com,probe.internal}", "scoreAgent.extraArgs={--allow-ports=443}"},
				image: "placement-manifestwork:0.1.0", args: []string{"--allow=10.0.0.0/8,*.example.com,probe.internal", "--allow-ports=443"}},
			"placements": {set: []string{"scoreAgent.placements[0].namespace=fleet", "scoreAgent.placements[0].name=all"}, image: "placement-manifestwork:0.1.0",
				check: func(t *testing.T, a addon, _ []*unstructured.Unstructured) {
					s := a.cma.Spec.InstallStrategy
					if s.Type != addonv1alpha1.AddonInstallStrategyPlacements || len(s.Placements) != 1 ||
						s.Placements[0].Namespace != "fleet" || s.Placements[0].Name != "all" {
						t.Errorf("installStrategy %+v, want Placements with fleet/all", s)
					}
				}},
			"rbac.create false": {set: []string{"rbac.create=false", "serviceAccount.create=false", "serviceAccount.name=elsewhere"}, image: "placement-manifestwork:0.1.0",
				check: func(t *testing.T, _ addon, objs []*unstructured.Unstructured) {
					if got := kinds(objs); !slices.Equal(got, []string{"AddOnTemplate", "ClusterManagementAddOn"}) {
						t.Errorf("with rbac.create=false the score agent's objects are %v, want no RBAC", got)
					}
				}},
			"addon manager": {set: []string{"scoreAgent.addonManager.namespace=hosted-hub", "scoreAgent.addonManager.serviceAccount=am"}, image: "placement-manifestwork:0.1.0",
				check: func(t *testing.T, a addon, _ []*unstructured.Unstructured) {
					b := a.bindings["open-cluster-management:score-agent:addon-manager"]
					if b == nil || len(b.Subjects) != 1 || b.Subjects[0].Namespace != "hosted-hub" || b.Subjects[0].Name != "am" {
						t.Errorf("the addon manager's grant binds %+v, want hosted-hub/am", b)
					}
				}},
		} {
			t.Run(name, func(t *testing.T) {
				var args []string
				for _, s := range tc.set {
					args = append(args, "--set", s)
				}
				objs := scoreAgentObjects(chartAddon(t, args...))
				a := readAddon(t, objs)
				c := agentContainer(t, a.agentDeployment(t))
				if c.Image != tc.image {
					t.Errorf("image %s, want %s", c.Image, tc.image)
				}
				fixed := []string{"--hub-kubeconfig={{HUB_KUBECONFIG}}", "--cluster-name={{CLUSTER_NAME}}", "--addon-name=score-agent",
					"--metrics-bind-address=:8080", "--health-probe-bind-address=:8081"}
				if want := slices.Concat(fixed, tc.args); !slices.Equal(c.Args, want) {
					t.Errorf("args %q, want %q", c.Args, want)
				}
				if tc.check != nil {
					tc.check(t, a, objs)
				}
			})
		}
	})
}

// normalized is o's content as JSON decodes it (the two YAML readers differ in their number types).
func normalized(t *testing.T, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// setAgentImage sets the image of the agent's container in an AddOnTemplate (unstructured).
func setAgentImage(t *testing.T, template *unstructured.Unstructured, image string) {
	t.Helper()
	manifests, _, _ := unstructured.NestedSlice(template.Object, "spec", "agentSpec", "workload", "manifests")
	for _, m := range manifests {
		m := m.(map[string]any)
		if m["kind"] != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(m, "spec", "template", "spec", "containers")
		for _, c := range containers {
			c.(map[string]any)["image"] = image
		}
		if err := unstructured.SetNestedSlice(m, containers, "spec", "template", "spec", "containers"); err != nil {
			t.Fatal(err)
		}
	}
	if err := unstructured.SetNestedSlice(template.Object, manifests, "spec", "agentSpec", "workload", "manifests"); err != nil {
		t.Fatal(err)
	}
}

// TestAddonAgentImage checks that the image the addon runs carries the agent: the Dockerfile's builder stage
// builds ./cmd/score-agent into the binary the Deployment's command runs, the final stage copies it, and the
// binary built by replaying those steps knows every flag the addon passes.
func TestAddonAgentImage(t *testing.T) {
	c := agentContainer(t, readAddon(t, configAddon(t, "config/addon")).agentDeployment(t))
	bin := path.Base(c.Command[0])
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := strings.ReplaceAll(string(data), "\\\n", " ")
	build := regexp.MustCompile(`(?m)^RUN .*go build .*-o ` + regexp.QuoteMeta(bin) + ` \./cmd/score-agent\s*$`)
	if !build.MatchString(dockerfile) {
		t.Errorf("the Dockerfile's builder stage does not build ./cmd/score-agent into %s", bin)
	}
	copyLine := regexp.MustCompile(`(?m)^COPY --from=builder \S+/` + regexp.QuoteMeta(bin) + ` \.\s*$`)
	if !copyLine.MatchString(dockerfile) {
		t.Errorf("the Dockerfile's final stage does not copy %s to / (the addon's command is %v)", bin, c.Command)
	}
	// Every package of this module the agent imports is under a copied directory.
	d := parseDockerfile(t)
	out := run(t, "go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/score-agent")
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		if !slices.ContainsFunc(d.builderCopies, func(c [2]string) bool {
			src := strings.TrimSuffix(c[0], "/")
			return rel == src || strings.HasPrefix(rel, src+"/")
		}) {
			t.Errorf("./cmd/score-agent imports the package in %s, which no COPY line of the Dockerfile copies", rel)
		}
	}
	if t.Failed() {
		return
	}

	managerBinary(t) // replays the builder stage, which builds the agent too
	agent := filepath.Join(buildDir, bin)
	help, _ := exec.Command(agent, "--help").CombinedOutput()
	for flag := range flagValues(c.Args) {
		// pflag lists --name, Go's flag package -name.
		listed := regexp.MustCompile(`(?m)^\s*(-\w, )?--?` + regexp.QuoteMeta(strings.TrimLeft(flag, "-")) + `[\s=]`)
		if !listed.Match(help) {
			t.Errorf("the addon passes %s, which %s --help does not list:\n%s", flag, bin, help)
		}
	}
}

// userKubeconfig writes a kubeconfig for the hub that acts as user in groups (the admin's certificate,
// impersonating), so that the RBAC of that identity alone decides what its client may do.
func userKubeconfig(t *testing.T, user string, groups ...string) string {
	t.Helper()
	cfg := hub(t)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Impersonate: user, ImpersonateGroups: groups,
	}
	kc.Contexts["user"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "user"}
	kc.CurrentContext = "user"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAddonAgentRunsWithItsPermissions runs the agent the Dockerfile's steps build with the addon's arguments,
// as OCM would: on the hub as the registration's identity with only the binding the addon manager makes in its
// cluster's namespace, and on the managed cluster (the same API server standing in) as the template's
// ServiceAccount with the template's ClusterRole. It must become ready on the template's probe, measure a
// generator (a latency probe of a loopback server the agent is --allow'ed to reach, and the node-headroom
// plugin, which lists nodes and pods) and write its AddOnPlacementScore and status; the audit log must show no
// request of either identity refused.
func TestAddonAgentRunsWithItsPermissions(t *testing.T) {
	c, _ := addonHubClient(t)
	ctx := context.Background()
	objs := configAddon(t, "config/addon")
	a := readAddon(t, objs)
	for _, o := range ofKind(objs, "ClusterRole") {
		if o.GetName() == addonHubRole {
			apply(t, c, o)
		}
	}
	managerBinary(t) // replays the Dockerfile's builder stage, which builds the agent too
	bin := filepath.Join(buildDir, path.Base(agentContainer(t, a.agentDeployment(t)).Command[0]))
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the Dockerfile's builder stage does not build the agent: %v", err)
	}

	// The managed cluster's side: the template's manifests for the cluster, as the work agent applies them.
	cluster := "addon-run-" + rand.String(5)
	ensureNamespace(t, c, cluster, nil)
	ensureNamespace(t, c, addonInstallNS, map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})
	manifests := renderTemplate(t, a, cluster)
	for _, m := range manifests {
		switch m.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding":
			apply(t, c, m)
		}
	}
	sa := one(t, manifests, "ServiceAccount")
	spokeUser := "system:serviceaccount:" + sa.GetNamespace() + ":" + sa.GetName()
	spokeKubeconfig := userKubeconfig(t, spokeUser, "system:serviceaccounts", "system:serviceaccounts:"+sa.GetNamespace(), "system:authenticated")

	// The hub's side: the addon manager's RoleBinding in the cluster's namespace, and the registration's
	// identity.
	group := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", cluster, addonName)
	hubUser := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:%s-agent", cluster, addonName, addonName)
	if err := c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("open-cluster-management:%s:clusterrole:agent", addonName), Namespace: cluster},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: addonHubRole},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: group}},
	}); err != nil {
		t.Fatal(err)
	}
	hubKubeconfig := userKubeconfig(t, hubUser, group, "system:open-cluster-management:addon:"+addonName, "system:authenticated")

	// A generator: a latency probe of a loopback server, and the node-headroom plugin.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	gen := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.open-cluster-management.io/v1alpha1", "kind": "AddOnPlacementScoreGenerator",
		"metadata": map[string]any{"name": "run", "namespace": cluster},
		"spec": map[string]any{
			"addOnPlacementSelector": map[string]any{"name": addonName},
			"latencies":              []any{map[string]any{"name": "loopback", "url": srv.URL + "/"}},
			"otherPlugin":            []any{map[string]any{"name": "cpu", "plugin": headroom.Name}},
		},
	}}
	apply(t, c, gen)

	// The template's arguments, with this test's kubeconfigs, ports and allowlist.
	metricsPort, healthPort := freePort(t), freePort(t)
	var args []string
	for _, arg := range agentContainer(t, convert[appsv1.Deployment](t, one(t, manifests, "Deployment"))).Args {
		flag, _, _ := strings.Cut(arg, "=")
		switch flag {
		case "--hub-kubeconfig":
			if arg != "--hub-kubeconfig="+addonTemplateVariables["HUB_KUBECONFIG"] {
				t.Fatalf("the rendered template passes %s", arg)
			}
			arg = flag + "=" + hubKubeconfig
		case "--metrics-bind-address":
			arg = fmt.Sprintf("%s=127.0.0.1:%d", flag, metricsPort)
		case "--health-probe-bind-address":
			arg = fmt.Sprintf("%s=127.0.0.1:%d", flag, healthPort)
		}
		args = append(args, arg)
	}
	args = append(args, "--kubeconfig="+spokeKubeconfig, "--allow=127.0.0.1")

	logs := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited //nolint:errcheck // killed: the wait error only says so
		if t.Failed() {
			t.Logf("agent %q logs:\n%s", args, logs.String())
		}
	})

	eventually(t, time.Minute, "the agent is ready", func() error {
		return httpGet(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), "")
	})
	eventually(t, time.Minute, "the agent writes the AddOnPlacementScore", func() error {
		score := &unstructured.Unstructured{}
		score.SetAPIVersion("cluster.open-cluster-management.io/v1alpha1")
		score.SetKind("AddOnPlacementScore")
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "run"}, score); err != nil {
			return err
		}
		scores, _, _ := unstructured.NestedSlice(score.Object, "status", "scores")
		for _, s := range scores {
			if s.(map[string]any)["name"] == "loopback" {
				return nil
			}
		}
		return fmt.Errorf("the AddOnPlacementScore's scores %v lack loopback", scores)
	})
	eventually(t, 30*time.Second, "the agent reports on the generator", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(gen), gen); err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(gen.Object, "status", "conditions")
		for _, cond := range conds {
			if cond := cond.(map[string]any); cond["type"] == "Valid" && cond["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("the generator's conditions %v lack Valid True", conds)
	})

	// No request of either identity refused, and the headroom plugin's lists made on the managed cluster.
	for _, user := range []string{hubUser, spokeUser} {
		for req, codes := range auditedRequests(t, user) {
			if slices.Contains(codes, http.StatusForbidden) {
				t.Errorf("the API server refused the agent's %s as %s: the addon's RBAC lacks it", req, user)
			}
		}
	}
	spoke := auditedRequests(t, spokeUser)
	for _, req := range []string{"|nodes|list", "|pods|list"} {
		if !slices.Contains(spoke[req], http.StatusOK) {
			t.Errorf("the agent made no successful %s on the managed cluster as %s (its requests: %v)", req, spokeUser, spoke)
		}
	}
}
