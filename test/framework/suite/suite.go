// Package suite is the one harness of the envtest suites (test/integration, test/faults, test/policies): a
// Framework that starts the hub, gives a client, starts and stops PlacementManifestWork managers in this
// process, and plays OCM's placement controller and work agent with the suite's named timeouts.
//
// It is apart from package framework because it asserts with Ginkgo and Gomega: Ginkgo registers its flags
// on the command line when imported, and package framework is also built into the sandbox and the benchmark.
package suite

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// Framework is an envtest hub and the managers a suite runs against it. A suite sets the timeouts, calls Init
// in BeforeSuite and Teardown in AfterSuite.
type Framework struct {
	// Timeout bounds every wait of the framework's own (a write retried on conflicts, a manager's stop); the
	// suite's specs use the same value for theirs.
	Timeout time.Duration
	// Interval is how often those waits poll.
	Interval time.Duration

	// Env is the hub: a kube-apiserver and etcd with the hub's CRDs installed.
	Env *envtest.Environment
	// Config reaches the hub as its administrator (system:masters).
	Config *rest.Config
	// Client is the administrator's client, reading from the API server (no cache).
	Client client.Client

	mu sync.Mutex
	// running are the managers started and not yet stopped; Teardown stops any a failed spec left behind.
	running map[*Manager]bool
}

// Init logs to the GinkgoWriter, starts the hub and makes the administrator's client.
func (f *Framework) Init() {
	logf.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	var err error
	f.Env, f.Config, err = framework.StartHub()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	f.Client, err = client.New(f.Config, client.Options{Scheme: controllers.Scheme()})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
}

// Teardown stops the managers still running, then the hub. envtest's kube-apiserver and etcd outlive the test
// process when it is killed: a suite always calls Teardown, even when Init failed half-way.
func (f *Framework) Teardown() {
	f.mu.Lock()
	left := make([]*Manager, 0, len(f.running))
	for m := range f.running {
		left = append(left, m)
	}
	f.mu.Unlock()
	for _, m := range left {
		m.Stop()
	}
	if f.Env != nil {
		gomega.Expect(f.Env.Stop()).To(gomega.Succeed())
	}
}

// NewNamespace creates a namespace with a unique name and returns it.
func (f *Framework) NewNamespace(prefix string) string {
	return f.NewNamespaceWithLabels(prefix, nil)
}

// NewNamespaceWithLabels creates a namespace with a unique name and the given labels, and returns it.
func (f *Framework) NewNamespaceWithLabels(prefix string, labels map[string]string) string {
	name := fmt.Sprintf("%s-%s", prefix, rand.String(6))
	gomega.Expect(f.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})).To(gomega.Succeed())
	return name
}

// NewClusters creates n cluster namespaces with unique names, 32 at a time, and returns the names sorted: the
// order in which the manager serves clusters is the order of their names.
func (f *Framework) NewClusters(n int) []string {
	prefix := "c" + rand.String(5)
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	errs := parallel.Run(context.Background(), len(out), 32, func(i int) error {
		return f.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: out[i]}})
	})
	gomega.Expect(errors.Join(errs...)).NotTo(gomega.HaveOccurred())
	return out
}

// Decide plays OCM's placement controller: it writes a Placement's decision, then the Placement's status
// (framework.Decide), retrying until both are written.
func (f *Framework) Decide(namespace, placement, decisionName string, clusters ...string) {
	gomega.Eventually(func() error {
		return framework.Decide(context.Background(), f.Client, namespace, placement, decisionName, clusters...)
	}, f.Timeout, f.Interval).Should(gomega.Succeed())
}

// WorksOf lists the ManifestWorks carrying a PlacementManifestWork's owner label, from the API server.
func (f *Framework) WorksOf(g gomega.Gomega, pmw *workv1alpha1.PlacementManifestWork) []workv1.ManifestWork {
	list := &workv1.ManifestWorkList{}
	g.Expect(f.Client.List(context.Background(), list, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	})).To(gomega.Succeed())
	return list.Items
}

// WorksByCluster is WorksOf keyed by cluster (the work's namespace); it fails on two works in one cluster.
func (f *Framework) WorksByCluster(g gomega.Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]workv1.ManifestWork {
	works := f.WorksOf(g, pmw)
	out := make(map[string]workv1.ManifestWork, len(works))
	for _, w := range works {
		_, dup := out[w.Namespace]
		g.Expect(dup).To(gomega.BeFalse(), "two works in cluster %s", w.Namespace)
		out[w.Namespace] = w
	}
	return out
}

// WorkClusters are the clusters that hold a work of the PlacementManifestWork, sorted.
func (f *Framework) WorkClusters(g gomega.Gomega, pmw *workv1alpha1.PlacementManifestWork) []string {
	works := f.WorksByCluster(g, pmw)
	out := make([]string, 0, len(works))
	for c := range works {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Current reads a PlacementManifestWork afresh and expects its status to describe its current generation.
func (f *Framework) Current(g gomega.Gomega, pmw *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
	got := &workv1alpha1.PlacementManifestWork{}
	g.Expect(f.Client.Get(context.Background(), client.ObjectKeyFromObject(pmw), got)).To(gomega.Succeed())
	g.Expect(got.Status.ObservedGeneration).To(gomega.Equal(got.Generation), "status describes the current generation")
	return got
}

// Condition returns a condition of a PlacementManifestWork's current status (Current), and expects it to
// describe the current generation too.
func (f *Framework) Condition(g gomega.Gomega, pmw *workv1alpha1.PlacementManifestWork, t string) *metav1.Condition {
	got := f.Current(g, pmw)
	c := meta.FindStatusCondition(got.Status.Conditions, t)
	g.Expect(c).NotTo(gomega.BeNil(), "condition %s", t)
	g.Expect(c.ObservedGeneration).To(gomega.Equal(got.Generation))
	return c
}

// AgentReports plays a cluster's work agent: it sets conditions on the cluster's work for its current
// generation (framework.WorkConditions).
func (f *Framework) AgentReports(pmw *workv1alpha1.PlacementManifestWork, cluster string, conds map[string]metav1.ConditionStatus) {
	ctx := context.Background()
	gomega.Eventually(func(g gomega.Gomega) {
		w := &workv1.ManifestWork{}
		g.Expect(f.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(gomega.Succeed())
		framework.WorkConditions(w, conds)
		g.Expect(f.Client.Status().Update(ctx, w)).To(gomega.Succeed())
	}, f.Timeout, f.Interval).Should(gomega.Succeed())
}

// UpdatePMW applies change to the current PlacementManifestWork, retrying on conflicts.
func (f *Framework) UpdatePMW(pmw *workv1alpha1.PlacementManifestWork, change func(*workv1alpha1.PlacementManifestWork)) {
	gomega.Eventually(func(g gomega.Gomega) {
		cur := &workv1alpha1.PlacementManifestWork{}
		g.Expect(f.Client.Get(context.Background(), client.ObjectKeyFromObject(pmw), cur)).To(gomega.Succeed())
		change(cur)
		g.Expect(f.Client.Update(context.Background(), cur)).To(gomega.Succeed())
	}, f.Timeout, f.Interval).Should(gomega.Succeed())
}

// DeletePMW deletes a PlacementManifestWork and waits, at most within, until a running manager has removed
// its works and released it.
func (f *Framework) DeletePMW(pmw *workv1alpha1.PlacementManifestWork, within time.Duration) {
	gomega.Expect(client.IgnoreNotFound(f.Client.Delete(context.Background(), pmw))).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		err := f.Client.Get(context.Background(), client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the PlacementManifestWork is gone")
		g.Expect(f.WorksOf(g, pmw)).To(gomega.BeEmpty())
	}, within, f.Interval).Should(gomega.Succeed())
}
