package integration

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Rollout, failover and moves", func() {
	var (
		ctx context.Context
		ns  string
	)
	T, F := metav1.ConditionTrue, metav1.ConditionFalse

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("rollout")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	work := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		return w
	}

	hasWork := func(pmw *workv1alpha1.PlacementManifestWork, cluster string) bool {
		err := k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, &workv1.ManifestWork{})
		return err == nil
	}

	configValue := func(g Gomega, w *workv1.ManifestWork) string {
		obj := map[string]any{}
		g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		data, _ := obj["data"].(map[string]any)
		v, _ := data["v"].(string)
		return v
	}

	// available reports a cluster's work applied and available for its current generation, as the agent does.
	available := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, applied metav1.ConditionStatus) {
		Eventually(func(g Gomega) {
			w := work(g, pmw, cluster)
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: applied, workv1.WorkAvailable: applied})
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	// replicasOf reads the replicas of the Deployment, the PMW's first manifest, in a cluster's work.
	replicasOf := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) int64 {
		obj := map[string]any{}
		g.Expect(json.Unmarshal(work(g, pmw, cluster).Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		return int64(obj["spec"].(map[string]any)["replicas"].(float64))
	}

	// reportDeployment plays a cluster's agent: the Deployment, the PMW's first manifest, ready at the work's
	// share, or the work degraded with no replica ready.
	reportDeployment := func(pmw *workv1alpha1.PlacementManifestWork, cluster string, ready bool) {
		Eventually(func(g Gomega) {
			w := work(g, pmw, cluster)
			share := int(replicasOf(g, pmw, cluster))
			r, degraded := share, F
			if !ready {
				r, degraded = 0, T
			}
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T, workv1.WorkDegraded: degraded})
			deploymentFeedback(w, share, r)
			g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	setTemplateValue := func(pmw *workv1alpha1.PlacementManifestWork, v string) {
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	// progressive creates PMW name of one ConfigMap (v "1") over n new decided clusters, rolled out one cluster
	// at a time.
	progressive := func(name string, n int) (*workv1alpha1.PlacementManifestWork, []string) {
		clusters := fw.NewClusters(n)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW(name, ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
			Type:        clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)},
		}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		return pmw, clusters
	}

	It("rolls a template change out one cluster at a time with Progressive maxConcurrency 1", func() {
		pmw, clusters := progressive("progressive", 3)

		// Clusters joining are governed too: one at a time, each when the previous one is available.
		for i, c := range clusters {
			Eventually(func(g Gomega) { g.Expect(hasWork(pmw, c)).To(BeTrue()) }, timeout, interval).Should(Succeed())
			for _, later := range clusters[i+1:] {
				Expect(hasWork(pmw, later)).To(BeFalse(), "%s got its work before %s was available", later, c)
			}
			available(pmw, c, T)
		}
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete)).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
		}, timeout, interval).Should(Succeed())

		setTemplateValue(pmw, "2")
		for i, c := range clusters {
			Eventually(func(g Gomega) { g.Expect(configValue(g, work(g, pmw, c))).To(Equal("2")) }, timeout, interval).Should(Succeed())
			Consistently(func(g Gomega) {
				for _, later := range clusters[i+1:] {
					g.Expect(configValue(g, work(g, pmw, later))).To(Equal("1"), "%s updated before %s was available", later, c)
				}
			}, "500ms", interval).Should(Succeed())
			Eventually(func(g Gomega) {
				cur := fw.Current(g, pmw)
				g.Expect(cur.Status.Rollout).NotTo(BeNil())
				g.Expect(cur.Status.Rollout.Updated).To(BeEquivalentTo(i + 1))
				c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete)
				if i+1 < len(clusters) {
					g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolloutProgressing))
					// The clusters held on the earlier template are neither applied nor available, so neither
					// ManifestworkApplied nor Ready can be True (the Orphan recipes wait for it).
					applied := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionManifestworkApplied)
					g.Expect(applied.Status).To(Equal(metav1.ConditionFalse))
					g.Expect(cur.Status.PlacedManifestWorkSummary.Applied).To(BeNumerically("<=", i+1))
					g.Expect(cur.Status.PlacedManifestWorkSummary.Available).To(BeNumerically("<=", i))
					g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, workv1alpha1.ConditionReady)).To(BeFalse())
					g.Expect(cur.Status.UnhealthyClusters).To(ContainElement(HaveField("Reason", workv1alpha1.ReasonOutdatedTemplate)))
				}
			}, timeout, interval).Should(Succeed())
			available(pmw, c, T)
		}
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout.Succeeded).To(BeEquivalentTo(3))
			g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
	})

	// OCM's agent keeps WorkAvailable's lastTransitionTime while the condition stays True across a template
	// update, so the soak (minSuccessTime) of an update is counted from when the new template arrived.
	It("soaks a template update for minSuccessTime on a cluster available long before it", func() {
		pmw, clusters := progressive("soak", 2)
		for _, c := range clusters {
			Eventually(func(g Gomega) { g.Expect(hasWork(pmw, c)).To(BeTrue()) }, timeout, interval).Should(Succeed())
			available(pmw, c, T)
		}
		// The works have been available for an hour, as the agent reports it.
		for _, c := range clusters {
			Eventually(func(g Gomega) {
				w := work(g, pmw, c)
				meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable).LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour))
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(fw.Current(g, pmw).Status.Conditions, workv1alpha1.ConditionRolloutComplete)).To(BeTrue())
		}, timeout, interval).Should(Succeed())

		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			cur.Spec.RolloutStrategy.Progressive.MinSuccessTime = metav1.Duration{Duration: 5 * time.Minute}
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) { g.Expect(configValue(g, work(g, pmw, clusters[0]))).To(Equal("2")) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[0], T) // Available stays True: its lastTransitionTime stays an hour ago
		Eventually(func(g Gomega) {
			w := work(g, pmw, clusters[0])
			c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
			g.Expect(c.ObservedGeneration).To(Equal(w.Generation))
			g.Expect(c.LastTransitionTime.Time).To(BeTemporally("<", time.Now().Add(-50*time.Minute)))
			g.Expect(fw.Current(g, pmw).Status.Rollout.Succeeded).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(configValue(g, work(g, pmw, clusters[1]))).To(Equal("1"), "%s updated before %s soaked for minSuccessTime", clusters[1], clusters[0])
		}, "2s", interval).Should(Succeed())
	})

	It("stops a progressive rollout on a failure beyond maxFailures and says so", func() {
		pmw, clusters := progressive("stop", 3)
		Eventually(func(g Gomega) { g.Expect(hasWork(pmw, clusters[0])).To(BeTrue()) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[0], F) // the first cluster fails to apply

		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonRolloutMaxFailures))
			g.Expect(cur.Status.Rollout.Failed).To(BeEquivalentTo(1))
			// Only the user can unblock it: kstatus Failed, so GitOps tools stop waiting.
			stalled := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(workv1alpha1.ReasonRolloutMaxFailures))
		}, timeout, interval).Should(Succeed())
		Consistently(func() bool { return hasWork(pmw, clusters[1]) || hasWork(pmw, clusters[2]) }, "1s", interval).Should(BeFalse())
	})

	// OCM's agent reads feedback in a controller of its own that may run before the apply: it then reports the
	// Deployment as it was, all replicas updated and available, with Available for the work's new generation.
	// The template marker tells that report from one of the new template's.
	It("does not move a progressive rollout on with the agent's report of the object from before the apply", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		deployment := func(image string) map[string]any {
			d := framework.Deployment("web", "default", 2)
			d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = image
			return d
		}
		pmw := framework.MakePMW("stale", ns).Placement("p").Manifest(deployment("web:1")).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
			Type:        clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)},
		}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		hashOf := func(g Gomega, cluster string) string {
			return work(g, pmw, cluster).Annotations[workv1alpha1.AnnotationTemplateHash]
		}
		// report plays the agent: applied and available for the work's generation, the Deployment's 2 replicas
		// updated and available, read from an object that carries the given template marker.
		report := func(cluster string, marker func(w *workv1.ManifestWork) string) {
			Eventually(func(g Gomega) {
				w := work(g, pmw, cluster)
				framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T, workv1.WorkDegraded: F})
				deploymentFeedback(w, 2, 2)
				mc := &w.Status.ResourceStatus.Manifests[0]
				m := marker(w)
				mc.StatusFeedbacks.Values = append(mc.StatusFeedbacks.Values, workv1.FeedbackValue{Name: health.FeedbackPrefix + health.TemplateHash,
					Value: workv1.FieldValue{Type: workv1.String, String: &m}})
				g.Expect(k8s.Status().Update(ctx, w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
		itsOwn := func(w *workv1.ManifestWork) string { return w.Annotations[workv1alpha1.AnnotationTemplateHash] }
		for _, c := range clusters {
			Eventually(func(g Gomega) { g.Expect(hasWork(pmw, c)).To(BeTrue()) }, timeout, interval).Should(Succeed())
			report(c, itsOwn)
		}
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(fw.Current(g, pmw).Status.Conditions, workv1alpha1.ConditionRolloutComplete)).To(BeTrue())
		}, timeout, interval).Should(Succeed())

		// The work stamps the marker on the Deployment and asks the agent for it back.
		w := &workv1.ManifestWork{}
		Eventually(func(g Gomega) { w = work(g, pmw, clusters[0]) }, timeout, interval).Should(Succeed())
		obj := map[string]any{}
		Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
		Expect(obj["metadata"]).To(HaveKeyWithValue("annotations", HaveKeyWithValue(workv1alpha1.AnnotationTemplateHash, itsOwn(w))))
		Expect(w.Spec.ManifestConfigs).To(ContainElement(HaveField("FeedbackRules", ContainElement(HaveField("JsonPaths",
			ContainElement(HaveField("Name", health.FeedbackPrefix+health.TemplateHash)))))))
		oldHash := itsOwn(w)

		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = framework.MakePMW("x", ns).Manifest(deployment("web:2")).Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		var first, second string
		Eventually(func(g Gomega) {
			updated := 0
			for i, c := range clusters {
				if hashOf(g, c) != oldHash {
					updated++
					first, second = c, clusters[1-i]
				}
			}
			g.Expect(updated).To(Equal(1))
		}, timeout, interval).Should(Succeed())

		// The agent reports the new generation with what it read before applying it: the old marker.
		report(first, func(*workv1.ManifestWork) string { return oldHash })
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout).NotTo(BeNil())
			g.Expect(cur.Status.Rollout.Updated).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Rollout.Succeeded).To(BeEquivalentTo(0))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(hashOf(g, second)).To(Equal(oldHash), "%s was updated on a report of %s read before the apply", second, first)
		}, "2s", interval).Should(Succeed())

		// Its next read describes the new Deployment: the rollout moves on.
		report(first, itsOwn)
		Eventually(func(g Gomega) { g.Expect(hashOf(g, second)).NotTo(Equal(oldHash)) }, timeout, interval).Should(Succeed())
	})

	It("moves a degraded cluster's share after the grace period and gives it back after recovery", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("failover", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 4)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		pmw.Spec.Failover = &workv1alpha1.FailoverPolicy{
			GracePeriod:    &metav1.Duration{Duration: 2 * time.Second},
			RecoveryPeriod: &metav1.Duration{Duration: 2 * time.Second},
		}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		replicas := func(g Gomega, cluster string) int64 { return replicasOf(g, pmw, cluster) }
		report := func(cluster string, ready bool) { reportDeployment(pmw, cluster, ready) }
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, clusters[0]) + replicas(g, clusters[1])).To(BeEquivalentTo(4))
		}, timeout, interval).Should(Succeed())
		report(clusters[0], true)
		report(clusters[1], true)
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Available).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())

		// clusters[1] degrades: after the grace period clusters[0] carries all 4, and clusters[1] keeps its 2.
		report(clusters[1], false)
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, clusters[0])).To(BeEquivalentTo(4))
			g.Expect(replicas(g, clusters[1])).To(BeEquivalentTo(2))
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.FailedOverClusters).To(BeEquivalentTo(1))
			g.Expect(cur.Status.Splits[0].FailedOver).To(BeEquivalentTo(2))
		}, 3*timeout, interval).Should(Succeed())

		// It recovers: after the recovery period the shares are 2/2 again.
		report(clusters[0], true)
		report(clusters[1], true)
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, clusters[0])).To(BeEquivalentTo(2))
			g.Expect(replicas(g, clusters[1])).To(BeEquivalentTo(2))
			g.Expect(fw.Current(g, pmw).Status.FailedOverClusters).To(BeZero())
		}, 3*timeout, interval).Should(Succeed())
	})

	It("fails a cluster over under a progressive rollout, even one held on an earlier template or stopped by maxFailures", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		deployment := func(image string) *workv1alpha1.PlacementManifestWork {
			d := framework.Deployment("web", "default", 4)
			d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = image
			return framework.MakePMW("failover-rollout", ns).Placement("p").Manifest(d).
				Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
					Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		}
		pmw := deployment("app:1")
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
		pmw.Spec.Failover = &workv1alpha1.FailoverPolicy{GracePeriod: &metav1.Duration{Duration: 2 * time.Second},
			RecoveryPeriod: &metav1.Duration{Duration: time.Hour}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		replicas := func(g Gomega, cluster string) int64 { return replicasOf(g, pmw, cluster) }
		report := func(cluster string, ready bool) { reportDeployment(pmw, cluster, ready) }
		for _, c := range clusters {
			Eventually(func(g Gomega) { g.Expect(hasWork(pmw, c)).To(BeTrue()) }, timeout, interval).Should(Succeed())
			report(c, true)
		}
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(fw.Current(g, pmw).Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
		}, timeout, interval).Should(Succeed())

		// A new image: the rollout takes one cluster, which never becomes available, so the other is held on
		// the earlier template.
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = deployment("app:2").Spec.ManifestWorkTemplate.Workload.Manifests
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		var updated, held string
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Rollout).NotTo(BeNil())
			g.Expect(cur.Status.Rollout.Updated).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			a, b := work(g, pmw, clusters[0]), work(g, pmw, clusters[1])
			g.Expect([]int64{a.Generation, b.Generation}).To(ConsistOf(int64(1), int64(2)), "one cluster updated, one held")
			updated, held = clusters[0], clusters[1]
			if a.Generation == 1 {
				updated, held = clusters[1], clusters[0]
			}
		}, timeout, interval).Should(Succeed())

		// The held cluster degrades: its failover clock runs although its work is not rewritten, and once the
		// grace period passes its share moves to the updated cluster, which the rollout does not hold back.
		report(held, false)
		Eventually(func(g Gomega) {
			g.Expect(replicas(g, updated)).To(BeEquivalentTo(4))
			g.Expect(replicas(g, held)).To(BeEquivalentTo(2), "the held cluster keeps its work as it was")
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.FailedOverClusters).To(BeEquivalentTo(1))
			g.Expect(cur.Status.FailedOver).To(ConsistOf(HaveField("Cluster", held)))
			g.Expect(cur.Status.Splits).To(HaveLen(1))
			g.Expect(cur.Status.Splits[0].Placed).To(BeEquivalentTo(4), "what the updated cluster was delivered")
			g.Expect(cur.Status.Splits[0].FailedOver).To(BeEquivalentTo(2), "what the held cluster still carries")
		}, 3*timeout, interval).Should(Succeed())
	})

	It("keeps every condition at the current generation when the template becomes invalid", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("invalid", ns).Placement("p").Manifest(framework.Deployment("web", "default", 4)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			g.Expect(cur.Status.Splits).To(HaveLen(1))
			g.Expect(cur.Status.Rollout).NotTo(BeNil())
		}, timeout, interval).Should(Succeed())

		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			cur.Spec.ManifestWorkTemplate.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := fw.Current(g, pmw)
			for _, c := range cur.Status.Conditions {
				g.Expect(c.ObservedGeneration).To(Equal(cur.Generation), "condition %s", c.Type)
			}
			g.Expect(meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionRolloutComplete).Status).To(Equal(metav1.ConditionUnknown))
			g.Expect(cur.Status.Rollout).To(BeNil(), "no rollout of an invalid template")
			g.Expect(cur.Status.Splits).To(BeEmpty(), "no split of an invalid template")
		}, timeout, interval).Should(Succeed())
	})

	It("keeps a leaving cluster's work until the joining cluster is available (make before break)", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters[0])
		pmw := framework.MakePMW("move", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(hasWork(pmw, clusters[0])).To(BeTrue()) }, timeout, interval).Should(Succeed())
		available(pmw, clusters[0], T)

		leavingWork := manifestwork.WorkName(manifestwork.Owner(pmw))
		writesToLeaving := func() []framework.Write {
			return mgr.Recorder.Writes(func(w framework.Write) bool {
				return w.Kind == "ManifestWork" && w.Namespace == clusters[0] && w.Name == leavingWork
			})
		}
		before := len(writesToLeaving())
		fw.Decide(ns, "p", "p-decision-1", clusters[1]) // the workload moves from clusters[0] to clusters[1]
		Eventually(func(g Gomega) {
			g.Expect(hasWork(pmw, clusters[1])).To(BeTrue())
			g.Expect(fw.Current(g, pmw).Status.LeavingClusters).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Consistently(func() bool { return hasWork(pmw, clusters[0]) }, "1s", interval).Should(BeTrue())

		available(pmw, clusters[1], T)
		Eventually(func(g Gomega) {
			g.Expect(hasWork(pmw, clusters[0])).To(BeFalse())
			g.Expect(fw.Current(g, pmw).Status.LeavingClusters).To(BeZero())
		}, timeout, interval).Should(Succeed())
		// Keeping the leaving work costs no write to it: its one write is the delete.
		Expect(writesToLeaving()[before:]).To(ConsistOf(framework.Write{Verb: "delete", Kind: "ManifestWork", Namespace: clusters[0], Name: leavingWork}))
	})

	It("removes a leaving cluster's work once the move timeout passes", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters[0])
		pmw := framework.MakePMW("timeout", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", nil)).Obj()
		pmw.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveMakeBeforeBreak, Timeout: &metav1.Duration{Duration: 2 * time.Second}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(hasWork(pmw, clusters[0])).To(BeTrue()) }, timeout, interval).Should(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[1]) // clusters[1] never becomes available
		Eventually(func(g Gomega) { g.Expect(hasWork(pmw, clusters[1])).To(BeTrue()) }, timeout, interval).Should(Succeed())
		Eventually(func() bool { return hasWork(pmw, clusters[0]) }, timeout, interval).Should(BeFalse())
	})
})
