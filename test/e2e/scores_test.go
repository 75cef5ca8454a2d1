//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// Placement by measured latency (issue #21), with nothing played: each spoke's score agent (cmd/score-agent,
// run by the stack with a hub kubeconfig, as the work agents run: OCM's registration and addon manager do not
// run here, so the agent is not deployed through its AddOnTemplate) probes a loopback server of this process
// whose answers are delayed per cluster, and writes the AddOnPlacementScore; OCM's real placement controller
// ranks the clusters by it (an AddOn prioritizer in Exact mode) and decides the two fastest; the manager's
// Score split reads the same AddOnPlacementScore and gives the fastest the most replicas, which the work agents
// roll out on the spokes. Then the delays rotate, the slowest becoming the fastest, and the decisions and the
// shares follow.
//
// What governs the timing:
//   - The agents measure every spec.interval (10s here, the least the API allows), so a changed delay shows in
//     the AddOnPlacementScore within about 10s plus the probe itself.
//   - OCM's placement controller (v1.2.0) watches AddOnPlacementScores: every add, update or delete enqueues
//     the Placements whose prioritizerPolicy names that resourceName, in the namespaces bound to the cluster's
//     sets (pkg/placement/controllers/scheduling: enqueuePlacementScore, index placementsByScore). No resync
//     is involved (its informers resync every 10 minutes). Its stability rule is the Steady prioritizer, which
//     gives the clusters already decided a bonus; prioritizerPolicy mode Exact with only the AddOn
//     prioritizer leaves Steady (and Balance) out, so the decisions follow the scores at once; ties go by
//     cluster name.
//   - The manager watches AddOnPlacementScores too (a field index from resourceName to the PMWs whose Score
//     splits read it) and divides again on every change. The split has no hysteresis: its stability rule
//     only breaks ties in favour of the shares delivered before (pkg/split, rule 2), so the shares are a
//     function of the scores of the decided clusters.
//
// The delays are far apart (10, 60 and 300 ms, halfMillis 100: scores about 82, 25 and -50), and the initial
// fastest two are cluster2 and cluster3, not the cluster1 and cluster2 that the placement controller decides
// by name while no cluster has a score: a decision that ignored the scores fails.
var _ = Describe("Placement and Score split by measured latency", Ordered, func() {
	const (
		// total replicas: with weights about 82 and 25 the Score split gives 3 / 1 (Webster keeps 3 / 1 for
		// any ratio from 5/3 to 7), against Balance's 2 / 2.
		total     = 4
		image     = "registry.example/latency:v1"
		app       = "near"
		scoreName = "loopback"
		// halfMillis is the latency that scores 0.
		halfMillis = 100
		// interval is how often the agents measure: the API's minimum.
		interval = 10 * time.Second
		// slack is how much slower than its injected delay a probe may measure (loopback HTTP on a machine
		// shared with the stack's 25 processes); the three delays' score ranges stay apart with it.
		slack = 25 * time.Millisecond
	)
	var (
		ns string
		// resource names the generators, hence the AddOnPlacementScores, and the Placement: unique per run.
		resource string
		server   *latencyServer
		pmw      *workv1alpha1.PlacementManifestWork
		// before are the delays the spec starts with, after the rotated ones: the slowest becomes the fastest.
		before, after map[string]time.Duration
	)

	// scoresFollow asserts that every cluster's AddOnPlacementScore holds the score of its current delay (the
	// mapping round(100 - 200*ms/(ms+halfMillis)), measured at most slack slower) and is valid.
	scoresFollow := func(ctx context.Context, g Gomega, delays map[string]time.Duration) map[string]int32 {
		got := map[string]int32{}
		for _, c := range clusters {
			s := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: c, Name: resource}, s)).To(Succeed(), "the AddOnPlacementScore of %s", c)
			g.Expect(s.Status.ValidUntil).NotTo(BeNil(), "validUntil of the AddOnPlacementScore of %s", c)
			g.Expect(s.Status.ValidUntil.Time).To(BeTemporally(">", time.Now()), "validUntil of the AddOnPlacementScore of %s", c)
			g.Expect(s.Status.Scores).To(ContainElement(HaveField("Name", scoreName)), "scores of the AddOnPlacementScore of %s", c)
			for _, item := range s.Status.Scores {
				if item.Name == scoreName {
					got[c] = item.Value
				}
			}
			d := delays[c]
			g.Expect(got[c]).To(BeNumerically("<=", latency.Score(latency.Millis(d), halfMillis)), "score of %s, probed at %s", c, d)
			g.Expect(got[c]).To(BeNumerically(">=", latency.Score(latency.Millis(d+slack), halfMillis)), "score of %s, probed at %s", c, d)
		}
		return got
	}

	// rolledOut asserts the outcome for the given delays: OCM decided the two fastest clusters; their
	// Deployments are rolled out with every pod Ready, the fastest holding more replicas than the second and
	// both together the total; the slowest holds nothing. It returns the shares.
	rolledOut := func(ctx context.Context, g Gomega, delays map[string]time.Duration) map[string]int32 {
		ranked := byDelay(delays)
		fastest, second, slowest := ranked[0], ranked[1], ranked[2]
		var decided []string
		for _, d := range placementDecisions(ctx, g, ns, resource) {
			for _, c := range d.Status.Decisions {
				decided = append(decided, c.ClusterName)
			}
		}
		g.Expect(decided).To(ConsistOf(fastest, second), "the clusters OCM's placement controller decided")

		shares := map[string]int32{}
		for _, c := range []string{fastest, second} {
			d := spokeDeployment(ctx, g, c, ns, app)
			g.Expect(d.Spec.Replicas).NotTo(BeNil())
			shares[c] = *d.Spec.Replicas
			expectRolledOut(g, c, d, shares[c], image)
			g.Expect(readyPods(ctx, g, c, ns, app)).To(Equal(shares[c]), "ready pods on %s", c)
		}
		g.Expect(shares[fastest]+shares[second]).To(Equal(int32(total)), "replicas on %s and %s", fastest, second)
		g.Expect(shares[fastest]).To(BeNumerically(">", shares[second]), "replicas of the fastest, %s, against the second, %s", fastest, second)
		expectGone(ctx, g, slowest, ns, app, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app}})
		return shares
	}

	// hubReports asserts the PlacementManifestWork's status: both decided clusters available and the split
	// placed in full with the given shares.
	hubReports := func(ctx context.Context, g Gomega, shares map[string]int32) {
		got := getPMW(ctx, g, pmw)
		expectAllAvailable(g, got, 2)
		g.Expect(got.Status.Splits).To(HaveLen(1), "status.splits")
		sp := got.Status.Splits[0]
		g.Expect([]int32{sp.Total, sp.Placed, sp.Unplaced}).To(Equal([]int32{total, total, 0}), "total/placed/unplaced of status.splits[0]")
		var want []workv1alpha1.ShareCount
		for _, s := range shares {
			want = append(want, workv1alpha1.ShareCount{Share: s, Clusters: 1})
		}
		g.Expect(sp.Shares).To(ConsistOf(want), "status.splits[0].shares")
		expectFeedback(g, manifestSummary(g, got, "Deployment", app), "readyReplicas", total, 2)
	}

	// convergesOn waits until the spokes are rolledOut for the given delays, then until the hub reports their
	// shares, recording each phase's time since start.
	convergesOn := func(ctx context.Context, delays map[string]time.Duration, start time.Time) {
		var shares map[string]int32
		Eventually(func(g Gomega) {
			shares = rolledOut(ctx, g, delays)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)
		GinkgoWriter.Printf("replicas %v for delays %v\n", shares, delays)

		Eventually(func(g Gomega) {
			hubReports(ctx, g, shares)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	}

	BeforeAll(func(ctx SpecContext) {
		Expect(clusters).To(HaveLen(3))
		// cluster1 starts slowest, so the decision by name alone (cluster1, cluster2) is not the right one.
		before = map[string]time.Duration{clusters[0]: 300 * time.Millisecond, clusters[1]: 60 * time.Millisecond, clusters[2]: 10 * time.Millisecond}
		after = map[string]time.Duration{clusters[0]: 10 * time.Millisecond, clusters[1]: 300 * time.Millisecond, clusters[2]: 60 * time.Millisecond}
		ns = newNamespace(ctx, "scores")
		resource = "latency-" + strings.TrimPrefix(ns, "scores-")
		server = newLatencyServer(before)
		DeferCleanup(server.Close)
	})

	// Everything the spec created, whatever step failed: the PlacementManifestWork (and its workloads), the
	// Placement, and per cluster the generator and the AddOnPlacementScore its agent wrote.
	AfterAll(func(ctx SpecContext) {
		if pmw != nil {
			deletePMW(ctx, pmw)
		}
		Expect(client.IgnoreNotFound(hub.Delete(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: resource, Namespace: ns}}))).To(Succeed())
		for _, c := range clusters {
			Expect(client.IgnoreNotFound(hub.Delete(ctx, &scoresv1alpha1.AddOnPlacementScoreGenerator{ObjectMeta: metav1.ObjectMeta{Name: resource, Namespace: c}}))).To(Succeed())
		}
		// An agent may write the score once more while it learns that the generator is gone.
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				s := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: resource, Namespace: c}}
				g.Expect(client.IgnoreNotFound(hub.Delete(ctx, s))).To(Succeed())
				err := hub.Get(ctx, client.ObjectKeyFromObject(s), s)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the AddOnPlacementScore of %s is still there (%v)", c, err)
				err = hub.Get(ctx, client.ObjectKey{Namespace: c, Name: resource}, &scoresv1alpha1.AddOnPlacementScoreGenerator{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the generator of %s is still there (%v)", c, err)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("measures each spoke's latency into its AddOnPlacementScore", func(ctx SpecContext) {
		start := time.Now()
		for _, c := range clusters {
			Expect(hub.Create(ctx, generator(resource, c, scoreName, server.url(c), halfMillis, interval))).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for _, c := range clusters {
				gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: c, Name: resource}, gen)).To(Succeed())
				for _, t := range []string{scoresv1alpha1.ConditionValid, scoresv1alpha1.ConditionMeasured} {
					cond := meta.FindStatusCondition(gen.Status.Conditions, t)
					g.Expect(cond).NotTo(BeNil(), "the %s condition of the generator of %s", t, c)
					g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%s of the generator of %s: %s", t, c, cond.Message)
				}
			}
			scores := scoresFollow(ctx, g, before)
			GinkgoWriter.Printf("scores %v for delays %v\n", scores, before)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("decides the two fastest clusters and gives the fastest the most replicas", func(ctx SpecContext) {
		start := time.Now()
		Expect(hub.Create(ctx, fastestPlacement(resource, ns, scoreName))).To(Succeed())
		pmw = framework.MakePMW(app, ns).Placement(resource).
			Manifest(deployment(app, ns, total, image)).
			Strategy(workv1alpha1.DistributionStrategy{
				Name: app, Namespace: ns, Group: "apps", Kind: "Deployment", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore,
					Score: &workv1alpha1.ScoreSource{ResourceName: resource, ScoreName: scoreName}},
			}).Obj()
		Expect(hub.Create(ctx, pmw)).To(Succeed())

		convergesOn(ctx, before, start)
	})

	It("moves the decision and the replicas when the slowest cluster becomes the fastest", func(ctx SpecContext) {
		start := time.Now()
		server.set(after)

		Eventually(func(g Gomega) {
			scoresFollow(ctx, g, after)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		GinkgoWriter.Printf("the agents measured the new delays %s after the change\n", time.Since(start).Round(time.Millisecond))

		convergesOn(ctx, after, start)
	})
})

// generator asks the score agent of cluster to probe url every interval and to write the score scoreName to
// the AddOnPlacementScore name in the cluster's namespace.
func generator(name, cluster, scoreName, url string, halfMillis int32, interval time.Duration) *scoresv1alpha1.AddOnPlacementScoreGenerator {
	return &scoresv1alpha1.AddOnPlacementScoreGenerator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
			AddOnPlacementSelector: scoresv1alpha1.AddOnSelector{Name: stack.ScoreAddOn},
			Latencies: []scoresv1alpha1.LatencyProbe{{
				Name: scoreName, URL: url,
				// The mean of two runs evens out a scheduling hiccup.
				Runs:    ptr.To[int32](2),
				Timeout: &metav1.Duration{Duration: 2 * time.Second},
				Scale:   &scoresv1alpha1.LatencyScale{HalfMillis: halfMillis},
			}},
			Interval: &metav1.Duration{Duration: interval},
		},
	}
}

// fastestPlacement decides the two clusters of the e2e set with the highest score scoreName of the
// AddOnPlacementScore resource, and by nothing else: mode Exact leaves out the default Balance and Steady
// prioritizers (Steady would hold the clusters already decided).
func fastestPlacement(name, namespace, scoreName string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1beta1.PlacementSpec{
			ClusterSets:      []string{stack.ClusterSet},
			NumberOfClusters: ptr.To[int32](2),
			PrioritizerPolicy: clusterv1beta1.PrioritizerPolicy{
				Mode: clusterv1beta1.PrioritizerPolicyModeExact,
				Configurations: []clusterv1beta1.PrioritizerConfig{{
					ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
						Type:  clusterv1beta1.ScoreCoordinateTypeAddOn,
						AddOn: &clusterv1beta1.AddOnScore{ResourceName: name, ScoreName: scoreName},
					},
					Weight: 1,
				}},
			},
		},
	}
}

// byDelay orders the clusters from the fastest to the slowest.
func byDelay(delays map[string]time.Duration) []string {
	out := make([]string, 0, len(delays))
	for c := range delays {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return delays[out[i]] < delays[out[j]] })
	return out
}

// latencyServer answers GET /<cluster> on 127.0.0.1 after that cluster's injected delay.
type latencyServer struct {
	*httptest.Server
	mu     sync.Mutex
	delays map[string]time.Duration
}

func newLatencyServer(delays map[string]time.Duration) *latencyServer {
	l := &latencyServer{}
	l.set(delays)
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		d, ok := l.delays[strings.TrimPrefix(r.URL.Path, "/")]
		l.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			w.WriteHeader(http.StatusNoContent)
		case <-r.Context().Done():
		}
	}))
	return l
}

// set replaces the delays.
func (l *latencyServer) set(delays map[string]time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.delays = delays
}

// url is what the generator of cluster probes.
func (l *latencyServer) url(cluster string) string { return l.URL + "/" + cluster }
