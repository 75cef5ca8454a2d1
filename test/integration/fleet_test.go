package integration

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
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
		fleetCfg    *rest.Config
		fleetEnv    *envtest.Environment
		stopFleet   func()
		ns          string
		clusters    []string
		pmw         *workv1alpha1.PlacementManifestWork
	)

	BeforeAll(func() {
		env, cfg, err := framework.StartHub()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
		fleetEnv = env
		fleetCfg = cfg
		// kubectl's kinds, OCM's (the fleet API server here is a hub too) and CRDs.
		fleetScheme := runtime.NewScheme()
		Expect(scheme.AddToScheme(fleetScheme)).To(Succeed())
		Expect(clusterv1beta1.Install(fleetScheme)).To(Succeed())
		Expect(apiextensionsv1.AddToScheme(fleetScheme)).To(Succeed())
		fleetClient, err = client.New(fleetCfg, client.Options{Scheme: fleetScheme})
		Expect(err).NotTo(HaveOccurred())
		// A custom kind on the fleet API server, installed before the manager starts (it discovers kinds at
		// start and every minute).
		Expect(fleetClient.Create(ctx, widgetCRD())).To(Succeed())
		Eventually(func(g Gomega) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: "widgets.example.io"}, crd)).To(Succeed())
			g.Expect(apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		stopFleet = startFleetManager(fleetCfg)
		DeferCleanup(func() { stopFleet() }) // the manager running at the end, after a spec restarted it
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

	// fleetDeployment is the Deployment web on the fleet API server.
	fleetDeployment := func(g Gomega) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		g.Expect(fleetClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
		return d
	}

	// delivered waits until every decided cluster's work carries web.
	delivered := func() {
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
	}

	// optIn creates the fleet namespace name, opted in with the Placement placement.
	optIn := func(name, placement string) {
		Expect(fleetClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{workv1alpha1.LabelFleetPlacement: placement}}})).To(Succeed())
	}

	BeforeEach(func() {
		// The hub namespace, with its Placement decided, exists before the fleet namespace opts in: an
		// administrator makes it (with a ManagedClusterSetBinding on a real hub).
		ns = fw.NewNamespace("fleet")
		pmw = &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.FleetGeneratedName, Namespace: ns}}
		clusters = fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		optIn(ns, "p")
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
		delivered()
		// Before any report, nothing is available.
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			c := findDeploymentCondition(d, appsv1.DeploymentAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		}, timeout, interval).Should(Succeed())
		// kubectl describe shows why: an event per cluster on the Deployment, on the fleet API server, each with its
		// ManagedCluster as the related object (so Kubernetes does not fold them into one series).
		Eventually(func(g Gomega) {
			evs := &eventsv1.EventList{}
			g.Expect(fleetClient.List(ctx, evs, client.InNamespace(ns))).To(Succeed())
			about := map[string]string{}
			for _, e := range evs.Items {
				if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "web" && e.Reason == fleet.EventClusterProgressing && e.Related != nil {
					g.Expect(e.Related.Kind).To(Equal("ManagedCluster"))
					about[e.Related.Name] = e.Note
				}
			}
			g.Expect(about).To(HaveLen(3))
			for _, c := range clusters {
				g.Expect(about[c]).To(HavePrefix("cluster " + c + ": "))
			}
		}, timeout, interval).Should(Succeed())
		reportReady("web")
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
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
		delivered()
		reportReady("web")
		Eventually(func(g Gomega) {
			g.Expect(fleetDeployment(g).Status.AvailableReplicas).To(BeEquivalentTo(6))
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
			g.Expect(deploymentShares(g, "web")).To(HaveLen(5), "the new clusters have works beside the leaving ones")
		}, timeout, interval).Should(Succeed())
		// Until the new clusters report, the leaving ones still serve: the fleet's status says so.
		Consistently(func(g Gomega) {
			d := fleetDeployment(g)
			g.Expect(d.Status.AvailableReplicas).To(BeEquivalentTo(6))
			c := findDeploymentCondition(d, appsv1.DeploymentAvailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		}, 2*time.Second, interval).Should(Succeed())
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

	It("finishes a Foreground or Orphan delete, which no garbage collector finishes on the fleet API server", func() {
		Expect(fleetClient.Create(ctx, deployment("api", 2))).To(Succeed())
		// Someone else's finalizer, and an owner with a dependent: a garbage collector's to handle, so left alone.
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: ns, Finalizers: []string{"example.io/keep"}}}
		Expect(fleetClient.Create(ctx, kept)).To(Succeed())
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
		Expect(fleetClient.Create(ctx, owner)).To(Succeed())
		dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
		Expect(fleetClient.Create(ctx, dependent)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(ContainElements("Deployment/web", "Deployment/api", "ConfigMap/kept", "ConfigMap/owner"))
		}, timeout, interval).Should(Succeed())

		// kubectl delete --cascade=foreground (Argo CD's prune) and --cascade=orphan.
		foreground := client.PropagationPolicy(metav1.DeletePropagationForeground)
		Expect(fleetClient.Delete(ctx, deployment("web", 6), foreground)).To(Succeed())
		Expect(fleetClient.Delete(ctx, deployment("api", 2), client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Expect(fleetClient.Delete(ctx, kept, foreground)).To(Succeed())
		Expect(fleetClient.Delete(ctx, owner, foreground)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(Equal([]string{"Namespace/" + ns}))
			for _, name := range []string{"web", "api"} {
				err := fleetClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment %s is gone, not Terminating: %v", name, err)
			}
			cur := &corev1.ConfigMap{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKeyFromObject(kept), cur)).To(Succeed())
			g.Expect(cur.Finalizers).To(Equal([]string{"example.io/keep"}), "only the garbage collector's finalizer is removed")
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			cur := &corev1.ConfigMap{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKeyFromObject(owner), cur)).To(Succeed())
			g.Expect(cur.Finalizers).To(Equal([]string{metav1.FinalizerDeleteDependents}), "an owner whose dependents exist waits for them")
		}, 2*time.Second, interval).Should(Succeed())
		Expect(fleetClient.Delete(ctx, dependent)).To(Succeed())
		Eventually(func(g Gomega) {
			err := fleetClient.Get(ctx, client.ObjectKeyFromObject(owner), &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the owner is gone once its dependent is: %v", err)
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := &corev1.ConfigMap{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKeyFromObject(kept), cur)).To(Succeed())
			cur.Finalizers = nil
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	})

	It("delivers none of the objects the API server keeps for itself in kube-system and kube-public", func() {
		for _, own := range []string{"kube-system", "kube-public"} {
			Expect(k8s.Create(ctx, framework.Placement("p", own))).To(Succeed())
			fw.Decide(own, "p", "p-decision-1", clusters...)
			setLabel := func(value string) {
				Eventually(func(g Gomega) {
					cur := &corev1.Namespace{}
					g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: own}, cur)).To(Succeed())
					if value == "" {
						delete(cur.Labels, workv1alpha1.LabelFleetPlacement)
					} else {
						cur.Labels[workv1alpha1.LabelFleetPlacement] = value
					}
					g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
				}, timeout, interval).Should(Succeed())
			}
			setLabel("p")
			DeferCleanup(func() {
				setLabel("")
				Expect(client.IgnoreNotFound(k8s.Delete(ctx, framework.Placement("p", own)))).To(Succeed())
			})
			// Its ConfigMaps (extension-apiserver-authentication, ...), its default Roles and RoleBindings: each
			// cluster has its own. Its identity Lease is left out by its kind.
			Eventually(func(g Gomega) {
				cur := &workv1alpha1.PlacementManifestWork{}
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: own, Name: workv1alpha1.FleetGeneratedName}, cur)).To(Succeed())
				g.Expect(manifestNames(g, cur)).To(Equal([]string{"Namespace/" + own}))
			}, timeout, interval).Should(Succeed())
		}
	})

	It("deletes the generated PMW, and with it the works, when the namespace opts out, and clears the status it wrote", func() {
		delivered()
		reportReady("web")
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			g.Expect(d.Status.ReadyReplicas).To(BeEquivalentTo(6))
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
		// Nothing runs it any more: the status no longer says it is available.
		d := &appsv1.Deployment{}
		Expect(fleetClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
		Expect(d.Status).To(Equal(appsv1.DeploymentStatus{}))
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

	It("translates again after a restart only once it knows every kind, so a restart removes nothing", func() {
		delivered()
		stopFleet()
		stopFleet = startFleetManager(fleetCfg)
		// A manager that translated before watching the Deployments would write the PMW without them.
		Consistently(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(ContainElement("Deployment/web"))
		}, 5*time.Second, interval).Should(Succeed())
	})

	It("keeps what the PMW delivers of a kind it cannot read after a restart, and says so", func() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns}, Data: map[string]string{"a": "1"}}
		Expect(fleetClient.Create(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(ContainElements("ConfigMap/settings", "Deployment/web"))
		}, timeout, interval).Should(Succeed())
		// The manager comes back with an identity that may not list ConfigMaps on the fleet API server.
		user, err := fleetEnv.AddUser(envtest.User{Name: "fleet-no-configmaps", Groups: []string{"fleet-no-configmaps"}}, fleetCfg)
		Expect(err).NotTo(HaveOccurred())
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleet-no-configmaps"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces", "secrets", "serviceaccounts", "services", "pods"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments/status"}, Verbs: []string{"patch"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleet-no-configmaps"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "fleet-no-configmaps"}}}
		for _, o := range []client.Object{role, binding} {
			Expect(client.IgnoreAlreadyExists(fleetClient.Create(ctx, o))).To(Succeed())
		}
		stopFleet()
		stopFleet = startFleetManager(user.Config())
		// Meanwhile the Deployment changes: nothing of the namespace is updated while the ConfigMap cannot be read,
		// and the ConfigMap is not taken from the clusters.
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			d.Spec.Replicas = ptr.To[int32](9)
			g.Expect(fleetClient.Update(ctx, d)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(translated(g).Status.Conditions, workv1alpha1.ConditionFleetObjectsDelivered)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonFleetKindsUnreadable))
			g.Expect(c.Message).To(ContainSubstring("ConfigMap"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(manifestNames(g, translated(g))).To(ContainElement("ConfigMap/settings"))
			g.Expect(deploymentShares(g, "web")).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2, clusters[2]: 2}))
		}, 3*time.Second, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventReasonsOn(g, fleetClient, "", "Namespace", ns)).To(ContainElement(workv1alpha1.EventFleetKindsUnreadable))
		}, timeout, interval).Should(Succeed())
		// Allowed again, it reads the ConfigMaps (at its next discovery) and delivers the change.
		stopFleet()
		stopFleet = startFleetManager(fleetCfg)
		Eventually(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(Equal(map[string]int64{clusters[0]: 3, clusters[1]: 3, clusters[2]: 3}))
			g.Expect(manifestNames(g, translated(g))).To(ContainElement("ConfigMap/settings"))
			g.Expect(meta.IsStatusConditionTrue(translated(g).Status.Conditions, workv1alpha1.ConditionFleetObjectsDelivered)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
	})

	It("holds the Deployment's observedGeneration until the clusters applied its new generation", func() {
		delivered()
		reportReady("web")
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			g.Expect(d.Status.ObservedGeneration).To(BeEquivalentTo(1))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
			g.Expect(fleetClient.Update(ctx, d)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		// The works carry generation 2 once the manager rewrote them; until their agents report it applied, the
		// fleet's status says generation 1 is what runs.
		Eventually(func(g Gomega) {
			for _, w := range fw.WorksByCluster(g, pmw) {
				g.Expect(string(w.Spec.Workload.Manifests[1].Raw)).To(ContainSubstring("nginx:1.28"))
			}
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			d := fleetDeployment(g)
			g.Expect(d.Status.ObservedGeneration).To(BeEquivalentTo(1))
		}, 2*time.Second, interval).Should(Succeed())
		reportReady("web")
		Eventually(func(g Gomega) {
			d := fleetDeployment(g)
			g.Expect(d.Status.ObservedGeneration).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
	})

	It("reports an object it cannot deliver on the object and on the generated PMW, and ignores OCM's objects", func() {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sh", Image: "busybox"}}}}
		Expect(fleetClient.Create(ctx, pod)).To(Succeed())
		// The hub's own kind of object in the fleet namespace (here the fleet API server is a hub too) is neither
		// delivered nor reported.
		Expect(fleetClient.Create(ctx, framework.Placement("local", ns))).To(Succeed())
		Eventually(func(g Gomega) {
			cur := translated(g)
			c := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.ConditionFleetObjectsDelivered)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonFleetObjectsLeftOut))
			g.Expect(c.Message).To(ContainSubstring("1 object of the fleet namespace is not delivered"))
			g.Expect(c.Message).To(ContainSubstring("Pod " + ns + "/debug"))
			g.Expect(c.Message).NotTo(ContainSubstring("Placement"))
			g.Expect(manifestNames(g, cur)).To(Equal([]string{"Namespace/" + ns, "Deployment/web"}))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventReasonsOn(g, fleetClient, ns, "Pod", "debug")).To(ContainElement(workv1alpha1.EventFleetNotDelivered))
			g.Expect(eventReasonsOn(g, k8s, ns, "PlacementManifestWork", workv1alpha1.FleetGeneratedName)).To(ContainElement(workv1alpha1.EventFleetNotDelivered))
		}, timeout, interval).Should(Succeed())
		// The manager's own status writes keep the condition.
		reportReady("web")
		Eventually(func(g Gomega) {
			cur := translated(g)
			g.Expect(meta.IsStatusConditionTrue(cur.Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
			g.Expect(meta.IsStatusConditionFalse(cur.Status.Conditions, workv1alpha1.ConditionFleetObjectsDelivered)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		Expect(fleetClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(translated(g).Status.Conditions, workv1alpha1.ConditionFleetObjectsDelivered)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonFleetObjectsDelivered))
		}, timeout, interval).Should(Succeed())
	})

	It("splits a custom kind over the replica field of its hub ResourceInterpreter", func() {
		ri := &workv1alpha1.ResourceInterpreter{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets-" + ns},
			Spec: workv1alpha1.ResourceInterpreterSpec{
				Target:   workv1alpha1.InterpreterTarget{Group: "example.io", Kind: "Widget"},
				Replicas: []string{".spec.size"},
			},
		}
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		widget := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "gears", "namespace": ns,
				"annotations": map[string]any{workv1alpha1.AnnotationFleetDistribution: "Split"}},
			"spec": map[string]any{"size": int64(6)},
		}}
		Expect(fleetClient.Create(ctx, widget)).To(Succeed())
		Eventually(func(g Gomega) {
			sizes := map[string]int64{}
			for cluster, w := range fw.WorksByCluster(g, pmw) {
				for _, m := range w.Spec.Workload.Manifests {
					u := &unstructured.Unstructured{}
					g.Expect(u.UnmarshalJSON(m.Raw)).To(Succeed())
					if u.GetKind() == "Widget" {
						sizes[cluster], _, _ = unstructured.NestedInt64(u.Object, "spec", "size")
					}
				}
			}
			g.Expect(sizes).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2, clusters[2]: 2}))
		}, timeout, interval).Should(Succeed())
	})

	It("generates the Placement from the namespace's cluster selector, and follows it", func() {
		other := fw.NewNamespace("fleet-sel")
		Expect(fleetClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other,
			Annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod", workv1alpha1.AnnotationFleetNumberOfClusters: "2"}}})).To(Succeed())
		generated := func(g Gomega) *clusterv1beta1.Placement {
			p := &clusterv1beta1.Placement{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: other, Name: workv1alpha1.FleetGeneratedName}, p)).To(Succeed())
			g.Expect(p.Labels).To(HaveKeyWithValue(workv1alpha1.LabelFleetGenerated, "true"))
			return p
		}
		Eventually(func(g Gomega) {
			p := generated(g)
			g.Expect(p.Spec.NumberOfClusters).To(Equal(ptr.To[int32](2)))
			g.Expect(p.Spec.Predicates).To(HaveLen(1))
			g.Expect(p.Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchLabels).To(Equal(map[string]string{"env": "prod"}))
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: other, Name: workv1alpha1.FleetGeneratedName}, cur)).To(Succeed())
			g.Expect(cur.Spec.PlacementRef).To(Equal(&workv1alpha1.LocalPlacementReference{Name: workv1alpha1.FleetGeneratedName}))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := &corev1.Namespace{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: other}, cur)).To(Succeed())
			cur.Annotations[workv1alpha1.AnnotationFleetClusterSelector] = "env=dev"
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(generated(g).Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchLabels).To(Equal(map[string]string{"env": "dev"}))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the generated Placement on opt-out while the PMW handed over to a user uses it", func() {
		other := fw.NewNamespace("fleet-handed")
		Expect(fleetClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other,
			Annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod"}}})).To(Succeed())
		key := client.ObjectKey{Namespace: other, Name: workv1alpha1.FleetGeneratedName}
		handed := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: workv1alpha1.FleetGeneratedName}}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key, &clusterv1beta1.Placement{})).To(Succeed())
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, key, cur)).To(Succeed())
			g.Expect(cur.Labels).To(HaveKeyWithValue(workv1alpha1.LabelFleetGenerated, "true"))
		}, timeout, interval).Should(Succeed())
		// Removing the label hands the PMW over; it still names the generated Placement. (Removed again should a
		// reconcile that read the PMW before the removal apply it back.)
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, key, cur)).To(Succeed())
			if _, ok := cur.Labels[workv1alpha1.LabelFleetGenerated]; ok {
				delete(cur.Labels, workv1alpha1.LabelFleetGenerated)
				g.Expect(k8s.Update(ctx, cur)).To(Succeed())
			}
			g.Expect(eventReasonsOn(g, fleetClient, "", "Namespace", other)).To(ContainElement(workv1alpha1.EventFleetNotGenerated))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cur := &corev1.Namespace{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: other}, cur)).To(Succeed())
			delete(cur.Annotations, workv1alpha1.AnnotationFleetClusterSelector)
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			p := &clusterv1beta1.Placement{}
			g.Expect(k8s.Get(ctx, key, p)).To(Succeed(), "the handed-over PMW's Placement stays")
			g.Expect(p.DeletionTimestamp).To(BeNil())
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, key, cur)).To(Succeed())
			g.Expect(cur.DeletionTimestamp).To(BeNil())
			g.Expect(cur.Spec.PlacementRef).To(Equal(&workv1alpha1.LocalPlacementReference{Name: workv1alpha1.FleetGeneratedName}))
		}, 3*time.Second, interval).Should(Succeed())
		// Once nothing uses it, the generated Placement of the opted-out namespace goes.
		Expect(k8s.Delete(ctx, handed)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, key, &clusterv1beta1.Placement{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the generated Placement is gone: %v", err)
		}, timeout, interval).Should(Succeed())
	})

	It("tells on the fleet namespace why nothing is delivered, and leaves what is not its own alone", func() {
		nsEvents := func(g Gomega, name string) []string { return eventReasonsOn(g, fleetClient, "", "Namespace", name) }
		// No hub namespace of the same name: nothing is written on the hub.
		lonely := "fleet-lonely-" + strings.ToLower(rand.String(5))
		optIn(lonely, "p")
		Eventually(func(g Gomega) {
			g.Expect(nsEvents(g, lonely)).To(ContainElement(workv1alpha1.EventFleetHubNamespaceMissing))
		}, timeout, interval).Should(Succeed())

		// Both opt-ins at once do not parse: what is delivered stays.
		delivered()
		Eventually(func(g Gomega) {
			cur := &corev1.Namespace{}
			g.Expect(fleetClient.Get(ctx, client.ObjectKey{Name: ns}, cur)).To(Succeed())
			cur.Annotations = map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod"}
			g.Expect(fleetClient.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(nsEvents(g, ns)).To(ContainElement(workv1alpha1.EventFleetInvalidOptIn))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(deploymentShares(g, "web")).To(HaveLen(3))
		}, 2*time.Second, interval).Should(Succeed())

		// A PMW named fleet that someone else made is theirs: reported, not touched.
		theirs := fw.NewNamespace("fleet-theirs")
		Expect(k8s.Create(ctx, framework.Placement("p", theirs))).To(Succeed())
		mine := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.FleetGeneratedName, Namespace: theirs},
			Spec: workv1alpha1.PlacementManifestWorkSpec{PlacementRef: &workv1alpha1.LocalPlacementReference{Name: "p"},
				ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
					{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mine","namespace":"` + theirs + `"}}`)}}}}}}}
		Expect(k8s.Create(ctx, mine)).To(Succeed())
		optIn(theirs, "p")
		Eventually(func(g Gomega) {
			g.Expect(nsEvents(g, theirs)).To(ContainElement(workv1alpha1.EventFleetNotGenerated))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(mine), cur)).To(Succeed())
			g.Expect(cur.Labels).NotTo(HaveKey(workv1alpha1.LabelFleetGenerated))
			g.Expect(manifestNames(g, cur)).To(Equal([]string{"ConfigMap/mine"}))
		}, 2*time.Second, interval).Should(Succeed())
	})
})

// eventReasonsOn are the reasons of the events (events.k8s.io) on c in namespace ns (all when "") regarding the object of kind and
// name.
func eventReasonsOn(g Gomega, c client.Client, ns, kind, name string) []string {
	evs := &eventsv1.EventList{}
	opts := []client.ListOption{}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	g.Expect(c.List(context.Background(), evs, opts...)).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// widgetCRD is a namespaced custom kind, example.io Widget, whose replicas are .spec.size.
func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// startFleetManager starts a manager on the suite's hub that runs only the fleet controller (the suite's manager
// runs the PlacementManifestWork controller), reaching the fleet API server with fleetCfg, until stop is called.
func startFleetManager(fleetCfg *rest.Config) (stop func()) {
	cacheOpts, err := controllers.CacheOptions(fw.Config)
	Expect(err).NotTo(HaveOccurred())
	m, err := ctrl.NewManager(fw.Config, ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logf.Log.WithName("fleet"),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(internalfleet.SetupWithManager(context.Background(), m, fleetCfg)).To(Succeed())
	return fw.Run(m, "the fleet manager")
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
