package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Overrides", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("overrides")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	// joinWith creates the clusters' ManagedClusters with their labels and ClusterClaims.
	joinWith := func(clusters []string, labels []map[string]string, claims []map[string]string) {
		for i, c := range clusters {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c, Labels: labels[i]}}
			Expect(k8s.Create(ctx, mc)).To(Succeed())
			if len(claims[i]) == 0 {
				continue
			}
			for name, value := range claims[i] {
				mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
			}
			Expect(k8s.Status().Update(ctx, mc)).To(Succeed())
		}
	}
	relabel := func(cluster string, change func(map[string]string)) {
		Eventually(func(g Gomega) {
			mc := &clusterv1.ManagedCluster{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: cluster}, mc)).To(Succeed())
			if mc.Labels == nil {
				mc.Labels = map[string]string{}
			}
			change(mc.Labels)
			g.Expect(k8s.Update(ctx, mc)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	// images reads, from each cluster's work, the image of the Deployment's first container.
	images := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]string {
		out := map[string]string{}
		for cluster, w := range fw.WorksByCluster(g, pmw) {
			for _, m := range w.Spec.Workload.Manifests {
				var obj struct {
					Kind string `json:"kind"`
					Spec struct {
						Template struct {
							Spec struct {
								Containers []struct {
									Image string `json:"image"`
								} `json:"containers"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"spec"`
				}
				g.Expect(json.Unmarshal(m.Raw, &obj)).To(Succeed())
				if obj.Kind == "Deployment" {
					out[cluster] = obj.Spec.Template.Spec.Containers[0].Image
				}
			}
		}
		return out
	}
	resourceVersions := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]string {
		out := map[string]string{}
		for c, w := range fw.WorksByCluster(g, pmw) {
			out[c] = w.ResourceVersion
		}
		return out
	}
	value := func(s string) *workv1alpha1.OverrideValue { return &workv1alpha1.OverrideValue{Value: s} }
	expression := func(s string) *workv1alpha1.OverrideValue { return &workv1alpha1.OverrideValue{Expression: s} }

	It("gives clusters different images by labels, claims and names, follows a label change, and counts", func() {
		clusters := fw.NewClusters(4)
		joinWith(clusters,
			[]map[string]string{{"region": "eu"}, {"region": "us"}, nil, nil},
			[]map[string]string{nil, nil, {"platform.open-cluster-management.io": "AWS"}, nil})
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 1)).
			Overrides(
				workv1alpha1.ClusterOverride{Name: "regional-mirror",
					Clusters: &workv1alpha1.OverrideClusters{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "region", Operator: metav1.LabelSelectorOpExists}}}},
					Image: &workv1alpha1.ImageOverride{Registry: expression(`cluster.labels["region"] + ".mirror.example.com"`)}},
				workv1alpha1.ClusterOverride{Name: "aws",
					Clusters: &workv1alpha1.OverrideClusters{ClaimSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
						"platform.open-cluster-management.io": "AWS"}}},
					Image: &workv1alpha1.ImageOverride{Registry: value("ecr.example.com")}},
				workv1alpha1.ClusterOverride{Name: "canary",
					Clusters: &workv1alpha1.OverrideClusters{Names: []string{clusters[3]}},
					Image:    &workv1alpha1.ImageOverride{Tag: value("2-canary")}},
			).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw)).To(Equal(map[string]string{
				clusters[0]: "eu.mirror.example.com/app:1",
				clusters[1]: "us.mirror.example.com/app:1",
				clusters[2]: "ecr.example.com/app:1",
				clusters[3]: "registry.example/app:2-canary",
			}))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Overrides).To(Equal([]workv1alpha1.OverrideStatus{
				{Name: "regional-mirror", Clusters: 2}, {Name: "aws", Clusters: 1}, {Name: "canary", Clusters: 1}}))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionDistributed).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())

		By("a label change: that cluster's work follows, the others are not written")
		before := map[string]string{}
		Eventually(func(g Gomega) { before = resourceVersions(g, pmw) }, timeout, interval).Should(Succeed())
		relabel(clusters[1], func(l map[string]string) { l["region"] = "ap" })
		relabel(clusters[3], func(l map[string]string) { l["region"] = "eu" })
		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw)).To(Equal(map[string]string{
				clusters[0]: "eu.mirror.example.com/app:1",
				clusters[1]: "ap.mirror.example.com/app:1",
				clusters[2]: "ecr.example.com/app:1",
				clusters[3]: "eu.mirror.example.com/app:2-canary",
			}))
			g.Expect(fw.Current(g, pmw).Status.Overrides[0]).To(Equal(workv1alpha1.OverrideStatus{Name: "regional-mirror", Clusters: 3}))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			after := resourceVersions(g, pmw)
			g.Expect(after[clusters[0]]).To(Equal(before[clusters[0]]))
			g.Expect(after[clusters[2]]).To(Equal(before[clusters[2]]))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the works of clusters where an override fails, serves the others, and names them", func() {
		clusters := fw.NewClusters(3)
		joinWith(clusters,
			[]map[string]string{{"region": "eu", "pause": "yes"}, {"region": "us"}, {"region": "eu"}},
			[]map[string]string{nil, nil, nil})
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 1)).
			Overrides(workv1alpha1.ClusterOverride{Name: "mirror",
				Image: &workv1alpha1.ImageOverride{Registry: expression(`cluster.labels["region"] + ".mirror.example.com"`)}}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(images(g, pmw)).To(HaveLen(3))
		}, timeout, interval).Should(Succeed())
		var before map[string]string
		Eventually(func(g Gomega) { before = resourceVersions(g, pmw) }, timeout, interval).Should(Succeed())

		By("a CEL-chosen path missing on one cluster, and an expression that fails for another's labels")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.Overrides[0].Image.Tag = value("2")
			p.Spec.Overrides = append(p.Spec.Overrides, workv1alpha1.ClusterOverride{Name: "pause",
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace,
					Path:  "/spec/template/spec/containers/0/image",
					Value: &workv1alpha1.JSON{Raw: []byte(`"registry.example/app:2"`)}}}},
			)
			// cluster 0 has a label pause: its path is one the manifest lacks. Cluster 2's labels lack tier.
			p.Spec.Overrides[1].Patches = []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace,
				Path:       "/spec/paused",
				Expression: `'pause' in cluster.labels ? true : cluster.labels["tier"] == "x"`}}
			p.Spec.Overrides[1].Clusters = &workv1alpha1.OverrideClusters{Names: []string{clusters[0], clusters[2]}}
		})
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonOverrideFailed))
			g.Expect(c.Message).To(ContainSubstring("override pause fails on 2 clusters (%s, %s)", clusters[0], clusters[2]))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(fw.Current(g, pmw).Status.Overrides).To(Equal([]workv1alpha1.OverrideStatus{
				{Name: "mirror", Clusters: 1},
				{Name: "pause", Failed: 2, FailedClusters: []string{clusters[0], clusters[2]},
					Message: fw.Current(g, pmw).Status.Overrides[1].Message},
			}))
			g.Expect(images(g, pmw)).To(Equal(map[string]string{
				clusters[0]: "eu.mirror.example.com/app:1", // kept as it was
				clusters[1]: "us.mirror.example.com/app:2",
				clusters[2]: "eu.mirror.example.com/app:1", // kept as it was
			}))
		}, timeout, interval).Should(Succeed())
		after := map[string]string{}
		Eventually(func(g Gomega) { after = resourceVersions(g, pmw) }, timeout, interval).Should(Succeed())
		Expect(after[clusters[0]]).To(Equal(before[clusters[0]]))
		Expect(after[clusters[2]]).To(Equal(before[clusters[2]]))

		By("an override whose expression does not compile: Stalled with InvalidOverride, the works kept")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.Overrides = p.Spec.Overrides[:1]
			p.Spec.Overrides[0].Image.Registry = expression(`cluster.labels["region"] +`)
		})
		Eventually(func(g Gomega) {
			stalled := fw.Condition(g, pmw, workv1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(workv1alpha1.ReasonInvalidOverride))
			g.Expect(stalled.Message).To(ContainSubstring("spec.overrides[0].image.registry.expression"))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionDistributed).Reason).To(Equal(workv1alpha1.ReasonInvalidOverride))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(resourceVersions(g, pmw)).To(Equal(after))
		}, "1s", interval).Should(Succeed())
	})

	It("rewrites the images of custom workloads shaped like the built-ins, and refuses an image override that would rewrite none", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		podSpec := func(image string) map[string]any {
			return map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}
		}
		rollout := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec":     map[string]any{"template": map[string]any{"spec": podSpec("web:1")}}}
		nightly := map[string]any{"apiVersion": "example.com/v1", "kind": "NightlyReport",
			"metadata": map[string]any{"name": "report", "namespace": "default"},
			"spec": map[string]any{"schedule": "0 3 * * *", "jobTemplate": map[string]any{"spec": map[string]any{
				"template": map[string]any{"spec": podSpec("report:1")}}}}}
		ray := map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster",
			"metadata": map[string]any{"name": "ray", "namespace": "default"},
			"spec":     map[string]any{"headGroupSpec": map[string]any{"template": map[string]any{"spec": podSpec("rayproject/ray:2.9")}}}}
		// imagesOf reads, from each cluster's work, the first container image of each kind at its path.
		paths := map[string][]string{
			"Deployment":    {"spec", "template", "spec", "containers"},
			"Rollout":       {"spec", "template", "spec", "containers"},
			"NightlyReport": {"spec", "jobTemplate", "spec", "template", "spec", "containers"},
			"RayCluster":    {"spec", "headGroupSpec", "template", "spec", "containers"},
		}
		imagesOf := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string]map[string]string {
			out := map[string]map[string]string{}
			for cluster, w := range fw.WorksByCluster(g, pmw) {
				out[cluster] = map[string]string{}
				for _, m := range w.Spec.Workload.Manifests {
					obj := &unstructured.Unstructured{}
					g.Expect(obj.UnmarshalJSON(m.Raw)).To(Succeed())
					if path, ok := paths[obj.GetKind()]; ok {
						ctrs, _, _ := unstructured.NestedSlice(obj.Object, path...)
						g.Expect(ctrs).NotTo(BeEmpty())
						out[cluster][obj.GetKind()] = ctrs[0].(map[string]any)["image"].(string)
					}
				}
			}
			return out
		}
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 1)).
			Manifest(rollout).
			Manifest(nightly).
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"k": "v"})).
			Overrides(workv1alpha1.ClusterOverride{Name: "mirror", Image: &workv1alpha1.ImageOverride{Registry: value("mirror.example.com")}}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("every manifest: the Deployment, the Rollout and the CronJob-shaped kind are rewritten, the ConfigMap is left alone")
		want := map[string]string{"Deployment": "mirror.example.com/app:1", "Rollout": "mirror.example.com/web:1",
			"NightlyReport": "mirror.example.com/report:1"}
		Eventually(func(g Gomega) {
			g.Expect(imagesOf(g, pmw)).To(Equal(map[string]map[string]string{clusters[0]: want, clusters[1]: want}))
			g.Expect(fw.Current(g, pmw).Status.Overrides).To(Equal([]workv1alpha1.OverrideStatus{{Name: "mirror", Clusters: 2}}))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionDistributed).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
		var before map[string]string
		Eventually(func(g Gomega) { before = resourceVersions(g, pmw) }, timeout, interval).Should(Succeed())

		stalledWith := func(substrings ...string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				stalled := fw.Condition(g, pmw, workv1alpha1.ConditionStalled)
				g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(stalled.Reason).To(Equal(workv1alpha1.ReasonInvalidOverride))
				for _, s := range substrings {
					g.Expect(stalled.Message).To(ContainSubstring(s))
				}
				g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionDistributed).Reason).To(Equal(workv1alpha1.ReasonInvalidOverride))
				g.Expect(fw.Current(g, pmw).Status.Overrides).To(BeEmpty(), "counted as applied nowhere")
			}, timeout, interval).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(resourceVersions(g, pmw)).To(Equal(before))
			}, "1s", interval).Should(Succeed())
		}

		By("a RayCluster the override names: its containers sit where the short form does not look")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			raw, err := json.Marshal(ray)
			Expect(err).NotTo(HaveOccurred())
			p.Spec.ManifestWorkTemplate.Workload.Manifests = append(p.Spec.ManifestWorkTemplate.Workload.Manifests,
				p.Spec.ManifestWorkTemplate.Workload.Manifests[0])
			p.Spec.ManifestWorkTemplate.Workload.Manifests[len(p.Spec.ManifestWorkTemplate.Workload.Manifests)-1].Raw = raw
			p.Spec.Overrides[0].Manifests = []workv1alpha1.OverrideManifest{{Kind: "Deployment"}, {Kind: "RayCluster"}}
		})
		stalledWith("spec.overrides[0].image: RayCluster.ray.io default/ray has containers at /spec/headGroupSpec/template/spec/containers",
			"replace /spec/headGroupSpec/template/spec/containers/0/image")

		By("an image override that selects the ConfigMap only")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.Overrides[0].Manifests = []workv1alpha1.OverrideManifest{{Kind: "ConfigMap"}}
		})
		stalledWith("spec.overrides[0].image: finds no container to rewrite", "the manifests it selects (ConfigMap default/cfg) have none")

		By("the workloads with their ConfigMap, and the RayCluster by patch: delivered")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.Overrides[0].Manifests = []workv1alpha1.OverrideManifest{{Kind: "Deployment"}, {Kind: "Rollout"}, {Kind: "ConfigMap"}}
			p.Spec.Overrides = append(p.Spec.Overrides, workv1alpha1.ClusterOverride{Name: "ray-mirror",
				Manifests: []workv1alpha1.OverrideManifest{{Kind: "RayCluster"}},
				Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace,
					Path:  "/spec/headGroupSpec/template/spec/containers/0/image",
					Value: &workv1alpha1.JSON{Raw: []byte(`"mirror.example.com/rayproject/ray:2.9"`)}}}})
		})
		want = map[string]string{"Deployment": "mirror.example.com/app:1", "Rollout": "mirror.example.com/web:1",
			"NightlyReport": "report:1", "RayCluster": "mirror.example.com/rayproject/ray:2.9"}
		Eventually(func(g Gomega) {
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionStalled).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(imagesOf(g, pmw)).To(Equal(map[string]map[string]string{clusters[0]: want, clusters[1]: want}))
			g.Expect(fw.Current(g, pmw).Status.Overrides).To(Equal([]workv1alpha1.OverrideStatus{
				{Name: "mirror", Clusters: 2}, {Name: "ray-mirror", Clusters: 2}}))
		}, timeout, interval).Should(Succeed())
	})

	It("apportions the HPA of a split Deployment per cluster", func() {
		clusters := fw.NewClusters(3)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.Deployment("web", "default", 6)).
			Manifest(framework.HPA("web", "default", "web", 4, 9)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Deployment", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			want := map[string]int64{clusters[0]: 2, clusters[1]: 2, clusters[2]: 2}
			g.Expect(shares(g, pmw, "Deployment", "spec", "replicas")).To(Equal(want))
			// ceil(4 × 2/6) = 2 and ceil(9 × 2/6) = 3 on every cluster.
			g.Expect(shares(g, pmw, "HorizontalPodAutoscaler", "spec", "minReplicas")).To(Equal(want))
			g.Expect(shares(g, pmw, "HorizontalPodAutoscaler", "spec", "maxReplicas")).To(Equal(map[string]int64{clusters[0]: 3, clusters[1]: 3, clusters[2]: 3}))
			st := fw.Current(g, pmw).Status
			g.Expect(st.Splits).To(HaveLen(1))
			g.Expect(st.Splits[0].Companions).To(Equal([]workv1alpha1.SplitCompanion{
				{Kind: "HorizontalPodAutoscaler", Name: "web", Fields: []string{"spec.minReplicas", "spec.maxReplicas"}}}))
		}, timeout, interval).Should(Succeed())

		By("splitCompanions Copy delivers it unchanged")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) { p.Spec.SplitCompanions = workv1alpha1.SplitCompanionsCopy })
		Eventually(func(g Gomega) {
			g.Expect(shares(g, pmw, "HorizontalPodAutoscaler", "spec", "minReplicas")).To(Equal(map[string]int64{clusters[0]: 4, clusters[1]: 4, clusters[2]: 4}))
			g.Expect(fw.Current(g, pmw).Status.Splits[0].Companions).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})
})
