// Package integration runs the PlacementManifestWork controller against a real kube-apiserver (envtest). The
// tests play OCM: they write PlacementDecisions as the placement controller would and ManifestWork status as
// the work agent would.
package integration

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

const (
	timeout  = 20 * time.Second
	interval = 100 * time.Millisecond
	// settleTimeout is how long the manager waits for a Placement's decisions to settle in this suite.
	settleTimeout = 3 * time.Second
)

var (
	fw  = &suite.Framework{Timeout: timeout, Interval: interval}
	k8s client.Client
	// mgr is the one manager of the suite; its cache is what the controller reads, its recorder holds its writes.
	mgr *suite.Manager
)

func TestIntegration(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork integration")
}

var _ = BeforeSuite(func() {
	fw.Init()
	k8s = fw.Client
	mgr = fw.StartManager(suite.ManagerOptions{DecisionSettleTimeout: settleTimeout})
})

var _ = AfterSuite(func() {
	fw.Teardown()
})

// shares reads, per cluster, the integer at path in the manifest of the given kind of the PMW's works.
func shares(g Gomega, pmw *workv1alpha1.PlacementManifestWork, kind string, path ...string) map[string]int64 {
	out := map[string]int64{}
	for cluster, w := range fw.WorksByCluster(g, pmw) {
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
