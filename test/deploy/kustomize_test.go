package deploy

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestKustomizeDefault renders config/default (what `make deploy` and `kubectl apply -k config/default`
// install) and applies it to the hub with a dry run.
func TestKustomizeDefault(t *testing.T) {
	objs := kustomize(t, "config/default")
	c, w := hubClient(t)

	if got, want := kinds(objs), []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "CustomResourceDefinition", "CustomResourceDefinition", "Deployment",
		"Namespace", "Role", "RoleBinding", "Service", "ServiceAccount", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}; !slices.Equal(got, want) {
		t.Errorf("rendered kinds %v, want %v", got, want)
	}
	const ns = "placement-manifestwork-system"
	namespace := one(t, objs, "Namespace")
	if namespace.GetName() != ns {
		t.Errorf("namespace %s, want %s", namespace.GetName(), ns)
	}
	if namespace.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("the namespace should enforce the restricted Pod Security Standard: %v", namespace.GetLabels())
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.GetName(), "placement-manifestwork") && o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("%s lacks the name prefix", describe(o))
		}
	}

	d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	m := managerContainer(t, d)
	if !slices.Contains(m.Args, "--leader-elect") {
		t.Errorf("args %q lack --leader-elect", m.Args)
	}
	// make deploy replaces exactly this image line with $(IMG).
	if m.Image != "placement-manifestwork:dev" {
		t.Errorf("image %s, want placement-manifestwork:dev (make deploy substitutes it)", m.Image)
	}
	checkHardened(t, d)
	checkProbes(t, m, 8081)
	if d.Spec.Template.Spec.ServiceAccountName != "placement-manifestwork-controller-manager" {
		t.Errorf("ServiceAccount %s", d.Spec.Template.Spec.ServiceAccountName)
	}

	svc := convert[corev1.Service](t, one(t, objs, "Service"))
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("the metrics Service %v does not reach the manager's metrics port", svc.Spec)
	}

	// The Namespace for real (with its restricted Pod Security labels), the rest with a dry run.
	dryRunApply(t, c, w, ensureNamespaces(t, c, objs))
}

// TestKustomizeSamples renders config/samples and applies it with a dry run (the integration suite creates
// each sample file too).
func TestKustomizeSamples(t *testing.T) {
	objs := kustomize(t, "config/samples")
	if len(ofKind(objs, "PlacementManifestWork")) < 2 {
		t.Fatalf("want at least two PlacementManifestWork samples, got kinds %v", kinds(objs))
	}
	c, w := hubClient(t)
	dryRunApply(t, c, w, objs)
}
