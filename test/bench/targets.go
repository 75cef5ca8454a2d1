package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// appNamespace is the namespace of the workload on the managed clusters.
const appNamespace = "bench-app"

// imageRepo is the Deployment's image without its tag (the version).
const imageRepo = "registry.example/app"

// replicasPerCluster is every cluster's share of the split Deployment (the PMW's total is this times the
// number of clusters), and the replicas of the Deployment OCM's controller replicates.
const replicasPerCluster = 2

// manifests is the workload: a ConfigMap and a Service replicated, and a Deployment of the given replicas
// (split by the manager). version changes the ConfigMap and the image, as a release would.
func manifests(version string, replicas int) []workv1.Manifest {
	dep := framework.Deployment("bench-app", appNamespace, replicas)
	spec := dep["spec"].(map[string]any)
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	pod["containers"].([]any)[0].(map[string]any)["image"] = imageRepo + ":" + version
	objs := []map[string]any{
		framework.ConfigMap("bench-config", appNamespace, map[string]string{"version": version, "settings": strings.Repeat("x", 256)}),
		dep,
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "bench-app", "namespace": appNamespace},
			"spec": map[string]any{
				"selector": map[string]any{"app": "bench-app"},
				"ports":    []any{map[string]any{"port": 80, "targetPort": 8080}},
			},
		},
	}
	out := make([]workv1.Manifest, 0, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			panic(err)
		}
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return out
}

// feedbackConfigs are the manifestConfigs the manager adds for the workload's health, given to the limit's
// works and OCM's template too, so every contender writes works of the same size.
func feedbackConfigs(ms []workv1.Manifest) []workv1.ManifestConfigOption {
	parsed, err := template.Parse(ms)
	if err != nil {
		panic(err)
	}
	return health.ManifestConfigs(parsed, nil)
}

// job is one PlacementManifestWork or ManifestWorkReplicaSet and its Placement.
type job struct {
	ns, name, placement string
}

// contender is a controller under test.
type contender interface {
	// title names it in the report.
	title() string
	// user is its user on the hub, in the audit log.
	user() string
	start(dir string) (*process, error)
	// create writes the job's object for clusters at version.
	create(ctx context.Context, j job, clusters int, version string) error
	update(ctx context.Context, j job, clusters int, version string) error
	remove(ctx context.Context, j job) error
	// group is the tracker's group of the job's works.
	group(j job) string
	// gone reports whether the job's object is gone.
	gone(ctx context.Context, j job) (bool, error)
}

// manager is this project's controller-manager, run from its binary with its default flags.
type manager struct {
	h     *hub
	bin   string
	extra []string
	// name is the title of a manager run with other flags; "manager" otherwise.
	name string
	// overrides gives its PMW regionOverride.
	overrides bool
}

// regionImageRegistry is the expression of regionOverride: the image registry of the cluster's region.
const regionImageRegistry = `"registry-" + cluster.labels["region"] + ".example.com"`

// regionOverride rewrites the registry of the Deployment's image by the cluster's region label (the image
// short form), so the fleet's works carry one of as many distinct Deployments as there are regions.
func regionOverride() workv1alpha1.ClusterOverride {
	return workv1alpha1.ClusterOverride{
		Name:      "regional-registry",
		Manifests: []workv1alpha1.OverrideManifest{{Group: "apps", Kind: "Deployment", Name: "bench-app", Namespace: appNamespace}},
		Image:     &workv1alpha1.ImageOverride{Registry: &workv1alpha1.OverrideValue{Expression: regionImageRegistry}},
	}
}

// image is the Deployment's image on the cluster at version: the template's, or with overrides the one
// regionOverride gives it.
func (m *manager) image(cluster, version string) string {
	if !m.overrides {
		return imageRepo + ":" + version
	}
	return "registry-" + regionOf(cluster) + ".example.com/app:" + version
}

func (m *manager) title() string {
	if m.name != "" {
		return m.name
	}
	return "manager"
}
func (m *manager) user() string { return userManager }

func (m *manager) start(dir string) (*process, error) {
	return m.startWith(dir, nil, "Starting workers")
}

// startWith starts the manager with more flags and waits until its log shows ready.
func (m *manager) startWith(dir string, more []string, ready string) (*process, error) {
	metrics, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	probes, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes),
	}, m.extra...)
	args = append(args, more...)
	p, err := startProcess(dir, "manager", m.bin, args, "KUBECONFIG="+m.h.kubeconfigs[userManager])
	if err != nil {
		return nil, err
	}
	p.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)
	if err := p.WaitLog(ready, 2*time.Minute); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (m *manager) pmw(j job, clusters int, version string) *workv1alpha1.PlacementManifestWork {
	w := framework.MakePMW(j.name, j.ns).Placement(j.placement).Strategy(workv1alpha1.DistributionStrategy{
		Name: "bench-app", Namespace: appNamespace, Group: "apps", Kind: "Deployment",
		Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
	}).Obj()
	w.Spec.ManifestWorkTemplate.Workload.Manifests = manifests(version, replicasPerCluster*clusters)
	if m.overrides {
		w.Spec.Overrides = []workv1alpha1.ClusterOverride{regionOverride()}
	}
	return w
}

func (m *manager) create(ctx context.Context, j job, clusters int, version string) error {
	return m.h.harness.Create(ctx, m.pmw(j, clusters, version))
}

func (m *manager) update(ctx context.Context, j job, clusters int, version string) error {
	cur := &workv1alpha1.PlacementManifestWork{}
	if err := m.h.harness.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: j.name}, cur); err != nil {
		return err
	}
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.ManifestWorkTemplate.Workload.Manifests = manifests(version, replicasPerCluster*clusters)
	return m.h.harness.Patch(ctx, cur, patch)
}

func (m *manager) remove(ctx context.Context, j job) error {
	return client.IgnoreNotFound(m.h.harness.Delete(ctx, &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: j.ns, Name: j.name}}))
}

func (m *manager) group(j job) string {
	return "pmw:" + manifestwork.OwnerLabelValue(types.NamespacedName{Namespace: j.ns, Name: j.name})
}

func (m *manager) gone(ctx context.Context, j job) (bool, error) {
	err := m.h.harness.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: j.name}, &workv1alpha1.PlacementManifestWork{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// ocm is OCM's work hub manager with its ManifestWorkReplicaSet controller, run from its binary with its
// default flags.
type ocm struct {
	h   *hub
	bin string
}

func (o *ocm) title() string { return "OCM MWRS" }
func (o *ocm) user() string  { return userOCM }

func (o *ocm) start(dir string) (*process, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(context.Background(), o.h.harness, "bench-ocm"); err != nil {
		return nil, err
	}
	args := []string{"manager", "--feature-gates=ManifestWorkReplicaSet=true",
		"--kubeconfig=" + o.h.kubeconfigs[userOCM], "--namespace=bench-ocm", "--disable-leader-election",
		fmt.Sprintf("--listen=127.0.0.1:%d", port)}
	p, err := startProcess(dir, "ocm-work-manager", o.bin, args)
	if err != nil {
		return nil, err
	}
	if err := p.WaitLog("Caches are synced", 2*time.Minute); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (o *ocm) mwrs(j job, version string) *ocmworkv1alpha1.ManifestWorkReplicaSet {
	ms := manifests(version, replicasPerCluster)
	return &ocmworkv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.ns, Name: j.name},
		Spec: ocmworkv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{
				Workload:        workv1.ManifestsTemplate{Manifests: ms},
				ManifestConfigs: feedbackConfigs(ms),
			},
			PlacementRefs: []ocmworkv1alpha1.LocalPlacementReference{{
				Name: j.placement, RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
			}},
		},
	}
}

func (o *ocm) create(ctx context.Context, j job, _ int, version string) error {
	return o.h.harness.Create(ctx, o.mwrs(j, version))
}

func (o *ocm) update(ctx context.Context, j job, _ int, version string) error {
	cur := &ocmworkv1alpha1.ManifestWorkReplicaSet{}
	if err := o.h.harness.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: j.name}, cur); err != nil {
		return err
	}
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.ManifestWorkTemplate = o.mwrs(j, version).Spec.ManifestWorkTemplate
	return o.h.harness.Patch(ctx, cur, patch)
}

func (o *ocm) remove(ctx context.Context, j job) error {
	return client.IgnoreNotFound(o.h.harness.Delete(ctx, &ocmworkv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: j.ns, Name: j.name}}))
}

func (o *ocm) group(j job) string { return "mwrs:" + j.ns + "." + j.name }

func (o *ocm) gone(ctx context.Context, j job) (bool, error) {
	err := o.h.harness.Get(ctx, client.ObjectKey{Namespace: j.ns, Name: j.name}, &ocmworkv1alpha1.ManifestWorkReplicaSet{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// limitWorks are the ManifestWorks the manager writes for a job, built by the harness: the same spec (the
// workload with each cluster's share, and the feedback manifestConfigs), labelled for the limit client.
func limitWorks(id string, clusters []string, version string) []*workv1.ManifestWork {
	ms := manifests(version, replicasPerCluster)
	configs := feedbackConfigs(ms)
	out := make([]*workv1.ManifestWork, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{
				Name: "limit-" + id, Namespace: c,
				Labels: map[string]string{labelLimit: id},
				Annotations: map[string]string{
					workv1alpha1.AnnotationOwner:    "bench-limit/" + id,
					workv1alpha1.AnnotationOwnerUID: "00000000-0000-0000-0000-000000000000",
					workv1alpha1.AnnotationSpecHash: "0123456789abcdef0123456789abcdef",
				},
			},
			Spec: workv1.ManifestWorkSpec{
				Workload:        workv1.ManifestsTemplate{Manifests: ms},
				ManifestConfigs: configs,
			},
		})
	}
	return out
}

// ocmAPIDir is the open-cluster-management.io/api module OCM's binary is built with (its CRDs match it).
func ocmAPIDir() (string, error) {
	return envhub.ModuleDirIn(filepath.Join(envhub.RepoRoot(), "hack", "tools", "ocm"), "open-cluster-management.io/api")
}
