package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// Specs of failurePolicy Rollback (docs/rollout.md, "When a rollout fails") beyond rollback_test.go: a rollback
// that a manager restart interrupts, a failure that is a timeout (progressDeadline) rather than a degraded
// cluster, and a rollback under ProgressivePerGroup.
var _ = Describe("Rollback of a failed rollout: restart, progressDeadline and decision groups", func() {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse

	// toV2 changes the template to v2 under failurePolicy Rollback and the given rollout strategy.
	toV2 := func(f *suite.Framework, pmw *workv1alpha1.PlacementManifestWork, strategy *clusterv1alpha1.RolloutStrategy) {
		f.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.FailurePolicy = workv1alpha1.FailurePolicyRollback
			cur.Spec.RolloutStrategy = strategy
			cur.Spec.ManifestWorkTemplate = configMapTemplate2(pmw.Namespace)
		})
	}
	// rolledBack waits for the RolloutComplete condition of a rollback, and returns the status.
	rolledBack := func(g Gomega, f *suite.Framework, pmw *workv1alpha1.PlacementManifestWork, message string) *workv1alpha1.PlacementManifestWork {
		cur := f.Current(g, pmw)
		c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(F))
		g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolledBack))
		g.Expect(c.Message).To(ContainSubstring(message))
		stalled := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionStalled)
		g.Expect(stalled).NotTo(BeNil())
		g.Expect(stalled.Status).To(Equal(T))
		g.Expect(cur.Status.CompletedRevision).NotTo(BeNil())
		g.Expect(cur.Status.CompletedRevision.Revision).To(BeEquivalentTo(1))
		g.Expect(cur.Status.CurrentRevision).NotTo(BeNil())
		g.Expect(cur.Status.CurrentRevision.Revision).To(BeEquivalentTo(2), "the spec is the user's: revision 2 stays current")
		return cur
	}
	failedOn := func(cur *workv1alpha1.PlacementManifestWork, clusters ...string) *workv1alpha1.FailedRevision {
		return &workv1alpha1.FailedRevision{Revision: 2, Name: cur.Status.CurrentRevision.Name, Clusters: clusters}
	}

	It("finishes a rollback a manager restart interrupted, writing each work back once and never the failed revision again", func(ctx SpecContext) {
		// The suite's one manager serves every spec and cannot be restarted in the middle of the suite, so this
		// spec runs on a hub of its own, with its own managers, started as the suite starts its manager.
		hub := ownHub()
		ns := placedNamespace(ctx, hub, "rollback-restart")
		clusters := hub.NewClusters(4)
		hub.Decide(ns, "p", "p-decision-1", clusters...)
		writes := &workWrites{}
		a := hub.StartManager(suite.ManagerOptions{Name: "before-restart", DecisionSettleTimeout: settleTimeout, WrapClient: writes.wrap("a")})

		pmw := configMapPMW("restart", ns, "1")
		Expect(hub.Client.Create(ctx, pmw)).To(Succeed())
		hash1 := completedOn(hub, pmw, clusters, "1")
		toV2(hub, pmw, &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(1), RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)}}})

		// Revision 2 reaches the first three clusters one at a time; the first two become available, the third
		// degrades: the rollout fails with three clusters on revision 2.
		for i, c := range clusters[:3] {
			Eventually(func(g Gomega) {
				g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("2", clusters[:i+1], "1", clusters[i+1:])))
			}, timeout, interval).Should(Succeed())
			if i < 2 {
				hub.AgentReports(pmw, c, agentUp)
			} else {
				hub.AgentReports(pmw, c, agentDown)
			}
		}
		// The second cluster keeps revision 2 until the first is back and available.
		var hash2 string
		Eventually(func(g Gomega) {
			hash2 = hub.WorksByCluster(g, pmw)[clusters[1]].Annotations[workv1alpha1.AnnotationTemplateHash]
			g.Expect(hash2).NotTo(Or(BeEmpty(), Equal(hash1)))
		}, timeout, interval).Should(Succeed())

		// The rollback goes at the strategy's pace: the first cluster goes back to revision 1, and the next
		// waits until it is available again.
		var failed *workv1alpha1.FailedRevision
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", []string{clusters[0], clusters[3]}, "2", clusters[1:3])))
			cur := rolledBack(g, hub, pmw, "is being rolled back to revision 1, the last completed: 2 of 4 clusters carry it")
			g.Expect(cur.Status.FailedRevision).To(Equal(failedOn(cur, clusters[2])))
			failed = cur.Status.FailedRevision
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", []string{clusters[0], clusters[3]}, "2", clusters[1:3])))
		}, "1s", interval).Should(Succeed())
		// The failed cluster recovers on revision 2: from now on only the failure record (status.failedRevision)
		// says the rollout failed, as no cluster carrying revision 2 is failed any more.
		hub.AgentReports(pmw, clusters[2], agentUp)

		// The restart: manager A stops, manager B starts with nothing in memory.
		a.Stop()
		var reconciles atomic.Int64
		b := hub.StartManager(suite.ManagerOptions{Name: "after-restart", DecisionSettleTimeout: settleTimeout, WrapClient: writes.wrap("b"),
			WrapCache: func(r client.Reader) client.Reader { return pmwReads{Reader: r, n: &reconciles} }})
		// B reconciles and holds the pace: the first cluster, back on revision 1 but not available yet, is not
		// written again, and the next one waits.
		Eventually(reconciles.Load, timeout, interval).Should(BeNumerically(">", 0))
		Consistently(func(g Gomega) {
			g.Expect(writes.of("b")).To(BeEmpty())
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", []string{clusters[0], clusters[3]}, "2", clusters[1:3])))
			g.Expect(hub.Current(g, pmw).Status.FailedRevision).To(Equal(failed))
		}, "1s", interval).Should(Succeed())

		// Each cluster back on revision 1 becomes available, and B brings the next one back.
		for i, c := range clusters[:3] {
			hub.AgentReports(pmw, c, agentUp)
			if i < 2 {
				Eventually(func(g Gomega) {
					g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", append([]string{clusters[3]}, clusters[:i+2]...), "2", clusters[i+2:3])))
				}, timeout, interval).Should(Succeed())
			}
		}
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", clusters)))
			cur := rolledBack(g, hub, pmw, "was rolled back to revision 1, the last completed, on every cluster")
			g.Expect(cur.Status.FailedRevision).To(Equal(failed), "the failure recorded before the restart")
			g.Expect(cur.Status.Rollout).To(And(HaveField("Updated", BeEquivalentTo(4)), HaveField("Total", BeEquivalentTo(4)),
				HaveField("Succeeded", BeEquivalentTo(4)), HaveField("Failed", BeZero())), "the clusters that carry revision 1")
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(hub.Current(g, pmw).Status.FailedRevision).To(Equal(failed))
		}, "1s", interval).Should(Succeed())
		b.Stop()

		// Every work was written once per step: created with revision 1, brought to revision 2 (the first three),
		// brought back to revision 1 (the same three), by A before the restart and by B after it. B wrote
		// revision 1 only, and only to the two clusters A had not brought back.
		revision := map[string]string{hash1: "1", hash2: "2"}
		Expect(writes.byCluster(revision)).To(Equal(map[string][]string{
			clusters[0]: {"a create 1", "a update 2", "a update 1"},
			clusters[1]: {"a create 1", "a update 2", "b update 1"},
			clusters[2]: {"a create 1", "a update 2", "b update 1"},
			clusters[3]: {"a create 1"},
		}))
	}, SpecTimeout(3*timeout))

	It("keeps a failed revision back after a manager dies between the failure and the status that records it", func(ctx SpecContext) {
		hub := ownHub()
		ns := placedNamespace(ctx, hub, "rollback-crash")
		clusters := hub.NewClusters(3)
		hub.Decide(ns, "p", "p-decision-1", clusters...)
		// Manager a dies before any status that records the failure is stored: its status writes carrying
		// status.failedRevision fail.
		a := hub.StartManager(suite.ManagerOptions{Name: "dies", DecisionSettleTimeout: settleTimeout, WrapClient: func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if p, ok := obj.(*workv1alpha1.PlacementManifestWork); ok && p.Status.FailedRevision != nil {
						return fmt.Errorf("the manager died before this status write")
					}
					return c.SubResource(sub).Update(ctx, obj, opts...)
				},
			})
		}})
		pmw := configMapPMW("crash", ns, "1")
		Expect(hub.Client.Create(ctx, pmw)).To(Succeed())
		completedOn(hub, pmw, clusters, "1")
		toV2(hub, pmw, &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
			MaxConcurrency: intstr.FromInt32(1), RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)}}})
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("2", clusters[:1], "1", clusters[1:])))
		}, timeout, interval).Should(Succeed())
		hub.AgentReports(pmw, clusters[0], agentDown)
		// The failure is judged, and its record cannot be stored: nothing may hide the failure from the hub
		// meanwhile, so the failed cluster keeps the failed revision (and stays degraded) until it is.
		Consistently(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("2", clusters[:1], "1", clusters[1:])))
			g.Expect(hub.Current(g, pmw).Status.FailedRevision).To(BeNil())
		}, "2s", interval).Should(Succeed())
		a.Stop()

		// The next manager judges the same failure, records it and rolls it back, and never rolls revision 2 out again.
		hub.StartManager(suite.ManagerOptions{Name: "after", DecisionSettleTimeout: settleTimeout})
		Eventually(func(g Gomega) {
			g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", clusters)))
			g.Expect(hub.Current(g, pmw).Status.FailedRevision).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())
		hub.AgentReports(pmw, clusters[0], agentUp)
		Consistently(func(g Gomega) { g.Expect(configMapValues(g, hub, pmw)).To(Equal(carrying("1", clusters))) }, "2s", interval).Should(Succeed())
	}, SpecTimeout(3*timeout))

	Context("on the suite's manager", func() {
		var ns string
		BeforeEach(func(ctx SpecContext) {
			ns = placedNamespace(ctx, fw, "rollback-more")
		})
		// workWritesTo are the suite manager's writes to the PMW's works in the given clusters, by cluster.
		workWritesTo := func(pmw *workv1alpha1.PlacementManifestWork, clusters []string) map[string][]string {
			in := map[string]bool{}
			for _, c := range clusters {
				in[c] = true
			}
			name := manifestwork.WorkName(manifestwork.Owner(pmw))
			out := map[string][]string{}
			for _, w := range mgr.WorkWrites() {
				if in[w.Namespace] && w.Name == name {
					out[w.Namespace] = append(out[w.Namespace], w.Verb)
				}
			}
			return out
		}
		generations := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]int64 {
			out := map[string]int64{}
			for c, w := range fw.WorksByCluster(g, pmw) {
				out[c] = w.Generation
			}
			return out
		}

		It("rolls back a revision on which a cluster stays progressing past progressDeadline, no cluster degraded", func(ctx SpecContext) {
			clusters := fw.NewClusters(3)
			fw.Decide(ns, "p", "p-decision-1", clusters...)
			pmw := configMapPMW("deadline", ns, "1")
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			completedOn(fw, pmw, clusters, "1")
			var before map[string]int64
			Eventually(func(g Gomega) { before = generations(g, pmw) }, timeout, interval).Should(Succeed())

			toV2(fw, pmw, &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
				MaxConcurrency: intstr.FromInt32(1),
				RolloutConfig:  clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0), ProgressDeadline: "4s"}}})
			Eventually(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("2", clusters[:1], "1", clusters[1:])))
				g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionRolloutComplete).Reason).To(Equal(workv1alpha1.ReasonRolloutProgressing))
			}, timeout, interval).Should(Succeed())
			// The agent never reports revision 2: the first cluster is progressing, which is no failure before the
			// deadline (at least 3 s away: the manager writes the time in whole seconds).
			Consistently(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("2", clusters[:1], "1", clusters[1:])))
				g.Expect(fw.Current(g, pmw).Status.FailedRevision).To(BeNil())
			}, "1s", interval).Should(Succeed())

			// Past the deadline it counts as failed (timed out): the failure is recorded and it goes back to
			// revision 1; the other clusters never got revision 2 and are not written.
			Eventually(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
				cur := rolledBack(g, fw, pmw, "Revision 2 failed on clusters "+clusters[0])
				g.Expect(cur.Status.FailedRevision).To(Equal(failedOn(cur, clusters[0])))
			}, timeout, interval).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
				g.Expect(fw.Current(g, pmw).Status.FailedRevision).NotTo(BeNil())
			}, "1s", interval).Should(Succeed())

			after := map[string]int64{}
			Eventually(func(g Gomega) {
				works := fw.WorksByCluster(g, pmw)
				for c, w := range works {
					after[c] = w.Generation
				}
				// No agent ever reported on the first cluster after revision 1: it never was degraded.
				for _, cond := range works[clusters[0]].Status.Conditions {
					g.Expect(cond.ObservedGeneration).To(Equal(before[clusters[0]]), "condition %s", cond.Type)
					g.Expect(cond.Status).To(Equal(T), "condition %s", cond.Type)
				}
			}, timeout, interval).Should(Succeed())
			Expect(after).To(Equal(map[string]int64{clusters[0]: before[clusters[0]] + 2, clusters[1]: before[clusters[1]], clusters[2]: before[clusters[2]]}))
			Expect(workWritesTo(pmw, clusters)).To(Equal(map[string][]string{
				clusters[0]: {"create", "update", "update"}, clusters[1]: {"create"}, clusters[2]: {"create"},
			}))
		})

		It("rolls back under ProgressivePerGroup the group that got the failed revision, and no later group ever gets it", func(ctx SpecContext) {
			clusters := fw.NewClusters(4)
			// The first group holds the last clusters by name, so the order is the groups', not the names'.
			canary, rest := clusters[2:], clusters[:2]
			decideGroups(ctx, ns, "p", []decisionGroup{{"canary", canary}, {"rest", rest}})
			pmw := configMapPMW("groups", ns, "1")
			Expect(k8s.Create(ctx, pmw)).To(Succeed())
			completedOn(fw, pmw, clusters, "1")

			toV2(fw, pmw, &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup,
				ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{RolloutConfig: clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(0)}}})
			Eventually(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("2", canary, "1", rest)))
				cur := fw.Current(g, pmw)
				g.Expect(cur.Status.Rollout).NotTo(BeNil())
				g.Expect(cur.Status.Rollout.CurrentGroup).To(Equal("canary"))
			}, timeout, interval).Should(Succeed())
			fw.AgentReports(pmw, canary[0], agentUp)
			fw.AgentReports(pmw, canary[1], agentDown)

			// The group goes back to revision 1 at once (the strategy's pace is a group); the other group keeps it.
			Eventually(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
				cur := rolledBack(g, fw, pmw, "Revision 2 failed on clusters "+canary[1])
				g.Expect(cur.Status.FailedRevision).To(Equal(failedOn(cur, canary[1])))
				g.Expect(cur.Status.Rollout).To(HaveField("Updated", BeEquivalentTo(4)))
			}, timeout, interval).Should(Succeed())
			// Available again on revision 1, the first group does not let the rollout go on to the next group.
			fw.AgentReports(pmw, canary[0], agentUp)
			fw.AgentReports(pmw, canary[1], agentUp)
			Consistently(func(g Gomega) {
				g.Expect(configMapValues(g, fw, pmw)).To(Equal(carrying("1", clusters)))
				cur := fw.Current(g, pmw)
				g.Expect(cur.Status.FailedRevision).To(Equal(failedOn(cur, canary[1])))
			}, "1s", interval).Should(Succeed())
			// Each work of the first group was written once for revision 2 and once to come back; the works of the
			// other group were only created.
			Expect(workWritesTo(pmw, clusters)).To(Equal(map[string][]string{
				canary[0]: {"create", "update", "update"}, canary[1]: {"create", "update", "update"},
				rest[0]: {"create"}, rest[1]: {"create"},
			}))
		})
	})
})

// ownHub starts a hub (kube-apiserver and etcd with the hub's CRDs) for one spec, which stops with it after the
// managers the spec starts on it.
func ownHub() *suite.Framework {
	env, cfg, err := framework.StartHub()
	Expect(err).NotTo(HaveOccurred())
	f := &suite.Framework{Timeout: timeout, Interval: interval, Env: env, Config: cfg}
	DeferCleanup(f.Teardown)
	f.Client, err = client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return f
}

// decisionGroup is a decision group of a Placement: its name and clusters.
type decisionGroup struct {
	name     string
	clusters []string
}

// decideGroups plays OCM's placement controller deciding a Placement with decision groups
// (spec.decisionStrategy.groupStrategy): one PlacementDecision per group, labelled with the group's index and
// name, then the Placement's status.
func decideGroups(ctx context.Context, ns, placement string, groups []decisionGroup) {
	var p *clusterv1beta1.Placement
	for i, group := range groups {
		name := fmt.Sprintf("%s-decision-%d", placement, i+1)
		Eventually(func(g Gomega) {
			var err error
			p, err = framework.WriteDecision(ctx, k8s, ns, placement, name, group.clusters...)
			g.Expect(err).NotTo(HaveOccurred())
			d := &clusterv1beta1.PlacementDecision{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			d.Labels[clusterv1beta1.DecisionGroupIndexLabel] = strconv.Itoa(i)
			d.Labels[clusterv1beta1.DecisionGroupNameLabel] = group.name
			g.Expect(k8s.Update(ctx, d)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	Expect(p).NotTo(BeNil())
	Eventually(func() error { return framework.Placed(ctx, k8s, p) }, timeout, interval).Should(Succeed())
}

// workWrites records the ManifestWork writes that managers' clients sent and the API server accepted, with the
// template hash each carried.
type workWrites struct {
	mu     sync.Mutex
	writes []workWrite
}

type workWrite struct {
	manager, verb, cluster, templateHash string
}

// wrap is a ManagerOptions.WrapClient that records the manager's accepted ManifestWork creates and updates.
func (r *workWrites) wrap(manager string) func(client.WithWatch) client.WithWatch {
	record := func(verb string, obj client.Object, err error) error {
		if w, ok := obj.(*workv1.ManifestWork); ok && err == nil {
			r.mu.Lock()
			r.writes = append(r.writes, workWrite{manager: manager, verb: verb, cluster: w.Namespace, templateHash: w.Annotations[workv1alpha1.AnnotationTemplateHash]})
			r.mu.Unlock()
		}
		return err
	}
	return func(c client.WithWatch) client.WithWatch {
		return interceptor.NewClient(c, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return record("create", obj, c.Create(ctx, obj, opts...))
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				return record("update", obj, c.Update(ctx, obj, opts...))
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				return record("patch", obj, c.Patch(ctx, obj, patch, opts...))
			},
		})
	}
}

// of are the writes of one manager.
func (r *workWrites) of(manager string) []workWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []workWrite
	for _, w := range r.writes {
		if w.manager == manager {
			out = append(out, w)
		}
	}
	return out
}

// byCluster are the writes by cluster, in order, each as "<manager> <verb> <revision>", the revision named by
// its template hash.
func (r *workWrites) byCluster(revision map[string]string) map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for _, w := range r.writes {
		rev, ok := revision[w.templateHash]
		if !ok {
			rev = "hash " + w.templateHash
		}
		out[w.cluster] = append(out[w.cluster], w.manager+" "+w.verb+" "+rev)
	}
	return out
}

// pmwReads counts the PlacementManifestWorks a manager's client reads from its cache: each reconcile starts with
// one.
type pmwReads struct {
	client.Reader
	n *atomic.Int64
}

func (r pmwReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*workv1alpha1.PlacementManifestWork); ok {
		r.n.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
