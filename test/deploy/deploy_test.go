// Package deploy tests how the manager is installed: the Helm chart (helm lint, helm template with default and
// other values), the kustomize configuration in config/, the RBAC (least privilege, no wildcards, exactly the
// +kubebuilder:rbac markers, every verb one the manager's requests use, execute-as for either install), the
// monitoring objects and alerts, the Dockerfile's build steps, and the docs' coverage of condition reasons
// (docs/troubleshooting.md and README.md's conditions table). Every rendered object is applied to an envtest
// hub with a server-side dry run, so the API server accepts it, and the manager binary the Dockerfile's steps
// build runs on that hub as the chart's ServiceAccount, its requests read back from the hub's audit log.
//
// helm comes from hack/helm-binary.sh (built once from helm.sh/helm/v3 into bin/helm/) unless HELM names a
// binary; kubectl (for `kubectl kustomize`) comes from PATH.
package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/yamlobjects"
)

const (
	chartDir   = "charts/placement-manifestwork"
	fieldOwner = client.FieldOwner("test-deploy")
)

var root = envhub.RepoRoot()

func TestMain(m *testing.M) {
	code := m.Run()
	stopHub()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// The envtest hub, started by the first test that needs it, with the PlacementManifestWork and OCM CRDs,
// prometheus-operator's CRDs (testdata/crds) for the chart's optional monitoring objects,
// and OCM's ManifestWorkReplicaSet CRD. Its API server also
//   - writes an audit log (testdata/audit-policy.yaml: the metadata of every request), from which
//     TestManagerRunsWithChartRBAC learns which requests the manager made;
//   - enforces OwnerReferencesPermissionEnforcement, as hardened hubs do, so that an owner reference with
//     blockOwnerDeletion needs the permission to update the owner's finalizers.
var (
	hubOnce sync.Once
	envHub  *envhub.Hub // its audit log is in a temporary folder its Stop removes
	hubErr  error
)

func hub(t *testing.T) *rest.Config {
	t.Helper()
	hubOnce.Do(func() { envHub, hubErr = startHub() })
	if hubErr != nil {
		t.Fatalf("starting the envtest hub: %v", hubErr)
	}
	return envHub.Config
}

// startHub starts the hub described above.
func startHub() (*envhub.Hub, error) {
	// OCM's ManifestWorkReplicaSet CRD too, for the migration guide's example.
	ocm, err := envhub.ModuleDir("open-cluster-management.io/api")
	if err != nil {
		return nil, err
	}
	policy, err := os.ReadFile(filepath.Join("testdata", "audit-policy.yaml"))
	if err != nil {
		return nil, err
	}
	return envhub.Start(envhub.Options{
		ExtraCRDPaths: []string{
			filepath.Join("testdata", "crds"),
			filepath.Join(ocm, "work", "v1alpha1", "0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml"),
		},
		AuditPolicy:   string(policy),
		APIServerArgs: map[string]string{"enable-admission-plugins": "OwnerReferencesPermissionEnforcement"},
	})
}

func auditLogPath() string { return envHub.AuditLog }

func stopHub() {
	if envHub != nil {
		_ = envHub.Stop()
	}
}

// warnings collects the warnings the API server returns (Pod Security admission warns about workloads that
// would violate the namespace's level).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// hubClient is an admin client of the hub and the warnings its requests get.
func hubClient(t *testing.T) (client.Client, *warnings) {
	t.Helper()
	cfg := rest.CopyConfig(hub(t))
	w := &warnings{}
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

// restrictedNamespace creates a namespace (unique, from prefix) that enforces and warns about the restricted
// Pod Security Standard, so a dry run of a Deployment there warns about every violation of its pod template.
func restrictedNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%s", prefix, rand.String(5))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	}}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

// dryRunApply server-side applies every object with a dry run and fails the test on any refusal and on any
// warning (a Pod Security violation, a deprecated API, an unknown field).
func dryRunApply(t *testing.T, c client.Client, w *warnings, objs []*unstructured.Unstructured) {
	t.Helper()
	if len(objs) == 0 {
		t.Fatal("nothing to apply")
	}
	w.take()
	for _, o := range objs {
		err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
			fieldOwner, client.ForceOwnership, client.DryRunAll)
		if err != nil {
			t.Errorf("the API server refuses %s: %v", describe(o), err)
		}
		for _, warning := range w.take() {
			t.Errorf("the API server warns about %s: %s", describe(o), warning)
		}
	}
}

// apply server-side applies the objects for real.
func apply(t *testing.T, c client.Client, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(o.DeepCopy()), fieldOwner, client.ForceOwnership); err != nil {
			t.Fatalf("applying %s: %v", describe(o), err)
		}
	}
}

// ensureNamespaces creates the Namespace objects among objs for real (a dry run of the objects in them needs
// them to exist) and returns the other objects.
func ensureNamespaces(t *testing.T, c client.Client, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "Namespace" || o.GetAPIVersion() != "v1" {
			rest = append(rest, o)
			continue
		}
		err := c.Create(context.Background(), o.DeepCopy())
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating %s: %v", describe(o), err)
		}
	}
	return rest
}

func describe(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
}

// decodeAll splits a multi-document YAML stream into objects, skipping empty documents.
func decodeAll(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := yamlobjects.DecodeBytes(data, "the YAML")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only object of a kind, failing the test unless there is exactly one.
func one(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	found := ofKind(objs, kind)
	if len(found) != 1 {
		t.Fatalf("want exactly one %s, rendered %d", kind, len(found))
	}
	return found[0]
}

// convert turns an unstructured object into a typed one.
func convert[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("converting %s: %v", describe(o), err)
	}
	return out
}

// run runs a command in the repository's root and returns its standard output; it fails the test on an error.
func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runErr(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}

// helm returns the helm binary: $HELM, or the one hack/helm-binary.sh builds once from Go modules.
var helm = sync.OnceValues(func() (string, error) {
	if h := os.Getenv("HELM"); h != "" {
		return h, nil
	}
	start := time.Now()
	cmd := exec.Command(filepath.Join(root, "hack", "helm-binary.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building helm with hack/helm-binary.sh: %w", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		fmt.Fprintf(os.Stderr, "helm built in %s\n", d.Round(time.Second))
	}
	return filepath.Join(strings.TrimSpace(string(out)), "helm"), nil
})

func helmBin(t *testing.T) string {
	t.Helper()
	h, err := helm()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// render runs helm template on the chart, CRDs included, and returns the objects.
func render(t *testing.T, release, namespace string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	all := append([]string{"template", release, chartDir, "--namespace", namespace, "--include-crds"}, args...)
	return decodeAll(t, run(t, helmBin(t), all...))
}

// kustomize renders a kustomization directory with kubectl's built-in kustomize.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not in PATH; `kubectl kustomize` renders config/ (the CI image has it)")
	}
	return decodeAll(t, run(t, kubectl, "kustomize", dir))
}

// TestDryRunReportsPodSecurityViolations guards the other tests' Pod Security checks: a Deployment that breaks
// the restricted standard must draw a warning from a dry run in a restricted namespace.
func TestDryRunReportsPodSecurityViolations(t *testing.T) {
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pss")
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "privileged", "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "x", "image": "x", "securityContext": map[string]any{"privileged": true},
				}}},
			},
		},
	}}
	w.take()
	if err := c.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(bad), fieldOwner, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.take(), "\n"); !strings.Contains(got, "restricted") {
		t.Fatalf("no Pod Security warning for a privileged Deployment (got %q): the dry runs would miss violations", got)
	}
}
