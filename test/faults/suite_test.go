// Package faults runs the PlacementManifestWork manager against a real kube-apiserver (envtest) while things go
// wrong: the manager is killed mid-fan-out and restarted, two managers hand leadership over, the API server
// restarts, writes fail with conflicts and server errors, and clusters are deleted from under their works. It
// also checks the security promises that need a running manager: a PlacementManifestWork reaches only the
// clusters decided for a Placement of its own namespace, and never touches a ManifestWork it does not own.
//
// Every spec starts its own managers in this process (controllers.SetupWithManager on ctrl.NewManager, as
// cmd/main.go does) and stops them before it ends, so no spec sees another's manager. The tests play OCM: they
// write PlacementDecisions as the placement controller would and ManifestWork status as the work agent would.
package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// Timeouts are generous: the suite shares two cores with other suites and runs under the race detector.
const (
	timeout     = 60 * time.Second
	longTimeout = 3 * time.Minute
	interval    = 200 * time.Millisecond
)

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client

	// running are the managers started and not yet stopped; AfterSuite stops any a failed spec left behind.
	runningMu sync.Mutex
	running   = map[*manager]bool{}
	// certBackups are the directories restartAPIServer keeps the API server's certificates in.
	certBackups []string
)

func TestFaults(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork faults and security")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, cfg, err = framework.StartHub()
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	runningMu.Lock()
	left := make([]*manager, 0, len(running))
	for m := range running {
		left = append(left, m)
	}
	runningMu.Unlock()
	for _, m := range left {
		m.stop()
	}
	// envtest's kube-apiserver and etcd outlive the test process when it is killed: always stop them.
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
	for _, dir := range certBackups {
		Expect(os.RemoveAll(dir)).To(Succeed())
	}
})

// managerOptions are what a spec varies between the managers it starts.
type managerOptions struct {
	// name tells the managers of a spec apart in logs.
	name string
	// maxConcurrentWrites is controllers.Options.MaxConcurrentWrites; 16 when zero.
	maxConcurrentWrites int
	// leaderElectionID turns leader election on, with a Lease of that name in leaderElectionNamespace.
	leaderElectionID        string
	leaderElectionNamespace string
	// wrap, when set, wraps the manager's client (after the write recorder) to inject faults.
	wrap func(client.WithWatch) client.WithWatch
	// wrapCache, when set, wraps the cache the manager's client reads from.
	wrapCache func(client.Reader) client.Reader
}

// manager is a PlacementManifestWork manager running in this process.
type manager struct {
	name     string
	mgr      ctrl.Manager
	recorder *framework.WriteRecorder
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
	err      error
}

// startManager starts a manager as cmd/main.go does and registers its stop with the spec's cleanup.
func startManager(o managerOptions) *manager {
	m := &manager{name: o.name, recorder: &framework.WriteRecorder{}, done: make(chan struct{})}
	writes := o.maxConcurrentWrites
	if writes == 0 {
		writes = 16
	}
	opts := ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Cache:                  controllers.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logf.Log.WithName(o.name),
		// Several managers run in this process one after the other (two at once for leader election), each
		// with the controller named "placementmanifestwork".
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		NewClient: func(c *rest.Config, options client.Options) (client.Client, error) {
			if o.wrapCache != nil && options.Cache != nil && options.Cache.Reader != nil {
				cached := *options.Cache
				cached.Reader = o.wrapCache(cached.Reader)
				options.Cache = &cached
			}
			recorded, err := m.recorder.NewClient(c, options)
			if err != nil || o.wrap == nil {
				return recorded, err
			}
			return o.wrap(recorded.(client.WithWatch)), nil
		},
	}
	if o.leaderElectionID != "" {
		opts.LeaderElection = true
		opts.LeaderElectionID = o.leaderElectionID
		opts.LeaderElectionNamespace = o.leaderElectionNamespace
		opts.LeaderElectionReleaseOnCancel = true
		opts.LeaseDuration = ptr.To(4 * time.Second)
		opts.RenewDeadline = ptr.To(3 * time.Second)
		opts.RetryPeriod = ptr.To(time.Second)
	}
	var err error
	m.mgr, err = ctrl.NewManager(cfg, opts)
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	Expect(controllers.SetupWithManager(ctx, m.mgr, controllers.Options{MaxConcurrentReconciles: 4, MaxConcurrentWrites: writes})).To(Succeed())

	runningMu.Lock()
	running[m] = true
	runningMu.Unlock()
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		m.err = m.mgr.Start(ctx)
	}()
	DeferCleanup(m.stop)
	return m
}

// stop cancels the manager and waits until Start has returned: every reconcile has ended and, with leader
// election, the Lease is released.
func (m *manager) stop() {
	m.stopOnce.Do(func() {
		m.cancel()
		Eventually(m.done, timeout, interval).Should(BeClosed(), "manager %s stops", m.name)
		Expect(m.err).NotTo(HaveOccurred(), "manager %s", m.name)
		runningMu.Lock()
		delete(running, m)
		runningMu.Unlock()
	})
}

func (m *manager) stopped() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *manager) elected() bool {
	select {
	case <-m.mgr.Elected():
		return true
	default:
		return false
	}
}

// workWrites are the ManifestWork writes a manager sent to the API server.
func (m *manager) workWrites() []framework.Write {
	return m.recorder.Writes(func(w framework.Write) bool { return w.Kind == "ManifestWork" })
}

// newNamespace creates a namespace with a unique name and returns it.
func newNamespace(prefix string) string {
	name := fmt.Sprintf("%s-%s", prefix, rand.String(6))
	Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// newClusters creates n cluster namespaces with unique names, 32 at a time, and returns the names sorted.
func newClusters(n int) []string {
	prefix := "c" + rand.String(5)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 32)
	for _, name := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	Expect(errors.Join(errs...)).NotTo(HaveOccurred())
	return out
}

// decide plays OCM's placement controller: it writes a Placement's decision, then the Placement's status.
func decide(ns, placement, decisionName string, clusters ...string) {
	Eventually(func() error {
		return framework.Decide(context.Background(), k8s, ns, placement, decisionName, clusters...)
	}, timeout, interval).Should(Succeed())
}

// worksOf lists the ManifestWorks carrying a PlacementManifestWork's label, from the API server.
func worksOf(g Gomega, pmw *workv1alpha1.PlacementManifestWork) []workv1.ManifestWork {
	list := &workv1.ManifestWorkList{}
	g.Expect(k8s.List(context.Background(), list, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	})).To(Succeed())
	return list.Items
}

// worksByCluster keys works by namespace and fails on two works in one namespace.
func worksByCluster(g Gomega, works []workv1.ManifestWork) map[string]workv1.ManifestWork {
	out := make(map[string]workv1.ManifestWork, len(works))
	for _, w := range works {
		_, dup := out[w.Namespace]
		g.Expect(dup).To(BeFalse(), "two works in cluster %s", w.Namespace)
		out[w.Namespace] = w
	}
	return out
}

func keys(m map[string]workv1.ManifestWork) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// current reads a PlacementManifestWork and expects its status to describe its current generation.
func current(g Gomega, pmw *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
	got := &workv1alpha1.PlacementManifestWork{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(pmw), got)).To(Succeed())
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "status describes the current generation")
	return got
}

// condition returns a condition of a PlacementManifestWork's current status.
func condition(g Gomega, pmw *workv1alpha1.PlacementManifestWork, t string) metav1.Condition {
	got := current(g, pmw)
	c := meta.FindStatusCondition(got.Status.Conditions, t)
	g.Expect(c).NotTo(BeNil(), "condition %s", t)
	return *c
}

// agentReports sets conditions on a cluster's work for its current generation, as the work agent does.
func agentReports(pmw *workv1alpha1.PlacementManifestWork, cluster string, conds map[string]metav1.ConditionStatus) {
	ctx := context.Background()
	Eventually(func(g Gomega) {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		framework.WorkConditions(w, conds)
		g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

// updatePMW applies change to the current PlacementManifestWork, retrying on conflicts.
func updatePMW(pmw *workv1alpha1.PlacementManifestWork, change func(*workv1alpha1.PlacementManifestWork)) {
	Eventually(func(g Gomega) {
		cur := &workv1alpha1.PlacementManifestWork{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
		change(cur)
		g.Expect(k8s.Update(context.Background(), cur)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

// deletePMW deletes a PlacementManifestWork and waits until the running manager has removed its works and
// released it.
func deletePMW(pmw *workv1alpha1.PlacementManifestWork, within time.Duration) {
	Expect(client.IgnoreNotFound(k8s.Delete(context.Background(), pmw))).To(Succeed())
	Eventually(func(g Gomega) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the PlacementManifestWork is gone")
		g.Expect(worksOf(g, pmw)).To(BeEmpty())
	}, within, interval).Should(Succeed())
}

// restartAPIServer kills envtest's kube-apiserver, as a crash would, and starts it again on the same port with
// the same certificates, while etcd keeps running.
//
// A graceful stop (APIServer.Stop) is no use while a manager holds watches open: kube-apiserver waits for them
// past envtest's 20-second stop timeout and is killed anyway. So the process is sent SIGKILL by its id (the
// kube-apiserver whose --cert-dir is this hub's), then APIServer.Stop cleans up its state. Stop also deletes
// the certificate directory it created (and forgets it), after which a plain Start would make a new serving CA
// that no existing client trusts; the directory is copied first and given back to the APIServer, which then
// reuses the serving certificate. The client CA lives in memory (CertAuthn) and is written again on Start, so
// the certificates in cfg stay valid, and the secure port, once allocated, is kept.
func restartAPIServer() {
	s := env.ControlPlane.APIServer
	backup, err := os.MkdirTemp("", "pmw-faults-apiserver-")
	Expect(err).NotTo(HaveOccurred())
	certBackups = append(certBackups, backup)
	entries, err := os.ReadDir(s.CertDir)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.CertDir, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(backup, e.Name()), b, 0o600)).To(Succeed())
	}

	pid := apiServerPID(s.CertDir)
	Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
	Eventually(func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err)
	}, timeout, "50ms").Should(BeTrue(), "kube-apiserver %d is gone", pid)
	// Stop notices the process has exited; a call racing with envtest's own reaping of it fails and is repeated.
	Eventually(s.Stop, timeout, interval).Should(Succeed())

	s.CertDir = backup
	Expect(s.Start()).To(Succeed())
}

// apiServerPID finds the process id of the kube-apiserver this suite started, by its certificate directory.
func apiServerPID(certDir string) int {
	entries, err := os.ReadDir("/proc")
	Expect(err).NotTo(HaveOccurred())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) == "kube-apiserver" && slices.Contains(args, "--cert-dir="+certDir) {
			pids = append(pids, pid)
		}
	}
	Expect(pids).To(HaveLen(1), "one kube-apiserver serves from %s", certDir)
	return pids[0]
}

// reconcileErrors is how many reconciles of the PlacementManifestWork controller have failed in this process.
func reconcileErrors() float64 {
	n, err := framework.ControllerCount("controller_runtime_reconcile_errors_total")
	Expect(err).NotTo(HaveOccurred())
	return n
}
