package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Dependencies", func() {
	var (
		ctx      context.Context
		ns       string
		group    string
		clusters []string
	)

	// widget is a custom resource whose interpreter names the ConfigMap spec.configName and, when set, the
	// Secret spec.secretName.
	widget := func(spec map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "gadget", "namespace": "shop"},
			"spec":     spec,
		}
	}
	// carried are the manifests of each cluster's work other than the Widget, as "<kind> <namespace>/<name>"
	// with their data.
	type delivered struct {
		ID   string
		Data map[string]any
	}
	carried := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork) map[string][]delivered {
		out := map[string][]delivered{}
		for cluster, w := range fw.WorksByCluster(g, pmw) {
			out[cluster] = []delivered{}
			for _, m := range w.Spec.Workload.Manifests {
				var obj struct {
					Kind     string            `json:"kind"`
					Metadata metav1.ObjectMeta `json:"metadata"`
					Data     map[string]any    `json:"data"`
				}
				g.Expect(json.Unmarshal(m.Raw, &obj)).To(Succeed())
				if obj.Kind != "Widget" {
					out[cluster] = append(out[cluster], delivered{ID: obj.Kind + " " + obj.Metadata.Namespace + "/" + obj.Metadata.Name, Data: obj.Data})
				}
			}
		}
		return out
	}
	everyCluster := func(want ...delivered) map[string][]delivered {
		out := map[string][]delivered{}
		for _, c := range clusters {
			out[c] = append([]delivered{}, want...)
		}
		return out
	}

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("dependencies")
		group = "widgets-" + rand.String(6) + ".example.io"
		ri := &workv1alpha1.ResourceInterpreter{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets-" + rand.String(5)},
			Spec: workv1alpha1.ResourceInterpreterSpec{
				Target: workv1alpha1.InterpreterTarget{Group: group, Kind: "Widget"},
				Dependencies: &workv1alpha1.InterpreterDependencies{Expression: `[{'kind': 'ConfigMap', 'name': object.spec.configName}] +
					(has(object.spec.secretName) ? [{'kind': 'Secret', 'name': object.spec.secretName}] : [])`},
			},
		}
		Expect(k8s.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ri))).To(Succeed()) })
		Eventually(func(g Gomega) {
			got := &workv1alpha1.ResourceInterpreter{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ri), got)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha1.ConditionReady)).To(BeTrue())
		}, timeout, interval).Should(Succeed())

		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		clusters = fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		Expect(k8s.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns, Labels: map[string]string{"app": "gadget"},
				Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"level":"1"}}`}},
			Data: map[string]string{"level": "1"},
		})).To(Succeed())
	})

	It("carries the ConfigMaps and Secrets a manifest names to every cluster, keeps them in step, and keeps the works while one is missing", func() {
		pmw := framework.MakePMW("gadget", ns).Placement("p").Manifest(widget(map[string]any{"configName": "settings"})).Obj()
		pmw.Spec.PropagateDependencies = true
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("every work carries the ConfigMap, in the Widget's namespace, without kubectl's copy")
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster(delivered{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "1"}})))
			for _, w := range fw.WorksOf(g, pmw) {
				cm := &corev1.ConfigMap{}
				g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[1].Raw, cm)).To(Succeed())
				g.Expect(cm.Labels).To(Equal(map[string]string{"app": "gadget"}))
				g.Expect(cm.Annotations).To(BeEmpty())
			}
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())

		By("a change of the ConfigMap on the hub reaches every work")
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, cm)).To(Succeed())
			cm.Data["level"] = "2"
			g.Expect(k8s.Update(ctx, cm)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster(delivered{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "2"}})))
		}, timeout, interval).Should(Succeed())

		By("a Secret the manifest now names is missing: Distributed False, and the works stay as they were")
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.ManifestWorkTemplate = framework.MakePMW("", "").Manifest(widget(map[string]any{"configName": "settings", "secretName": "creds"})).
				Obj().Spec.ManifestWorkTemplate
		})
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonDependencyNotFound))
			g.Expect(c.Message).To(SatisfyAll(ContainSubstring("Secret creds"), ContainSubstring("Widget."+group+" shop/gadget"), ContainSubstring(ns)))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster(delivered{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "2"}})))
			for _, w := range fw.WorksOf(g, pmw) {
				g.Expect(string(w.Spec.Workload.Manifests[0].Raw)).NotTo(ContainSubstring("secretName"), "the works keep the earlier template")
			}
		}, "2s", interval).Should(Succeed())

		By("creating the Secret delivers it and the new template")
		Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: ns},
			Data: map[string][]byte{"password": []byte("hunter2")}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster(
				delivered{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "2"}},
				delivered{ID: "Secret shop/creds", Data: map[string]any{"password": "aHVudGVyMg=="}},
			)))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())
	})

	It("applies an override without manifests to the template's manifests, not to the dependencies delivered beside them", func() {
		pmw := framework.MakePMW("gadget", ns).Placement("p").Manifest(widget(map[string]any{"configName": "settings"})).Obj()
		pmw.Spec.PropagateDependencies = true
		pmw.Spec.Overrides = []workv1alpha1.ClusterOverride{{Name: "size", Patches: []workv1alpha1.OverridePatch{
			{Op: workv1alpha1.OverridePatchAdd, Path: "/spec/size", Value: &workv1alpha1.JSON{Raw: []byte(`"large"`)}}}}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster(delivered{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "1"}})))
			for _, w := range fw.WorksOf(g, pmw) {
				g.Expect(string(w.Spec.Workload.Manifests[0].Raw)).To(ContainSubstring(`"size":"large"`), "the Widget of %s", w.Namespace)
			}
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())
	})

	It("carries to a cluster whose override renames the ConfigMap the one it names, and to the others the template's", func() {
		pmw := framework.MakePMW("gadget", ns).Placement("p").Manifest(widget(map[string]any{"configName": "settings"})).Obj()
		pmw.Spec.PropagateDependencies = true
		pmw.Spec.Overrides = []workv1alpha1.ClusterOverride{{Name: "eu", Clusters: &workv1alpha1.OverrideClusters{Names: []string{clusters[0]}},
			Patches: []workv1alpha1.OverridePatch{{Op: workv1alpha1.OverridePatchReplace, Path: "/spec/configName", Value: &workv1alpha1.JSON{Raw: []byte(`"settings-eu"`)}}}}}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		By("the ConfigMap the override names is missing: DependencyNotFound names it and the cluster, which gets no work; the other cluster is served")
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonDependencyNotFound))
			g.Expect(c.Message).To(SatisfyAll(ContainSubstring("ConfigMap settings-eu"), ContainSubstring("on 1 cluster ("+clusters[0]+")"), ContainSubstring(ns),
				ContainSubstring("the other clusters are served")))
			g.Expect(carried(g, pmw)).To(Equal(map[string][]delivered{
				clusters[1]: {{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "1"}}},
			}))
			stalled := fw.Condition(g, pmw, workv1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionFalse), stalled.Message)
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(fw.WorksByCluster(g, pmw)).NotTo(HaveKey(clusters[0]))
		}, "1s", interval).Should(Succeed())

		By("once it exists, that cluster's work carries it in the Widget's namespace, the other's the template's")
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-eu", Namespace: ns},
			Data: map[string]string{"level": "eu"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(map[string][]delivered{
				clusters[0]: {{ID: "ConfigMap shop/settings-eu", Data: map[string]any{"level": "eu"}}},
				clusters[1]: {{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "1"}}},
			}))
			g.Expect(string(fw.WorksByCluster(g, pmw)[clusters[0]].Spec.Workload.Manifests[0].Raw)).To(ContainSubstring(`"configName":"settings-eu"`))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())

		By("status.manifests lists each ConfigMap, counted on the one cluster that carries it")
		Eventually(func(g Gomega) {
			counts := map[string]int32{}
			for _, m := range fw.Current(g, pmw).Status.Manifests {
				counts[m.Kind+" "+m.Namespace+"/"+m.Name] = m.Healthy + m.Progressing + m.Degraded
			}
			g.Expect(counts).To(Equal(map[string]int32{"Widget shop/gadget": 2, "ConfigMap shop/settings": 1, "ConfigMap shop/settings-eu": 1}))
		}, timeout, interval).Should(Succeed())

		By("settings-eu is deleted and the template changes: the other cluster gets the new template, the overridden one keeps its work as it is")
		before := fw.WorksByCluster(Default, pmw)[clusters[0]]
		Expect(k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-eu", Namespace: ns}})).To(Succeed())
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.ManifestWorkTemplate = framework.MakePMW("", "").Manifest(widget(map[string]any{"configName": "settings", "size": "large"})).
				Obj().Spec.ManifestWorkTemplate
		})
		Eventually(func(g Gomega) {
			works := fw.WorksByCluster(g, pmw)
			g.Expect(string(works[clusters[1]].Spec.Workload.Manifests[0].Raw)).To(ContainSubstring(`"size":"large"`))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonDependencyNotFound), c.Message)
			g.Expect(c.Message).To(SatisfyAll(ContainSubstring("ConfigMap settings-eu"), ContainSubstring("on 1 cluster ("+clusters[0]+")")))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			w := fw.WorksByCluster(g, pmw)[clusters[0]]
			g.Expect(w.Spec).To(Equal(before.Spec), "the overridden cluster's work is kept as it is")
			g.Expect(w.Annotations[workv1alpha1.AnnotationTemplateHash]).To(Equal(before.Annotations[workv1alpha1.AnnotationTemplateHash]))
		}, "1s", interval).Should(Succeed())

		By("creating settings-eu again lets the new template through to the overridden cluster")
		Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-eu", Namespace: ns},
			Data: map[string]string{"level": "eu-2"}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(map[string][]delivered{
				clusters[0]: {{ID: "ConfigMap shop/settings-eu", Data: map[string]any{"level": "eu-2"}}},
				clusters[1]: {{ID: "ConfigMap shop/settings", Data: map[string]any{"level": "1"}}},
			}))
			g.Expect(string(fw.WorksByCluster(g, pmw)[clusters[0]].Spec.Workload.Manifests[0].Raw)).To(SatisfyAll(
				ContainSubstring(`"configName":"settings-eu"`), ContainSubstring(`"size":"large"`)))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())
	})

	It("carries nothing without propagateDependencies", func() {
		pmw := framework.MakePMW("gadget", ns).Placement("p").Manifest(widget(map[string]any{"configName": "settings", "secretName": "absent"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(carried(g, pmw)).To(Equal(everyCluster()))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		}, timeout, interval).Should(Succeed())
	})
})
