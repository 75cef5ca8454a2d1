// Package integration runs the PlacementManifestWork controller against a real kube-apiserver (envtest). The
// tests play OCM: they write PlacementDecisions as the placement controller would and ManifestWork status as
// the work agent would.
package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

const (
	timeout  = 20 * time.Second
	interval = 100 * time.Millisecond
)

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
	// mgr is the manager under test; its cache is what the controller reads.
	mgr      ctrl.Manager
	recorder = &framework.WriteRecorder{}
	cancel   context.CancelFunc
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork integration")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, cfg, err = framework.StartHub()
	Expect(err).NotTo(HaveOccurred())

	k8s, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	Expect(err).NotTo(HaveOccurred())

	mgr, err = ctrl.NewManager(cfg, ctrl.Options{
		Scheme:    controllers.Scheme(),
		Cache:     controllers.CacheOptions(),
		Metrics:   metricsserver.Options{BindAddress: "0"},
		NewClient: recorder.NewClient,
	})
	Expect(err).NotTo(HaveOccurred())
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	Expect(controllers.SetupWithManager(ctx, mgr, controllers.Options{MaxConcurrentReconciles: 4, MaxConcurrentWrites: 16, DecisionSettleTimeout: settleTimeout})).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// newNamespace creates a namespace with a unique name and returns it.
func newNamespace(prefix string) string {
	name := fmt.Sprintf("%s-%s", prefix, rand.String(6))
	Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// newClusters creates n cluster namespaces with unique names and returns the names.
func newClusters(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = newNamespace(fmt.Sprintf("cluster%d", i+1))
	}
	return out
}

// settleTimeout is how long the manager waits for a Placement's decisions to settle in this suite.
const settleTimeout = 3 * time.Second

// decide plays OCM's placement controller: it writes a Placement's decision, then the Placement's status.
func decide(ns, placement, decisionName string, clusters ...string) {
	Eventually(func() error {
		return framework.Decide(context.Background(), k8s, ns, placement, decisionName, clusters...)
	}, timeout, interval).Should(Succeed())
}

// worksOf lists the ManifestWorks of a PlacementManifestWork by its label, keyed by cluster.
func worksOf(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]workv1.ManifestWork {
	list := &workv1.ManifestWorkList{}
	g.Expect(k8s.List(context.Background(), list, client.MatchingLabels{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(manifestwork.Owner(pmw)),
	})).To(Succeed())
	out := map[string]workv1.ManifestWork{}
	for _, w := range list.Items {
		out[w.Namespace] = w
	}
	return out
}

// shares reads, per cluster, the integer at path in the manifest of the given kind of the PMW's works.
func shares(g Gomega, pmw *workv1alpha1.PlacementManifestWork, kind string, path ...string) map[string]int64 {
	out := map[string]int64{}
	for cluster, w := range worksOf(g, pmw) {
		for _, m := range w.Spec.Workload.Manifests {
			obj := map[string]any{}
			g.Expect(json.Unmarshal(m.Raw, &obj)).To(Succeed())
			if obj["kind"] != kind {
				continue
			}
			var v any = obj
			for _, k := range path {
				v = v.(map[string]any)[k]
			}
			out[cluster] = int64(v.(float64))
		}
	}
	return out
}

// getPMW reads a PlacementManifestWork afresh and checks that its status describes its current generation.
func getPMW(g Gomega, pmw *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
	got := &workv1alpha1.PlacementManifestWork{}
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(pmw), got)).To(Succeed())
	g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	return got
}

// condition returns a condition of a PlacementManifestWork, checking it describes the current generation.
func condition(g Gomega, pmw *workv1alpha1.PlacementManifestWork, t string) *metav1.Condition {
	got := getPMW(g, pmw)
	c := meta.FindStatusCondition(got.Status.Conditions, t)
	g.Expect(c).NotTo(BeNil(), "condition %s", t)
	g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
	return c
}

// reconciles is how many times the PlacementManifestWork controller has reconciled so far.
func reconciles() float64 {
	n, err := framework.ControllerCount("controller_runtime_reconcile_total")
	Expect(err).NotTo(HaveOccurred())
	return n
}

// gauge reads a gauge series of the manager's registry; -1 when the series does not exist.
func gauge(name string, labels map[string]string) float64 {
	v, err := framework.Gauge(name, labels)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// histogramCount is how many observations a histogram of the manager's registry has.
func histogramCount(name string) uint64 {
	n, err := framework.HistogramCount(name)
	Expect(err).NotTo(HaveOccurred())
	return n
}
