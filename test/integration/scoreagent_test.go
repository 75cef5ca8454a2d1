package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// scoreAddon is the addon the agents of these specs serve, and the generators name.
const scoreAddon = "latency"

// The reference score agent (internal/scoreagent, cmd/score-agent) runs in this process against the envtest
// API server, which is both its hub and its managed cluster, allowed to probe loopback (127.0.0.1/32) and
// nothing else beyond public addresses. Loopback servers answer after injected delays.
var _ = Describe("Score agent", func() {
	var (
		ctx context.Context
		c   client.Client
		// fast and slow answer after 20 ms and 200 ms; fastHits counts fast's requests.
		fast, slow *httptest.Server
		fastHits   *atomic.Int64
	)

	BeforeEach(func() {
		ctx = context.Background()
		var err error
		c, err = client.New(fw.Config, client.Options{Scheme: scoreagent.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		fast, fastHits = delayedServer(20 * time.Millisecond)
		slow, _ = delayedServer(200 * time.Millisecond)
	})

	generator := func(name, cluster string, latencies ...scoresv1alpha1.LatencyProbe) *scoresv1alpha1.AddOnPlacementScoreGenerator {
		return &scoresv1alpha1.AddOnPlacementScoreGenerator{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
			Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				AddOnPlacementSelector: scoresv1alpha1.AddOnSelector{Name: scoreAddon, Namespace: cluster},
				Latencies:              latencies,
				ValidFor:               &metav1.Duration{Duration: 30 * time.Second},
				Interval:               &metav1.Duration{Duration: 10 * time.Second},
			},
		}
	}
	current := func(g Gomega, gen *scoresv1alpha1.AddOnPlacementScoreGenerator) *scoresv1alpha1.AddOnPlacementScoreGenerator {
		got := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), got)).To(Succeed())
		return got
	}
	condition := func(gen *scoresv1alpha1.AddOnPlacementScoreGenerator, typ string) metav1.Condition {
		cond := meta.FindStatusCondition(gen.Status.Conditions, typ)
		if cond == nil {
			return metav1.Condition{}
		}
		return *cond
	}
	noScore := func(gen *scoresv1alpha1.AddOnPlacementScoreGenerator) {
		Consistently(func() error {
			return c.Get(ctx, client.ObjectKeyFromObject(gen), &clusterv1alpha1.AddOnPlacementScore{})
		}, 2*time.Second, interval).Should(Satisfy(apierrors.IsNotFound), "no AddOnPlacementScore %s is written", gen.Name)
	}

	It("writes an AddOnPlacementScore that ranks the faster URL higher, valid for validFor, and says so on the generator", func() {
		cluster := fw.NewClusters(1)[0]
		nodes := headroomNodes(ctx)
		start := time.Now().Truncate(time.Second)
		startAgent(ctx, cluster, nil)

		gen := generator("latency-gen", cluster,
			scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL + "/healthz", Runs: ptr.To[int32](2)},
			scoresv1alpha1.LatencyProbe{Name: "slow", URL: slow.URL + "/healthz"},
		)
		gen.Spec.OtherPlugin = []scoresv1alpha1.PluginScore{{Name: "cpu-free", Plugin: "node-headroom", Options: map[string]string{"resource": "cpu", "full": "8"}}}
		Expect(c.Create(ctx, gen)).To(Succeed())
		// A generator for another addon in the same namespace is not this agent's.
		other := generator("other-addon", cluster, scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL})
		other.Spec.AddOnPlacementSelector.Name = "another-addon"
		Expect(c.Create(ctx, other)).To(Succeed())

		var got *scoresv1alpha1.AddOnPlacementScoreGenerator
		Eventually(func(g Gomega) {
			got = current(g, gen)
			g.Expect(condition(got, scoresv1alpha1.ConditionValid)).To(And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", scoresv1alpha1.ReasonAccepted), HaveField("ObservedGeneration", got.Generation)))
			g.Expect(condition(got, scoresv1alpha1.ConditionMeasured)).To(And(
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", scoresv1alpha1.ReasonMeasured)))
		}, timeout, interval).Should(Succeed())
		Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		Expect(got.Status.LastMeasuredTime).NotTo(BeNil())
		Expect(got.Status.LastMeasuredTime.Time).To(And(BeTemporally(">=", start), BeTemporally("<=", time.Now())))
		Expect(fastHits.Load()).To(BeNumerically(">=", 2), "runs: 2 fetches the fast URL twice")

		// status.scores: the raw latencies are at least the injected delays, and each value is latency.Score of
		// its raw milliseconds (to the rounding of the raw text): the faster URL scores higher.
		byName := map[string]scoresv1alpha1.MeasuredScore{}
		for _, s := range got.Status.Scores {
			byName[s.Name] = s
		}
		Expect(byName).To(HaveLen(3))
		fastMs, slowMs := millis(byName["fast"].Raw), millis(byName["slow"].Raw)
		Expect(fastMs).To(And(BeNumerically(">=", 20), BeNumerically("<", 200)), "fast: %s", byName["fast"].Raw)
		Expect(slowMs).To(And(BeNumerically(">=", 200), BeNumerically("<", 2000)), "slow: %s", byName["slow"].Raw)
		Expect(byName["fast"].Value).To(BeNumerically("~", latency.Score(fastMs, latency.DefaultHalfMillis), 1))
		Expect(byName["slow"].Value).To(BeNumerically("~", latency.Score(slowMs, latency.DefaultHalfMillis), 1))
		Expect(byName["fast"].Value).To(BeNumerically("<=", latency.Score(20, latency.DefaultHalfMillis)))
		Expect(byName["slow"].Value).To(BeNumerically("<=", latency.Score(200, latency.DefaultHalfMillis)))
		Expect(byName["fast"].Value).To(BeNumerically(">", byName["slow"].Value))
		// node-headroom: two Ready 4-core nodes, one pod requesting 1 core: 7 of full 8 free.
		Expect(byName["cpu-free"]).To(And(HaveField("Value", int32(75)), HaveField("Raw", "7 cores free")), "nodes %v: %+v", nodes, byName["cpu-free"])

		// The AddOnPlacementScore: the same values, owned by the generator, valid until lastMeasured + validFor.
		score := &clusterv1alpha1.AddOnPlacementScore{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), score)).To(Succeed())
		Expect(score.Status.Scores).To(ConsistOf(
			clusterv1alpha1.AddOnPlacementScoreItem{Name: "fast", Value: byName["fast"].Value},
			clusterv1alpha1.AddOnPlacementScoreItem{Name: "slow", Value: byName["slow"].Value},
			clusterv1alpha1.AddOnPlacementScoreItem{Name: "cpu-free", Value: 75},
		))
		Expect(score.Status.ValidUntil).NotTo(BeNil())
		Expect(score.Status.ValidUntil.Time).To(BeTemporally("==", got.Status.LastMeasuredTime.Add(30*time.Second)))
		Expect(meta.FindStatusCondition(score.Status.Conditions, scoresv1alpha1.AddOnPlacementScoreConditionUpdated)).To(PointTo(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", scoresv1alpha1.ReasonAddOnPlacementScoreUpdated))))
		Expect(metav1.IsControlledBy(score, got)).To(BeTrue(), "owned by its generator, so it goes with it")

		// At rest, before the interval: nothing is measured or written again.
		hits := fastHits.Load()
		Consistently(func(g Gomega) {
			g.Expect(current(g, gen).ResourceVersion).To(Equal(got.ResourceVersion))
			again := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), again)).To(Succeed())
			g.Expect(again.ResourceVersion).To(Equal(score.ResourceVersion))
		}, 2*time.Second, interval).Should(Succeed())
		Expect(fastHits.Load()).To(Equal(hits), "no probe at rest")

		// The other addon's generator: no status, no score.
		Expect(current(Default, other).Status).To(Equal(scoresv1alpha1.AddOnPlacementScoreGeneratorStatus{}))
		noScore(other)

		// A deleted AddOnPlacementScore is written again from the last measurement, without probing.
		Expect(c.Delete(ctx, score)).To(Succeed())
		Eventually(func(g Gomega) {
			again := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(score.UID))
			g.Expect(again.Status.ValidUntil).NotTo(BeNil())
			g.Expect(again.Status.ValidUntil.Time).To(BeTemporally("==", score.Status.ValidUntil.Time))
			g.Expect(again.Status.Scores).To(Equal(score.Status.Scores))
		}, timeout, interval).Should(Succeed())
		Expect(fastHits.Load()).To(Equal(hits), "the score is written again without probing")
	})

	It("refuses a generator that asks for a refused URL or an unknown plugin, saying why, probes nothing and writes no score", func() {
		cluster := fw.NewClusters(1)[0]
		startAgent(ctx, cluster, nil)

		// A loopback URL the agent may probe beside the cloud metadata address it may not: neither is probed.
		metadata := generator("metadata", cluster,
			scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL},
			scoresv1alpha1.LatencyProbe{Name: "metadata", URL: "http://169.254.169.254/latest/meta-data"},
		)
		Expect(c.Create(ctx, metadata)).To(Succeed())
		unknown := generator("unknown-plugin", cluster)
		unknown.Spec.OtherPlugin = []scoresv1alpha1.PluginScore{{Name: "gpu-free", Plugin: "gpu"}}
		Expect(c.Create(ctx, unknown)).To(Succeed())

		Eventually(func(g Gomega) {
			got := current(g, metadata)
			g.Expect(condition(got, scoresv1alpha1.ConditionValid)).To(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", scoresv1alpha1.ReasonProbeRefused),
				HaveField("Message", ContainSubstring(`score "metadata": url http://169.254.169.254/latest/meta-data: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32`)),
			))
			g.Expect(condition(got, scoresv1alpha1.ConditionMeasured)).To(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", scoresv1alpha1.ReasonNotValid)))
			g.Expect(got.Status.LastMeasuredTime).To(BeNil())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			got := current(g, unknown)
			g.Expect(condition(got, scoresv1alpha1.ConditionValid)).To(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", scoresv1alpha1.ReasonInvalidPlugin),
				HaveField("Message", ContainSubstring(`score "gpu-free": plugin "gpu" is not known to this agent (it knows latency, node-headroom)`)),
			))
		}, timeout, interval).Should(Succeed())
		noScore(metadata)
		noScore(unknown)
		Expect(fastHits.Load()).To(BeZero(), "an invalid generator's allowed URLs are not probed either")

		// The refusal is an event on the generator too.
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(c.List(ctx, list, client.InNamespace(cluster))).To(Succeed())
			var reasons []string
			for _, e := range list.Items {
				if e.Regarding.Name == metadata.Name && e.Type == corev1.EventTypeWarning {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement(scoresv1alpha1.ReasonProbeRefused))
		}, timeout, interval).Should(Succeed())

		// Without the refused URL the generator is measured.
		Eventually(func() error {
			got := current(Default, metadata)
			got.Spec.Latencies = got.Spec.Latencies[:1]
			return c.Update(ctx, got)
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			got := current(g, metadata)
			g.Expect(condition(got, scoresv1alpha1.ConditionValid).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(got, scoresv1alpha1.ConditionMeasured).Status).To(Equal(metav1.ConditionTrue))
			score := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(metadata), score)).To(Succeed())
			g.Expect(score.Status.Scores).To(ConsistOf(HaveField("Name", "fast")))
		}, timeout, interval).Should(Succeed())
		Expect(fastHits.Load()).To(BeNumerically(">=", 1))
	})

	It("leaves out a score it could not measure, writes the others, and says which", func() {
		cluster := fw.NewClusters(1)[0]
		startAgent(ctx, cluster, nil)
		// Allowed when validated (loopback), refused when probed: it redirects to the metadata address.
		redirect := httptest.NewServer(http.RedirectHandler("http://169.254.169.254/latest/meta-data", http.StatusFound))
		DeferCleanup(redirect.Close)

		gen := generator("partly", cluster,
			scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL},
			scoresv1alpha1.LatencyProbe{Name: "redirected", URL: redirect.URL},
		)
		Expect(c.Create(ctx, gen)).To(Succeed())
		Eventually(func(g Gomega) {
			got := current(g, gen)
			g.Expect(condition(got, scoresv1alpha1.ConditionValid).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(got, scoresv1alpha1.ConditionMeasured)).To(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", scoresv1alpha1.ReasonMeasureFailed),
				HaveField("Message", And(
					ContainSubstring(`score "redirected": run 1 of 1: redirect to http://169.254.169.254/latest/meta-data: refused`),
					ContainSubstring("it is left out of the AddOnPlacementScore, the other scores were written"))),
			))
			g.Expect(got.Status.Scores).To(ConsistOf(HaveField("Name", "fast")))
			score := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), score)).To(Succeed())
			g.Expect(score.Status.Scores).To(ConsistOf(HaveField("Name", "fast")))
		}, timeout, interval).Should(Succeed())
	})

	It("does not write over an AddOnPlacementScore of the same name that is not its generator's", func() {
		cluster := fw.NewClusters(1)[0]
		foreign := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: cluster}}
		Expect(c.Create(ctx, foreign)).To(Succeed())
		startAgent(ctx, cluster, nil)

		gen := generator("taken", cluster, scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL})
		Expect(c.Create(ctx, gen)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(current(g, gen), scoresv1alpha1.ConditionMeasured)).To(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", scoresv1alpha1.ReasonMeasureFailed),
				HaveField("Message", ContainSubstring("exists and is not this generator's")),
			))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			got := &clusterv1alpha1.AddOnPlacementScore{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(foreign), got)).To(Succeed())
			g.Expect(got.ResourceVersion).To(Equal(foreign.ResourceVersion))
		}, 2*time.Second, interval).Should(Succeed())
	})

	It("lets the score of a stopped agent expire, after which the PlacementManifestWork's Score split ignores it", func() {
		// validFor is 30 s at the least. The agent's clock runs validFor - 8 s behind, so the score it writes
		// expires 8 s from now instead of 30: what is under test is that nothing refreshes it once the agent
		// stops, and that the placement side then counts the cluster as having no score.
		const margin = 8 * time.Second
		validFor := 30 * time.Second
		clusters := fw.NewClusters(2)
		measured, other := clusters[0], clusters[1]
		stop := startAgent(ctx, measured, func() time.Time { return time.Now().Add(-(validFor - margin)) })

		gen := generator("latency-gen", measured, scoresv1alpha1.LatencyProbe{Name: "fast", URL: fast.URL})
		Expect(c.Create(ctx, gen)).To(Succeed())
		// The other cluster's score for the same name, valid for an hour, as another agent would write it.
		otherScore := &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: gen.Name, Namespace: other}}
		Expect(c.Create(ctx, otherScore)).To(Succeed())
		otherScore.Status.Scores = []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "fast", Value: 30}}
		otherScore.Status.ValidUntil = &metav1.Time{Time: time.Now().Add(time.Hour)}
		Expect(c.Status().Update(ctx, otherScore)).To(Succeed())

		score := &clusterv1alpha1.AddOnPlacementScore{}
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), score)).To(Succeed())
			g.Expect(score.Status.ValidUntil).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())
		Expect(score.Status.ValidUntil.Time).To(BeTemporally("~", time.Now().Add(margin), 2*time.Second))
		Expect(score.Status.Scores).To(ConsistOf(HaveField("Value", BeNumerically(">", 0))))

		// While it is valid, the split gives the measured cluster a share.
		ns := fw.NewNamespace("scoreagent")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		split := workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore, Score: &workv1alpha1.ScoreSource{ResourceName: gen.Name, ScoreName: "fast"}}
		pmw := framework.MakePMW("scored", ns).Placement("p").Manifest(framework.Deployment("web", "default", 10)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit, Split: &split}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			got := shares(g, pmw, "Deployment", "spec", "replicas")
			g.Expect(got).To(HaveKeyWithValue(measured, BeNumerically(">", 0)))
			g.Expect(got[measured] + got[other]).To(BeEquivalentTo(10))
		}, margin/2, interval).Should(Succeed(), "the share follows the agent's score while it is valid")

		stop()
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(map[string]int64{measured: 0, other: 10}))
		}, margin+timeout, interval).Should(Succeed(), "an expired score weighs 0, as a missing one")
		after := &clusterv1alpha1.AddOnPlacementScore{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), after)).To(Succeed())
		Expect(after.ResourceVersion).To(Equal(score.ResourceVersion), "the stopped agent refreshed nothing")
		Expect(after.Status.ValidUntil.Time).To(BeTemporally("<=", time.Now()), "its validUntil has passed")
	})
})

// startAgent runs a score agent for cluster and scoreAddon in this process, allowed to probe loopback, on the
// clock now (time.Now when nil). It reaches the hub with credentials as OCM's addon registration gives them
// (scopedHub: nothing beyond the cluster's namespace) and the same API server as its managed cluster. It
// returns a stop that waits until the agent has stopped; the spec's cleanup calls it too.
func startAgent(ctx context.Context, cluster string, now func() time.Time) (stop func()) {
	allow, err := guard.ParseAllowlist("127.0.0.1/32")
	Expect(err).NotTo(HaveOccurred())
	mgr, err := scoreagent.NewManager(scoreagent.Options{
		Hub: scopedHub(ctx, cluster), Spoke: fw.Client, ClusterName: cluster, AddonName: scoreAddon,
		Guard: guard.Config{Allow: allow},
		Now:   now,
		Manager: ctrl.Options{
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Logger:                 logf.Log.WithName("score-agent").WithValues("cluster", cluster),
			// Each spec runs an agent of its own, each with the controller of the same name.
			Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		},
	})
	Expect(err).NotTo(HaveOccurred())
	stop = fw.Run(mgr, "the score agent of "+cluster)
	DeferCleanup(stop)
	return stop
}

// scopedHub is a hub user as OCM's addon registration makes one for scoreAddon's agent on cluster, with the
// permissions the addon's hub ClusterRole grants bound in the cluster's namespace only.
func scopedHub(ctx context.Context, cluster string) *rest.Config {
	group := fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", cluster, scoreAddon)
	user, err := fw.Env.AddUser(envtest.User{Name: group + ":agent:" + rand.String(5), Groups: []string{group}}, nil)
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "score-agent", Namespace: cluster}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{scoresv1alpha1.GroupVersion.Group}, Resources: []string{"addonplacementscoregenerators"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{scoresv1alpha1.GroupVersion.Group}, Resources: []string{"addonplacementscoregenerators/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{scoresv1alpha1.GroupVersion.Group}, Resources: []string{"addonplacementscores"}, Verbs: []string{"get", "list", "watch", "create"}},
		{APIGroups: []string{scoresv1alpha1.GroupVersion.Group}, Resources: []string{"addonplacementscores/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{eventsv1.GroupName}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}
	Expect(k8s.Create(ctx, role)).To(Succeed())
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "score-agent", Namespace: cluster},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}}}
	Expect(k8s.Create(ctx, binding)).To(Succeed())
	return user.Config()
}

// delayedServer is a loopback HTTP server that answers every request after delay, counting them; it closes
// when the spec ends.
func delayedServer(delay time.Duration) (*httptest.Server, *atomic.Int64) {
	hits := &atomic.Int64{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		time.Sleep(delay)
		w.WriteHeader(http.StatusNoContent)
	}))
	DeferCleanup(s.Close)
	return s, hits
}

// headroomNodes creates two Ready nodes of 4 cores and a pod requesting 1 core on the first, and deletes them
// when the spec ends. The API server has no other nodes: the headroom plugin sees 7 of 8 cores free.
func headroomNodes(ctx context.Context) []string {
	prefix := "headroom-" + rand.String(5)
	var names []string
	for i := range 2 {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}}
		Expect(k8s.Create(ctx, node)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, node))).To(Succeed()) })
		// The API server taints a new node not-ready (TaintNodesByCondition); the node controller, which
		// envtest does not run, lifts the taint once the node is Ready.
		node.Spec.Taints = nil
		Expect(k8s.Update(ctx, node)).To(Succeed())
		node.Status = corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}
		Expect(k8s.Status().Update(ctx, node)).To(Succeed())
		names = append(names, node.Name)
	}
	ns := fw.NewNamespace("headroom")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: names[0], Containers: []corev1.Container{{Name: "c", Image: "busy",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
	}
	Expect(k8s.Create(ctx, pod)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, pod))).To(Succeed()) })
	return names
}

// millis reads a latency's raw text, such as 84ms or 9.5ms.
func millis(raw string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSuffix(raw, "ms"), 64)
	Expect(err).NotTo(HaveOccurred(), "raw %q", raw)
	return v
}
