package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	dbwebhook "github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/database"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// databaseHealth judges a Database from its phase and ready instances against the cluster's share.
const databaseHealth = `has(status.phase) && status.phase == 'Failed'
  ? {'state': 'Degraded', 'reason': 'DatabaseFailed', 'message': 'the database failed'}
  : (has(status.readyInstances) && status.readyInstances >= object.spec.instances ? {'state': 'Healthy'}
  : {'state': 'Progressing', 'reason': 'InstancesStarting', 'message': 'instances are starting'})`

var _ = Describe("ResourceInterpreter", func() {
	var (
		ctx   context.Context
		ns    string
		group string
	)
	T := metav1.ConditionTrue

	// Every spec has its own kind, so interpreters of one spec never meet another's.
	interpreterFor := func(name, expression string) *workv1alpha1.ResourceInterpreter {
		return &workv1alpha1.ResourceInterpreter{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: workv1alpha1.ResourceInterpreterSpec{
				Target:   workv1alpha1.InterpreterTarget{Group: group, Kind: "Database"},
				Replicas: []string{".spec.instances"},
				StatusFeedback: []workv1alpha1.InterpreterFeedback{
					{Name: "readyInstances", JSONPath: ".status.readyInstances"},
					{Name: "phase", JSONPath: ".status.phase"},
				},
				Health: &workv1alpha1.InterpreterHealth{Expression: expression},
				Aggregation: []workv1alpha1.InterpreterAggregation{
					{Feedback: "readyInstances", Operation: workv1alpha1.AggregationSum},
					{Feedback: "phase", Operation: workv1alpha1.AggregationCount},
				},
			},
		}
	}
	database := func(instances int) map[string]any {
		return map[string]any{
			"apiVersion": group + "/v1", "kind": "Database",
			"metadata": map[string]any{"name": "orders", "namespace": "default"},
			"spec":     map[string]any{"instances": instances},
		}
	}
	// splitOrders is a PMW splitting a Database of 5 instances with no fieldPath: the interpreter says
	// .spec.instances.
	splitOrders := func() *workv1alpha1.PlacementManifestWork {
		return framework.MakePMW("orders", ns).Placement("p").Manifest(database(5)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "orders", Namespace: "default", Kind: "Database", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
	}
	ready := func(g Gomega, ri *workv1alpha1.ResourceInterpreter) *metav1.Condition {
		got := &workv1alpha1.ResourceInterpreter{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ri), got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
		return c
	}
	// report acts as one cluster's work agent: applied, and the feedback values(instances) for the Database.
	report := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, values func(instances int) map[string]any) {
		Eventually(func(g Gomega) {
			w := &workv1.ManifestWork{}
			g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
			obj := map[string]any{}
			g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
			instances := int(obj["spec"].(map[string]any)["instances"].(float64))
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
			prefixed := map[string]any{}
			for k, v := range values(instances) {
				prefixed[health.FeedbackPrefix+k] = v
			}
			framework.Feedback(w, 0, prefixed)
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("interpreter")
		group = "db-" + rand.String(6) + ".example.io"
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	It("splits a custom kind by its replicas field, asks for its feedback, judges its health and aggregates its status", func() {
		ri := interpreterFor("databases-"+rand.String(5), databaseHealth)
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		Eventually(func(g Gomega) {
			c := ready(g, ri)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInterpreterAccepted))
		}, timeout, interval).Should(Succeed())

		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := splitOrders()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			g.Expect(shares(g, pmw, "Database", "spec", "instances")).To(SatisfyAll(HaveLen(2), WithTransform(func(m map[string]int64) int64 {
				return m[clusters[0]] + m[clusters[1]]
			}, Equal(int64(5)))))
			for _, w := range fw.WorksOf(g, pmw) {
				var paths []string
				for _, c := range w.Spec.ManifestConfigs {
					for _, r := range c.FeedbackRules {
						for _, p := range r.JsonPaths {
							paths = append(paths, p.Name+"="+p.Path)
						}
					}
				}
				g.Expect(paths).To(ConsistOf(health.FeedbackPrefix+"readyInstances=.status.readyInstances", health.FeedbackPrefix+"phase=.status.phase",
					HavePrefix(health.FeedbackPrefix+health.TemplateHash+"="))) // the template marker
			}
		}, timeout, interval).Should(Succeed())

		By("one cluster runs its share, the other is still starting: progressing, judged by the interpreter")
		report(pmw, clusters[0], func(n int) map[string]any { return map[string]any{"readyInstances": n, "phase": "Ready"} })
		report(pmw, clusters[1], func(n int) map[string]any { return map[string]any{"readyInstances": n - 1, "phase": "Provisioning"} })
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Available).To(Equal(int32(1)))
			g.Expect(got.Status.PlacedManifestWorkSummary.Progressing).To(Equal(int32(1)))
			g.Expect(got.Status.UnhealthyClusters).To(ConsistOf(HaveField("Message", ContainSubstring("instances are starting"))))
		}, timeout, interval).Should(Succeed())

		By("the second cluster's database fails: degraded with the interpreter's reason, and the status aggregates")
		report(pmw, clusters[1], func(int) map[string]any { return map[string]any{"readyInstances": 0, "phase": "Failed"} })
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			s := shares(g, pmw, "Database", "spec", "instances")
			g.Expect(got.Status.PlacedManifestWorkSummary.Degraded).To(Equal(int32(1)))
			g.Expect(got.Status.UnhealthyClusters).To(ConsistOf(SatisfyAll(
				HaveField("Cluster", clusters[1]), HaveField("State", workv1alpha1.ClusterDegraded),
				HaveField("Message", ContainSubstring("the database failed")))))
			g.Expect(got.Status.Manifests).To(HaveLen(1))
			g.Expect(got.Status.Manifests[0].Aggregated).To(Equal([]workv1alpha1.AggregatedField{
				{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 2, Counts: []workv1alpha1.ValueCount{{Value: "Failed", Clusters: 1}, {Value: "Ready", Clusters: 1}}},
				{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Clusters: 2, Value: ptrTo(s[clusters[0]])},
			}))
		}, timeout, interval).Should(Succeed())
	})

	It("reports an interpreter that does not compile on its own status and leaves the PlacementManifestWorks of its kind as without one", func() {
		ri := interpreterFor("broken-"+rand.String(5), "status.readyInstances >")
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		Eventually(func(g Gomega) {
			c := ready(g, ri)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInvalidExpression))
			g.Expect(c.Message).To(ContainSubstring("spec.health.expression"))
		}, timeout, interval).Should(Succeed())

		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("orders", ns).Placement("p").Manifest(database(2)).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		// Without a usable interpreter the kind is judged as any unknown kind: applied and available.
		report(pmw, clusters[0], func(int) map[string]any { return nil })
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Available).To(Equal(int32(1)))
			for _, w := range fw.WorksOf(g, pmw) {
				g.Expect(w.Spec.ManifestConfigs).To(BeEmpty(), "no feedback is asked for by an interpreter that is not used")
			}
		}, timeout, interval).Should(Succeed())

		By("fixing the expression puts the interpreter to use: the PlacementManifestWork asks for its feedback")
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.ResourceInterpreter{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ri), cur)).To(Succeed())
			cur.Spec.Health.Expression = databaseHealth
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(ready(g, ri).Status).To(Equal(metav1.ConditionTrue))
			for _, w := range fw.WorksOf(g, pmw) {
				g.Expect(w.Spec.ManifestConfigs).To(HaveLen(1))
			}
		}, timeout, interval).Should(Succeed())
	})

	It("keeps using the last generation that compiled when a later one does not, and says so on its status", func() {
		ri := interpreterFor("databases-"+rand.String(5), databaseHealth)
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		Eventually(func(g Gomega) { g.Expect(ready(g, ri).Status).To(Equal(metav1.ConditionTrue)) }, timeout, interval).Should(Succeed())

		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := splitOrders()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		// asBefore: distributed, split by .spec.instances, and every work asks for the interpreter's feedback.
		asBefore := func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			g.Expect(shares(g, pmw, "Database", "spec", "instances")).To(HaveLen(2))
			works := fw.WorksOf(g, pmw)
			g.Expect(works).To(HaveLen(2))
			for _, w := range works {
				g.Expect(w.Spec.ManifestConfigs).To(HaveLen(1))
			}
		}
		Eventually(asBefore, timeout, interval).Should(Succeed())

		By("a typo in generation 2: refused on the interpreter's status, generation 1 still in use")
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.ResourceInterpreter{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ri), cur)).To(Succeed())
			cur.Spec.Health.Expression = "status.readyInstances >"
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			c := ready(g, ri)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInvalidExpression))
		}, timeout, interval).Should(Succeed())
		Consistently(asBefore, 3*time.Second, interval).Should(Succeed(), "the works changed with a generation that does not compile")
		Eventually(func(g Gomega) {
			g.Expect(ready(g, ri).Message).To(HavePrefix("generation 2 is refused; generation 1, the last that compiled, is still in use: spec.health.expression"))
		}, timeout, interval).Should(Succeed())
	})

	// webhookInterpreter creates a ResourceInterpreter of the test webhook's Database kind, named prefix and a
	// random suffix, that reads its feedback (and its split field .spec.replicas when split) and asks the webhook
	// at url, served with ca, for ops; and waits until it is Ready.
	webhookInterpreter := func(prefix string, split bool, url string, ca []byte, ops ...workv1alpha1.InterpreterOperation) *workv1alpha1.ResourceInterpreter {
		ri := &workv1alpha1.ResourceInterpreter{
			ObjectMeta: metav1.ObjectMeta{Name: prefix + rand.String(5)},
			Spec: workv1alpha1.ResourceInterpreterSpec{
				Target: workv1alpha1.InterpreterTarget{Group: dbwebhook.Group, Kind: dbwebhook.Kind},
				StatusFeedback: []workv1alpha1.InterpreterFeedback{
					{Name: dbwebhook.FeedbackReadyInstances, JSONPath: ".status.readyInstances"},
					{Name: dbwebhook.FeedbackPhase, JSONPath: ".status.phase"},
				},
				Webhook: &workv1alpha1.InterpreterWebhook{URL: &url, CABundle: ca, Operations: ops},
			},
		}
		if split {
			ri.Spec.Replicas = []string{".spec.replicas"}
		}
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		Eventually(func(g Gomega) { g.Expect(ready(g, ri).Status).To(Equal(metav1.ConditionTrue)) }, timeout, interval).Should(Succeed())
		return ri
	}

	It("asks a webhook served over TLS for health and the roll-up, and reports it when it stops answering", func() {
		cert := webhooktest.NewCertificate(GinkgoT(), "127.0.0.1")
		server := webhooktest.NewTLSServer(GinkgoT(), cert, dbwebhook.Handler())
		group = dbwebhook.Group
		webhookInterpreter("databases-webhook-", true, server.URL, cert.CA, workv1alpha1.OperationInterpretHealth, workv1alpha1.OperationAggregateStatus)

		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		db := map[string]any{
			"apiVersion": dbwebhook.Group + "/v1", "kind": dbwebhook.Kind,
			"metadata": map[string]any{"name": "orders", "namespace": "default"},
			"spec":     map[string]any{"replicas": 4},
		}
		pmw := framework.MakePMW("orders", ns).Placement("p").Manifest(db).
			Strategy(workv1alpha1.DistributionStrategy{Name: "orders", Namespace: "default", Kind: dbwebhook.Kind, Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())

		reportDB := func(cluster string, values func(replicas int) map[string]any) {
			Eventually(func(g Gomega) {
				w := &workv1.ManifestWork{}
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
				obj := map[string]any{}
				g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
				framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
				prefixed := map[string]any{}
				for k, v := range values(int(obj["spec"].(map[string]any)["replicas"].(float64))) {
					prefixed[health.FeedbackPrefix+k] = v
				}
				framework.Feedback(w, 0, prefixed)
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		reportDB(clusters[0], func(n int) map[string]any { return map[string]any{"readyInstances": n, "phase": dbwebhook.PhaseReady} })
		reportDB(clusters[1], func(int) map[string]any { return map[string]any{"readyInstances": 0, "phase": dbwebhook.PhaseFailed} })
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Available).To(Equal(int32(1)))
			g.Expect(got.Status.UnhealthyClusters).To(ConsistOf(SatisfyAll(HaveField("Cluster", clusters[1]),
				HaveField("State", workv1alpha1.ClusterDegraded), HaveField("Message", ContainSubstring("phase Failed")))))
			g.Expect(got.Status.Manifests[0].Aggregated).To(ContainElement(SatisfyAll(
				HaveField("Name", dbwebhook.FeedbackPhase), HaveField("Operation", workv1alpha1.AggregationCount), HaveField("Clusters", int32(2)))))
		}, timeout, interval).Should(Succeed())

		By("the webhook stops answering: under the Fail policy the cluster it judges is degraded, naming the webhook")
		server.Close()
		reportDB(clusters[0], func(n int) map[string]any {
			return map[string]any{"readyInstances": n, "phase": dbwebhook.PhaseProvisioning}
		})
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.PlacedManifestWorkSummary.Degraded).To(Equal(int32(2)))
			g.Expect(got.Status.UnhealthyClusters).To(ContainElement(SatisfyAll(HaveField("Cluster", clusters[0]),
				HaveField("Message", ContainSubstring("webhook InterpretHealth")))))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the roll-up last written and says so when the AggregateStatus webhook fails under Fail, writes nothing while it keeps failing, and asks again", func() {
		// The webhook answers health always and the roll-up unless failing is set; its refusals differ on every
		// call, as an answer with a wrong uid would.
		var failing atomic.Bool
		var refused atomic.Int32
		cert := webhooktest.NewCertificate(GinkgoT(), "127.0.0.1")
		server := webhooktest.NewTLSServer(GinkgoT(), cert, webhook.Handler(func(req webhook.Request) webhook.Response {
			if req.Operation == workv1alpha1.OperationAggregateStatus && failing.Load() {
				return webhook.Fail("the roll-up store is down (call %d)", refused.Add(1))
			}
			return dbwebhook.Answer(req)
		}))
		ri := webhookInterpreter("databases-rollup-", false, server.URL, cert.CA, workv1alpha1.OperationInterpretHealth, workv1alpha1.OperationAggregateStatus)

		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("rollup", ns).Placement("p").Manifest(map[string]any{
			"apiVersion": dbwebhook.Group + "/v1", "kind": dbwebhook.Kind,
			"metadata": map[string]any{"name": "orders", "namespace": "default"},
			"spec":     map[string]any{"replicas": 2},
		}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())
		// agent reports the Database ready with readyInstances on the cluster, and, as an agent's unrelated
		// report would, pokes the PlacementManifestWork awake with a condition of its own.
		agent := func(cluster string, readyInstances int, poke string) {
			Eventually(func(g Gomega) {
				w := &workv1.ManifestWork{}
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
				framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
				framework.Feedback(w, 0, map[string]any{health.FeedbackPrefix + dbwebhook.FeedbackReadyInstances: readyInstances,
					health.FeedbackPrefix + dbwebhook.FeedbackPhase: dbwebhook.PhaseReady})
				meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Poked", Status: T, Reason: "Poked", Message: poke})
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		readySum := func(g Gomega, got *workv1alpha1.PlacementManifestWork) *int64 {
			g.Expect(got.Status.Manifests).To(HaveLen(1))
			for _, f := range got.Status.Manifests[0].Aggregated {
				if f.Name == dbwebhook.FeedbackReadyInstances {
					return f.Value
				}
			}
			return nil
		}
		agent(clusters[0], 2, "")
		agent(clusters[1], 2, "")
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(readySum(g, got)).To(HaveValue(Equal(int64(4))))
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionStatusAggregated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())

		By("the roll-up fails: the sum last written stays, StatusAggregated says why, Ready still tells of the workloads")
		failing.Store(true)
		agent(clusters[0], 3, "")
		var resourceVersion string
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionStatusAggregated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInterpreterFailed))
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(c.Message).To(SatisfyAll(ContainSubstring(dbwebhook.Kind+"."+dbwebhook.Group+" default/orders (WebhookRejected)"),
				ContainSubstring("ResourceInterpreter "+ri.Name+": webhook AggregateStatus: interpreter webhook "+server.URL),
				ContainSubstring("the roll-up store is down")))
			g.Expect(readySum(g, got)).To(HaveValue(Equal(int64(4))), "the sum last written, not the declarative fields alone or nothing")
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
			resourceVersion = got.ResourceVersion
		}, timeout, interval).Should(Succeed())

		By("while it keeps failing, with another message every call, the reconciles it takes write no status")
		before := refused.Load()
		for i := range 3 {
			agent(clusters[1], 2, fmt.Sprint("poke ", i))
			Eventually(refused.Load, timeout, interval).Should(BeNumerically(">", before+int32(i)))
		}
		Consistently(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).ResourceVersion).To(Equal(resourceVersion))
		}, "2s", interval).Should(Succeed())

		By("it answers again: the retry brings the new sum without any other change")
		failing.Store(false)
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionStatusAggregated)).To(BeTrue())
			g.Expect(readySum(g, got)).To(HaveValue(Equal(int64(5))))
		}, 45*time.Second, interval).Should(Succeed())
	})

	// healthFailsAlike: an InterpretHealth webhook under Fail that fails on every call, with serve, in a way that
	// once gave another message every call (a uid, a local port). The PlacementManifestWork's status settles on
	// the failure, want in the clusters' messages, and the reconciles the works' reports bring ask the webhook
	// again and write nothing.
	healthFailsAlike := func(serve func(w http.ResponseWriter, r *http.Request), want string) {
		var calls atomic.Int32
		cert := webhooktest.NewCertificate(GinkgoT(), "127.0.0.1")
		server := webhooktest.NewTLSServer(GinkgoT(), cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			serve(w, r)
		}))
		server.Config.ErrorLog = log.New(GinkgoWriter, "webhook server: ", 0)
		ri := webhookInterpreter("databases-failing-health-", false, server.URL, cert.CA, workv1alpha1.OperationInterpretHealth)

		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("failing-health", ns).Placement("p").Manifest(map[string]any{
			"apiVersion": dbwebhook.Group + "/v1", "kind": dbwebhook.Kind,
			"metadata": map[string]any{"name": "orders", "namespace": "default"},
			"spec":     map[string]any{"replicas": 2},
		}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorksOf(g, pmw)).To(HaveLen(2)) }, timeout, interval).Should(Succeed())
		// agent reports the Database ready on the cluster and, as an agent's unrelated report would, pokes the
		// PlacementManifestWork awake with a condition of its own.
		agent := func(cluster string, poke string) {
			Eventually(func(g Gomega) {
				w := &workv1.ManifestWork{}
				g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
				framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T})
				framework.Feedback(w, 0, map[string]any{health.FeedbackPrefix + dbwebhook.FeedbackReadyInstances: 2,
					health.FeedbackPrefix + dbwebhook.FeedbackPhase: dbwebhook.PhaseReady})
				meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Poked", Status: T, Reason: "Poked", Message: poke})
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		agent(clusters[0], "")
		agent(clusters[1], "")

		By("the webhook fails: both clusters are degraded, naming the webhook and the failure")
		failure := "ResourceInterpreter " + ri.Name + ": webhook InterpretHealth: interpreter webhook " + server.URL + " (InterpretHealth) " + want
		var resourceVersion string
		Eventually(func(g Gomega) {
			got := fw.Current(g, pmw)
			g.Expect(got.Status.UnhealthyClusters).To(ConsistOf(
				SatisfyAll(HaveField("Cluster", clusters[0]), HaveField("State", workv1alpha1.ClusterDegraded), HaveField("Message", ContainSubstring(failure))),
				SatisfyAll(HaveField("Cluster", clusters[1]), HaveField("State", workv1alpha1.ClusterDegraded), HaveField("Message", ContainSubstring(failure)))))
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			resourceVersion = got.ResourceVersion
		}, timeout, interval).Should(Succeed())

		By("while it keeps failing, the reconciles the works' reports bring ask it again and write no status")
		for i := range 4 {
			before := calls.Load()
			agent(clusters[i%2], fmt.Sprint("poke ", i))
			Eventually(calls.Load, timeout, interval).Should(BeNumerically(">", before))
		}
		Consistently(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).ResourceVersion).To(Equal(resourceVersion))
		}, "2s", interval).Should(Succeed())
	}

	It("writes no status while an InterpretHealth webhook under Fail keeps answering for another uid", func() {
		var n atomic.Int32
		healthFailsAlike(func(w http.ResponseWriter, _ *http.Request) {
			// Another uid every time, as a webhook mixing up concurrent requests would.
			_, _ = fmt.Fprintf(w, `{"apiVersion":%q,"kind":%q,"response":{"uid":"other-%d","successful":true,"healthy":true}}`,
				webhook.APIVersion, webhook.Kind, n.Add(1))
		}, "answered garbage: response uid is not the request's")
	})

	It("writes no status while an InterpretHealth webhook under Fail keeps resetting the connection", func() {
		healthFailsAlike(func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			// A reset below TLS: the client's error names both ends, its own with a new port every call.
			tcp := conn.(*tls.Conn).NetConn().(*net.TCPConn)
			_ = tcp.SetLinger(0)
			_ = tcp.Close()
		}, "unreachable: read tcp 127.0.0.1:")
	})

	It("gives the kind to the older of two interpreters and tells the other why it is not used", func() {
		first := interpreterFor("first-"+rand.String(5), databaseHealth)
		Expect(k8s.Create(ctx, first)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, first))).To(Succeed()) })
		Eventually(func(g Gomega) { g.Expect(ready(g, first).Status).To(Equal(metav1.ConditionTrue)) }, timeout, interval).Should(Succeed())
		second := interpreterFor("second-"+rand.String(5), databaseHealth)
		Expect(k8s.Create(ctx, second)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, second))).To(Succeed()) })
		Eventually(func(g Gomega) {
			c := ready(g, second)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonTargetConflict))
			g.Expect(c.Message).To(ContainSubstring(first.Name))
			g.Expect(ready(g, first).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
	})
})

func ptrTo[T any](v T) *T { return &v }
