package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	internalfleet "github.com/open-cluster-management-io/placement-manifestwork/internal/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// The transparent mode (issue #22) with two API servers: the suite's hub, where the suite's manager runs the
// PlacementManifestWork controller, and a fleet API server started here (no workload controllers: a Deployment
// there is a template). The fleet controller runs in a manager of its own against both; the tests play the
// placement controller and the work agents on the hub, and kubectl on the fleet API server.
var _ = Describe("Transparent mode (fleet API server)", Ordered, func() {
	ctx := context.Background()
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	var (
		fleetClient client.Client
		ns          string
		clusters    []string
		pmw         *workv1alpha1.PlacementManifestWork
	)

	BeforeAll(func() {
		env, fleetCfg, err := framework.StartHub()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
		fleetClient, err = client.New(fleetCfg, client.Options{Scheme: scheme.Scheme})
		Expect(err).NotTo(HaveOccurred())
		startFleetManager(ctx, fleetCfg)
	})

	deployment := func(name string, replicas int32) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(replicas),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
		}
	}

	// deploymentShares are the replicas of the Deployment name in each cluster's work of the generated PMW.
	deploymentShares := func(g Gomega, name string) map[string]int64 {
		out := map[string]int64{}
		for cluster, w := range fw.WorksByCluster(g, pmw) {
			for _, m := range w.Spec.Workload.Manifests {
				d := &appsv1.Deployment{}
				g.Expect(json.Unmarshal(m.Raw, d)).To(Succeed())
				if d.Kind == "Deployment" && d.Name == name {
					out[cluster] = int64(ptr.Deref(d.Spec.Replicas, 1))
				}
			}
		}
		return out
	}

	// reportReady plays each cluster's agent: the Deployment name is applied and ready at the work's share.
	reportReady := func(name string) {
		for _, cluster := range clusters {
			Eventually(func(g Gomega) {
				w := fw.WorksByCluster(g, pmw)[cluster]
				g.Expect(w.Name).NotTo(BeEmpty(), "cluster %s has a work", cluster)
				ordinal, share := -1, 0
				for i, m := range w.Spec.Workload.Manifests {
					d := &appsv1.Deployment{}
					g.Expect(json.Unmarshal(m.Raw, d)).To(Succeed())
					if d.Kind == "Deployment" && d.Name == name {
						ordinal, share = i, int(ptr.Deref(d.Spec.Replicas, 1))
					}
				}
				g.Expect(ordinal).NotTo(Equal(-1), "the work of %s carries the Deployment", cluster)
				framework.WorkConditions(&w, map[string]metav1.ConditionStatus{workv1.WorkApplied: T, workv1.WorkAvailable: T, workv1.WorkDegraded: F})
				framework.Feedback(&w, ordinal, map[string]any{
					health.FeedbackPrefix + health.Generation: 1, health.FeedbackPrefix + health.ObservedGeneration: 1,
					health.FeedbackPrefix + health.SpecReplicas: share,
					health.FeedbackPrefix + health.Replicas:     share, health.FeedbackPrefix + health.UpdatedReplicas: share,
					health.FeedbackPrefix + health.ReadyReplicas: share, health.FeedbackPrefix + health.AvailableReplicas: share,
				})
				g.Expect(k8s.Status().Update(ctx, &w)).To(Succeed())
			}, timeout, interval).Should(Succeed())
		}
	}

	// translated is the generated PMW's spec as the fleet controller writes it.
	translated := func(g Gomega) *workv1alpha1.PlacementManifestWork {
		cur := &workv1alpha1.PlacementManifestWork{}
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
		g.Expect(cur.Labels).To(HaveKeyWithValue(workv1alpha1.LabelFleetGenerated, "true"))
		return cur
	}

	BeforeEach(func() {
		// The hub namespace, with its Placement decided, exists before the fleet namespace opts in: an
		// administrator makes it (with a ManagedClusterSetBinding on a real hub).
		ns = fw.NewNamespace("fleet")
		pmw = &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.FleetGeneratedName, Namespace: ns}}
		clusters = fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Expect(fleetClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{workv1alpha1.LabelFleetPlacement: "p"}}})).To(Succeed())
		Expect(fleetClient.Create(ctx, deployment("web", 6))).To(Succeed())
	})

	It("turns a Deployment applied on the fleet API server into the generated PMW, split across the decided clusters", func() {
		Eventually(func(g Gomega) {
			cur := translated(g)
			g.Expect(cur.Spec.PlacementRef).To(Equal(&workv1alpha1.LocalPlacementReference{Name: "p"}))
			g.Expect(deploymentShares(g, "web")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2, clusters[2]: 2}))
		}, timeout, interval).Should(Succeed())
	})

	It("writes the agents' reports back into the Deployment's status on the fleet API server", func() {
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		// Before any report, nothing is available.
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			c := findDeploymentCondition(d, appsv1.DeploymentAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		}, timeout, interval).Should(Succeed())
		// kubectl describe shows why: an event per cluster on the Deployment, on the fleet API server.
		Eventually(func(g Gomega) {
			evs := &eventsv1.EventList{}
			g.Expect(fleetClient.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
			var reasons []string
			for _, e := range evs.Items {
				if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "web" {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement(fleet.EventClusterProgressing))
		}, timeout, interval).Should(Succeed())
		reportReady("web")
		Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.Replicas).To(BeEquivalentTo(6))
			g.Expect(d.Status.UpdatedReplicas).To(BeEquivalentTo(6))
			g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(6))
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(6))
			c := findDeploymentCondition(d, appsv1.DeploymentAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
	})

	It("moves the namespace's workloads when the namespace is relabelled with another Placement", func() {
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		others := fw.NewClusters(2)
		Expect(k8s.Create(ctx, framework.Placement("q", ns))).To(Succeed())
		fw.Decide(ns, "q", "q-decision-1", others...)
		Eventually(func(g Gomega) {
			cur := &corev1.Namespace{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: ns}, cur)).To(Succeed())
			cur.Labels[workv1alpha1.LabelFleetPlacement] = "q"
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(translated(g).Spec.PlacementRef).To(Equal(&workv1alpha1.LocalPlacementReference{Name: "q"}))
		}, timeout, interval).Should(Succeed())
		// The agents of the new clusters report, so the move completes: the Deployment runs 6 replicas there.
		clusters = others
		reportReady("web")
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(Equal(map[string]int64{others[0]: 3, others[1]: 3}))
		}, timeout, interval).Should(Succeed())
	})

	It("removes a deleted Deployment from the PMW", func() {
		Expect(fleetClient.Create(ctx, deployment("api", 2))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
			// 2 replicas over 3 clusters: 1, 1 and 0.
			g.Expect(deploymentShares(g, "api")).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		Expect(fleetClient.Delete(ctx, deployment("web", 6))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(Equal([]string{"Namespace/" + ns, "Deployment/api"}))
			g.Expect(deploymentShares(g, "web")).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})

	It("deletes the generated PMW, and with it the works, when the namespace opts out", func() {
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := &corev1.Namespace{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: ns}, cur)).To(Succeed())
			delete(cur.Labels, workv1alpha1.LabelFleetPlacement)
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(pmw), &workv1alpha1.PlacementManifestWork{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the generated PMW is gone")
			g.Expect(fw.WorksOf(g, pmw)).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})

	It("reverts an edit of the generated PMW on the hub", func() {
		var want workv1alpha1.PlacementManifestWorkSpec
		Eventually(func(g Gomega) {
			cur := translated(g)
			g.Expect(cur.Spec.DistributionStrategy).NotTo(BeEmpty())
			want = cur.Spec
		}, timeout, interval).Should(Succeed())
		fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
			cur.Spec.PlacementRef = &workv1alpha1.LocalPlacementReference{Name: "elsewhere"}
			cur.Spec.DistributionStrategy = nil
		})
		Eventually(func(g Gomega) {
			got := translated(g)
			g.Expect(got.Spec.PlacementRef).To(Equal(want.PlacementRef))
			g.Expect(got.Spec.DistributionStrategy).To(Equal(want.DistributionStrategy))
			g.Expect(got.Spec.ManifestWorkTemplate.Workload.Manifests).To(HaveLen(len(want.ManifestWorkTemplate.Workload.Manifests)))
		}, timeout, interval).Should(Succeed())
	})
})

// startFleetManager starts a manager on the suite's hub that runs only the fleet controller (the suite's manager
// runs the PlacementManifestWork controller), reaching the fleet API server with fleetCfg; it stops when the
// container ends.
func startFleetManager(ctx context.Context, fleetCfg *rest.Config) {
	m, err := ctrl.NewManager(fw.Config, ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Cache:                  controllers.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logf.Log.WithName("fleet"),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(internalfleet.SetupWithManager(m, fleetCfg)).To(Succeed())
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		done <- m.Start(ctx)
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done, timeout, interval).Should(Receive(BeNil()))
	})
}

func findDeploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// manifestNames are "<kind>/<name>" of a PMW's manifests, in order.
func manifestNames(g Gomega, pmw *workv1alpha1.PlacementManifestWork) []string {
	var out []string
	for _, m := range pmw.Spec.ManifestWorkTemplate.Workload.Manifests {
		obj := &metav1.PartialObjectMetadata{}
		g.Expect(json.Unmarshal(m.Raw, obj)).To(Succeed())
		out = append(out, obj.Kind+"/"+obj.Name)
	}
	return out
}
