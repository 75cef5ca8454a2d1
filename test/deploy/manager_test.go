package deploy

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// dockerfile is the Dockerfile read as its instructions: the builder stage's WORKDIR, COPY and RUN lines, and
// the final stage's base, COPY --from, USER and ENTRYPOINT.
type dockerfile struct {
	builderWorkdir string
	builderCopies  [][2]string // source in the context, destination relative to the WORKDIR
	builderRuns    []string
	builderFrom    string
	finalFrom      string
	finalCopyFrom  string // the path in the builder stage the final stage copies
	finalUser      string
	entrypoint     []string
}

func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	stage := 0
	joined := strings.ReplaceAll(string(data), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		fields := strings.Fields(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			stage++
			if stage == 2 {
				d.finalFrom = fields[len(fields)-1]
			}
			if stage == 1 {
				if len(fields) < 3 || fields[len(fields)-2] != "AS" || fields[len(fields)-1] != "builder" {
					t.Fatalf("the first stage should be named builder: %s", line)
				}
				d.builderFrom = fields[len(fields)-3]
			}
		case "WORKDIR":
			if stage == 1 {
				d.builderWorkdir = fields[0]
			}
		case "COPY":
			if stage == 1 {
				if len(fields) < 2 || strings.HasPrefix(fields[0], "--") {
					t.Fatalf("this COPY is not modelled: %s", line)
				}
				dst := fields[len(fields)-1]
				for _, src := range fields[:len(fields)-1] {
					d.builderCopies = append(d.builderCopies, [2]string{src, dst})
				}
			} else if len(fields) == 3 && fields[0] == "--from=builder" {
				d.finalCopyFrom = fields[1]
			}
		case "RUN":
			if stage == 1 {
				d.builderRuns = append(d.builderRuns, rest)
			} else {
				t.Errorf("the final stage runs %q; a distroless base has no shell", rest)
			}
		case "USER":
			if stage == 2 {
				d.finalUser = rest
			}
		case "ENTRYPOINT":
			if stage == 2 {
				if err := json.Unmarshal([]byte(rest), &d.entrypoint); err != nil {
					t.Fatalf("ENTRYPOINT should be an exec form list: %v", err)
				}
			}
		}
	}
	if stage != 2 {
		t.Fatalf("the Dockerfile has %d stages, want 2 (builder and final)", stage)
	}
	return d
}

// The manager binary, built once by replaying the Dockerfile's builder stage.
var (
	managerOnce sync.Once
	managerPath string
	managerErr  error
	buildDir    string // removed by TestMain
)

func managerBinary(t *testing.T) string {
	t.Helper()
	d := parseDockerfile(t)
	managerOnce.Do(func() {
		managerPath, managerErr = buildLikeDockerfile(d)
	})
	if managerErr != nil {
		t.Fatal(managerErr)
	}
	return managerPath
}

// buildLikeDockerfile replays the Dockerfile's builder stage in a scratch directory: the same COPY lines, then
// the same RUN lines (but `go mod download`, which only warms the module cache) for this machine's OS and
// architecture. A package the manager imports but the COPY lines leave out fails the build here as it would in
// docker.
func buildLikeDockerfile(d dockerfile) (string, error) {
	work, err := os.MkdirTemp("", "pmw-docker-build-")
	if err != nil {
		return "", err
	}
	buildDir = work
	for _, c := range d.builderCopies {
		src, dst := filepath.Join(root, c[0]), filepath.Join(work, c[1])
		if info, err := os.Stat(src); err == nil && !info.IsDir() && strings.HasSuffix(c[1], "/") {
			dst = filepath.Join(dst, filepath.Base(c[0])) // a file into a directory; a directory's contents go to dst
		}
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			// A file rather than a directory.
			data, rerr := os.ReadFile(src)
			if rerr != nil {
				return "", fmt.Errorf("COPY %s %s: %w", c[0], c[1], err)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", err
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return "", err
			}
		}
	}
	for _, r := range d.builderRuns {
		if strings.TrimSpace(r) == "go mod download" {
			continue
		}
		cmd := exec.Command("sh", "-c", r)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TARGETOS="+runtime.GOOS, "TARGETARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("the Dockerfile's RUN %s fails in a replay of its COPY lines: %w\n%s", r, err, out)
		}
	}
	rel := strings.TrimPrefix(path.Clean(d.finalCopyFrom), path.Clean(d.builderWorkdir)+"/")
	bin := filepath.Join(work, rel)
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("the final stage copies %s, which the builder stage does not produce: %w", d.finalCopyFrom, err)
	}
	return bin, nil
}

// TestDockerfile checks the image's build steps: a static binary from ./cmd built by the COPY and RUN lines
// alone, on a distroless base, as a non-root user.
func TestDockerfile(t *testing.T) {
	d := parseDockerfile(t)
	if !strings.HasPrefix(d.finalFrom, "gcr.io/distroless/static") || !strings.HasSuffix(d.finalFrom, ":nonroot") {
		t.Errorf("final base %s, want gcr.io/distroless/static:nonroot", d.finalFrom)
	}
	if uid, _, _ := strings.Cut(d.finalUser, ":"); !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(uid) {
		t.Errorf("USER %q: want a numeric non-root UID, so that runAsNonRoot can verify it", d.finalUser)
	}
	if !slices.Equal(d.entrypoint, []string{"/" + path.Base(d.finalCopyFrom)}) {
		t.Errorf("ENTRYPOINT %v does not run the binary copied from the builder (%s)", d.entrypoint, d.finalCopyFrom)
	}
	// The builder's Go is at least the go directive of go.mod (otherwise the build downloads a toolchain).
	image := regexp.MustCompile(`^golang:(\d+)\.(\d+)`).FindStringSubmatch(d.builderFrom)
	gomod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	want := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindSubmatch(gomod)
	if image == nil || want == nil {
		t.Errorf("cannot compare the builder image %s with go.mod's go directive", d.builderFrom)
	} else if atoi(image[1])*1000+atoi(image[2]) < atoi(string(want[1]))*1000+atoi(string(want[2])) {
		t.Errorf("the builder image %s is older than go.mod's go %s.%s", d.builderFrom, want[1], want[2])
	}

	build := ""
	for _, r := range d.builderRuns {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd"} {
		if !strings.Contains(build, want) {
			t.Errorf("the build step %q lacks %s", build, want)
		}
	}

	// Every package of this module that ./cmd imports must be under a copied directory.
	out := run(t, "go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd")
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		copied := false
		for _, c := range d.builderCopies {
			src := strings.TrimSuffix(c[0], "/")
			if rel == src || strings.HasPrefix(rel, src+"/") {
				copied = true
			}
		}
		if !copied {
			t.Errorf("./cmd imports the package in %s, which no COPY line of the Dockerfile copies", rel)
		}
	}

	bin := managerBinary(t)
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("the manager binary is dynamically linked (%s); distroless/static has no libc", p.Type)
			}
		}
	}
}

// TestDeployedArgsAreManagerFlags checks every argument the chart and config/manager pass is a flag of the
// manager the Dockerfile builds.
func TestDeployedArgsAreManagerFlags(t *testing.T) {
	cmd := exec.Command(managerBinary(t), "--help")
	var help bytes.Buffer
	cmd.Stdout, cmd.Stderr = &help, &help
	_ = cmd.Run() // --help exits with 0 or 2 depending on the flag package; the text is what matters
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-(-?[a-z0-9-]+)`).FindAllStringSubmatch(help.String(), -1) {
		flags[strings.TrimPrefix(m[1], "-")] = true
	}
	if !flags["leader-elect"] || !flags["zap-log-level"] {
		t.Fatalf("could not read the manager's flags from --help:\n%s", help.String())
	}

	deployed := deployedArgs(t)
	for name, args := range deployed {
		for _, a := range args {
			flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.HasPrefix(a, "-") || !flags[flag] {
				t.Errorf("%s passes %q, which is not a flag of the manager", name, a)
			}
		}
	}

	// And the other way round: every flag of the manager is a value of the chart, but the few left to
	// extraArgs. A new flag fails here until the chart (values.yaml, values.schema.json,
	// templates/deployment.yaml) and docs/install.md have it.
	passed := map[string]bool{}
	for _, a := range deployed["the chart with default values"] {
		flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		passed[flag] = true
	}
	for flag := range flags {
		if !passed[flag] && !chartlessFlags[flag] {
			t.Errorf("the manager's flag --%s is not set by the chart: add a value for it, or list it in chartlessFlags", flag)
		}
	}
}

// chartlessFlags are the manager's flags the chart leaves to extraArgs.
var chartlessFlags = map[string]bool{
	"kubeconfig":           true, // in a pod the manager uses its ServiceAccount
	"zap-devel":            true,
	"zap-stacktrace-level": true,
	"zap-time-encoding":    true,
	"pprof-bind-address":   true, // profiling is for a debugging session, not for a release's values
	"fleet-kubeconfig":     true, // transparent mode, off by default: fleetAPIServer.enabled or .kubeconfigSecret set it (and grant its ClusterRole)
}

// deployedArgs are the manager container's arguments in the chart (default and custom values) and
// config/default.
func deployedArgs(t *testing.T) map[string][]string {
	t.Helper()
	sources := map[string][]*unstructured.Unstructured{
		"the chart with default values": render(t, "placement-manifestwork", "pmw-system"),
		"the chart with custom values":  render(t, "custom", "pmw-system", "--values", customValues),
	}
	if objs := kustomizeOrNil(t, "config/default"); objs != nil {
		sources["config/default"] = objs
	}
	out := map[string][]string{}
	for name, objs := range sources {
		d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
		out[name] = managerContainer(t, d).Args
	}
	return out
}

// TestManagerRunsWithChartRBAC runs the manager the Dockerfile's steps build, with the arguments the chart
// renders, as the chart's ServiceAccount bound by the chart's RBAC and nothing more (impersonated on the envtest
// hub). It must become ready, win the leader election, serve metrics, reconcile the samples of config/samples
// (create a Placement, write a ManifestWork, update status, record events), roll a template change out, report
// a work name taken by a foreign ManifestWork, delete its ManifestWorks with a PlacementManifestWork, stop
// cleanly on SIGTERM, and never be refused by the API server: the least-privilege rules are enough. Then the
// hub's audit log must show that it used them: every request it made is one managerGrants lists, and every
// listed request the run reaches was made, so no verb stays granted that the code does not use.
func TestManagerRunsWithChartRBAC(t *testing.T) {
	bin := managerBinary(t)
	c, _ := hubClient(t)
	ctx := context.Background()
	ns := restrictedNamespace(t, c, "pmw-run")
	metricsPort, healthPort := freePort(t), freePort(t)
	release := "run-" + rand.String(5) // the ClusterRole's name is cluster-wide
	objs := render(t, release, ns, "--set", fmt.Sprintf("metrics.port=%d", metricsPort),
		"--set", fmt.Sprintf("healthProbe.port=%d", healthPort))
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			apply(t, c, o)
		}
	}
	d := convert[appsv1.Deployment](t, one(t, objs, "Deployment"))
	args := managerContainer(t, d).Args
	kubeconfig := impersonatingKubeconfig(t, ns, d.Spec.Template.Spec.ServiceAccountName)

	logs := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	running := true
	t.Cleanup(func() {
		if running {
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // killed: the wait error only says so
		}
		if t.Failed() {
			t.Logf("manager logs:\n%s", logs.String())
		}
	})

	eventually(t, time.Minute, "the manager is ready", func() error {
		return httpGet(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), "")
	})
	eventually(t, 30*time.Second, "the manager holds the leader election Lease", func() error {
		lease := &coordinationv1.Lease{}
		key := client.ObjectKey{Namespace: ns, Name: "placement-manifestwork.work.open-cluster-management.io"}
		if err := c.Get(ctx, key, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("the Lease has no holder")
		}
		return nil
	})

	// OCM's side: a cluster (its namespace and ManagedCluster, with no status yet) and the samples.
	cluster, apps := "cluster-"+rand.String(5), "apps-"+rand.String(5)
	for _, name := range []string{cluster, apps} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}); err != nil {
		t.Fatal(err)
	}
	samples, _ := filepath.Glob(filepath.Join(root, "config", "samples", "work_*.yaml"))
	for _, f := range samples {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range decodeAll(t, data) {
			o.SetNamespace(apps)
			apply(t, c, o)
		}
	}
	// A PMW whose work name is taken in the cluster by a ManifestWork it does not own: the manager must read
	// that work from the API server, leave it alone and report the conflict.
	taken := framework.MakePMW("taken", apps).Placement("web").Manifest(framework.ConfigMap("t", "default", nil)).Obj()
	foreign := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(taken))}}
	if err := c.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	// A PMW whose distributionStrategy names no manifest: the manager must record a Warning event about it.
	noMatch := framework.MakePMW("no-match", apps).Placement("web").Manifest(framework.ConfigMap("c", "default", nil)).
		Strategy(workv1alpha1.DistributionStrategy{Name: "absent", Namespace: "default", Type: workv1alpha1.DistributionReplicate}).Obj()
	if err := c.Create(ctx, noMatch); err != nil {
		t.Fatal(err)
	}
	// The split sample's Placement "web" decides the cluster, as OCM's placement controller would.
	if err := framework.Decide(ctx, c, apps, "web", "web-decision-1", cluster); err != nil {
		t.Fatal(err)
	}

	webWorks := client.MatchingLabels{workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(types.NamespacedName{Namespace: apps, Name: "web"})}
	eventually(t, 30*time.Second, "a ManifestWork of the split sample for the cluster", func() error {
		works := &workv1.ManifestWorkList{}
		if err := c.List(ctx, works, client.InNamespace(cluster), webWorks); err != nil {
			return err
		}
		if len(works.Items) != 1 {
			return fmt.Errorf("%d ManifestWorks", len(works.Items))
		}
		return nil
	})
	eventually(t, 30*time.Second, "the status of the current generation", func() error {
		pmw := &workv1alpha1.PlacementManifestWork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: apps, Name: "web"}, pmw); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(pmw.Status.Conditions, workv1alpha1.ConditionPlacementVerified)
		if pmw.Status.ObservedGeneration != pmw.Generation || cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("status %+v", pmw.Status)
		}
		return nil
	})
	eventually(t, 30*time.Second, "the conflict with the foreign ManifestWork", func() error {
		pmw := &workv1alpha1.PlacementManifestWork{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(taken), pmw); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(pmw.Status.Conditions, workv1alpha1.ConditionManifestworkApplied); cond == nil || cond.Reason != workv1alpha1.ReasonManifestWorkConflict {
			return fmt.Errorf("conditions %+v", pmw.Status.Conditions)
		}
		return nil
	})
	// A template change rewrites the work.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		web := &workv1alpha1.PlacementManifestWork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: apps, Name: "web"}, web); err != nil {
			return err
		}
		changed := false
		for i, m := range web.Spec.ManifestWorkTemplate.Workload.Manifests {
			if raw := bytes.Replace(m.Raw, []byte(`"mode":"split"`), []byte(`"mode":"split-v2"`), 1); !bytes.Equal(raw, m.Raw) {
				web.Spec.ManifestWorkTemplate.Workload.Manifests[i].Raw, changed = raw, true
			}
		}
		if !changed {
			return fmt.Errorf(`the split sample has no ConfigMap with mode: split to change`)
		}
		return c.Update(ctx, web)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the ManifestWork of the changed template", func() error {
		works := &workv1.ManifestWorkList{}
		if err := c.List(ctx, works, client.InNamespace(cluster), webWorks); err != nil {
			return err
		}
		if len(works.Items) != 1 {
			return fmt.Errorf("%d ManifestWorks", len(works.Items))
		}
		for _, m := range works.Items[0].Spec.Workload.Manifests {
			if bytes.Contains(m.Raw, []byte(`"mode":"split-v2"`)) {
				return nil
			}
		}
		return fmt.Errorf("the ManifestWork does not carry the new template yet")
	})
	eventually(t, 30*time.Second, "the Placement the replicate sample gets", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: apps, Name: "hello"}, &clusterv1beta1.Placement{})
	})
	eventually(t, 30*time.Second, "the Warning event about the entry that matches no manifest", func() error {
		events := &corev1.EventList{}
		if err := c.List(ctx, events, client.InNamespace(apps)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "no-match" && e.Reason == workv1alpha1.ReasonStrategyMatchesNoManifest {
				return nil
			}
		}
		return fmt.Errorf("%d events, none about no-match", len(events.Items))
	})
	eventually(t, 10*time.Second, "the reconcile metrics", func() error {
		return httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), `controller_runtime_reconcile_total{controller="placementmanifestwork"`)
	})
	// The series the alerts select (TestMonitoring): the leader's status, and the PMW metrics under the PMW's
	// own namespace label, which the ServiceMonitors keep (honorLabels).
	for _, series := range []string{
		fmt.Sprintf(`leader_election_master_status{name=%q} 1`, leaderElectionID(t)),
		fmt.Sprintf(`placementmanifestwork_clusters{health="degraded",name="web",namespace=%q}`, apps),
	} {
		eventually(t, 10*time.Second, series, func() error {
			return httpGet(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), series)
		})
	}

	// Deleting a PlacementManifestWork deletes its ManifestWorks, then its finalizer goes.
	if err := c.Delete(ctx, &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: apps, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the PlacementManifestWork and its ManifestWork are gone", func() error {
		err := c.Get(ctx, client.ObjectKey{Namespace: apps, Name: "web"}, &workv1alpha1.PlacementManifestWork{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the PlacementManifestWork is still there (%v)", err)
		}
		works := &workv1.ManifestWorkList{}
		if err := c.List(ctx, works, client.InNamespace(cluster), webWorks); err != nil {
			return err
		}
		if len(works.Items) != 0 {
			return fmt.Errorf("%d ManifestWorks left", len(works.Items))
		}
		return nil
	})

	// SIGTERM, as the kubelet stops a pod: the manager releases the Lease and exits with 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		running = false
		if err != nil {
			t.Errorf("the manager exited with %v after SIGTERM", err)
		}
	case <-time.After(time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second):
		t.Errorf("the manager did not stop within the pod's termination grace period")
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			t.Errorf("the API server refused the manager something its RBAC should allow: %s", line)
		}
	}

	// What the manager asked the API server for, from the audit log.
	requests := auditedRequests(t, "system:serviceaccount:"+ns+":"+d.Spec.Template.Spec.ServiceAccountName)
	for _, key := range slices.Sorted(maps.Keys(requests)) {
		if _, ok := managerGrants[key]; !ok {
			t.Errorf("the manager requested %s (%d times), which managerGrants does not list: grant it with a marker and list it", key, len(requests[key]))
		}
		for _, code := range requests[key] {
			if code == http.StatusForbidden {
				t.Errorf("the API server refused the manager %s", key)
				break
			}
		}
	}
	for key, g := range managerGrants {
		if g.proof == requested && len(requests[key]) == 0 {
			t.Errorf("the manager never requested %s (%s): if the code no longer does, drop the verb from the RBAC and from managerGrants", key, g.use)
		}
	}
	if t.Failed() {
		t.Logf("the manager's requests: %v", slices.Sorted(maps.Keys(requests)))
	}
}

// impersonatingKubeconfig writes a kubeconfig for the hub that acts as the ServiceAccount ns/name (the admin's
// certificate, impersonating), so that the chart's RBAC alone decides what the manager may do.
func impersonatingKubeconfig(t *testing.T, ns, name string) string {
	t.Helper()
	cfg := hub(t)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["manager"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Impersonate:           "system:serviceaccount:" + ns + ":" + name,
		ImpersonateGroups:     []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	kc.Contexts["manager"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "manager"}
	kc.CurrentContext = "manager"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// httpGet fails unless url answers 200 with a body containing want.
func httpGet(url, want string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if !strings.Contains(string(body), want) {
		return fmt.Errorf("%s does not contain %s", url, want)
	}
	return nil
}

// eventually polls check until it succeeds, failing the test with its last error after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the manager's stdout and stderr writers and the test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
