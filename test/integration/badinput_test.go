package integration

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// Runtime problems that the schema cannot catch: each is reported on a condition with a reason and a
// message, and the last good ManifestWorks stay. docs/bad-input.md lists them with these tests.
var _ = Describe("Bad input", func() {
	var (
		ctx context.Context
		ns  string
	)

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("bad")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
	})

	workData := func(g Gomega, pmw *workv1alpha1.PlacementManifestWork, cluster string) string {
		w := &workv1.ManifestWork{}
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: cluster, Name: manifestwork.WorkName(manifestwork.Owner(pmw))}, w)).To(Succeed())
		return string(w.Spec.Workload.Manifests[0].Raw)
	}

	replaceManifests := func(pmw *workv1alpha1.PlacementManifestWork, manifests ...map[string]any) {
		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			w := framework.MakePMW("x", ns)
			for _, m := range manifests {
				w.Manifest(m)
			}
			cur.Spec.ManifestWorkTemplate.Workload.Manifests = w.Obj().Spec.ManifestWorkTemplate.Workload.Manifests
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	It("rejects a manifest without apiVersion or kind at admission", func() {
		pmw := framework.MakePMW("nokind", ns).Placement("p").Manifest(map[string]any{"metadata": map[string]any{"name": "x"}}).Obj()
		err := k8s.Create(ctx, pmw, client.DryRunAll)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(Or(ContainSubstring("kind"), ContainSubstring("apiVersion")))
	})

	It("keeps the delivered works when a manifest becomes invalid (no name), and says which", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("noname", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "good"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(workData(g, pmw, clusters[0])).To(ContainSubstring("good")) }, timeout, interval).Should(Succeed())

		replaceManifests(pmw, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"namespace": "default"}})
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInvalidTemplate))
			g.Expect(c.Message).To(ContainSubstring("manifest 0 (ConfigMap) has no metadata.name"))
			g.Expect(fw.Condition(g, pmw, workv1alpha1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(workData(g, pmw, clusters[0])).To(ContainSubstring("good")) }, "1s", interval).Should(Succeed())
	})

	It("reports a distributionStrategy entry that matches no manifest, or several", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("entries", ns).Placement("p").
			Manifest(framework.ConfigMap("web", "default", nil)).Manifest(framework.Deployment("web", "default", 2)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionReplicate}).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonStrategyMatchesManyManifests))
			g.Expect(c.Message).To(ContainSubstring("matches 2 manifests"))
		}, timeout, interval).Should(Succeed())

		Eventually(func(g Gomega) {
			cur := &workv1alpha1.PlacementManifestWork{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
			cur.Spec.DistributionStrategy[0].Name = "api"
			g.Expect(k8s.Update(ctx, cur)).To(Succeed())
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionDistributed)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonStrategyMatchesNoManifest))
			g.Expect(c.Message).To(ContainSubstring("default/api"))
		}, timeout, interval).Should(Succeed())
	})

	It("keeps the delivered works when the generated ManifestWork would exceed OCM's size limit", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("big", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "small"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(workData(g, pmw, clusters[0])).To(ContainSubstring("small")) }, timeout, interval).Should(Succeed())

		replaceManifests(pmw, framework.ConfigMap("cfg", "default", map[string]string{"v": strings.Repeat("x", 600*1024)}))
		Eventually(func(g Gomega) {
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonManifestWorkTooLarge))
			g.Expect(c.Message).To(ContainSubstring(clusters[0]))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) { g.Expect(workData(g, pmw, clusters[0])).To(ContainSubstring("small")) }, "1s", interval).Should(Succeed())
	})

	It("reports works refused by admission and a decided cluster without a namespace, and serves the others", func() {
		clusters := fw.NewClusters(2)
		locked := clusters[1]
		nsObj := &corev1.Namespace{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: locked}, nsObj)).To(Succeed())
		nsObj.Labels["pmw-test-locked"] = ns
		Expect(k8s.Update(ctx, nsObj)).To(Succeed())
		policy := &admissionv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "deny-works-" + ns},
			Spec: admissionv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionv1.Fail),
				MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
						Rule:       admissionv1.Rule{APIGroups: []string{"work.open-cluster-management.io"}, APIVersions: []string{"v1"}, Resources: []string{"manifestworks"}},
					},
				}}},
				Validations: []admissionv1.Validation{{Expression: "false", Message: "this cluster accepts no ManifestWorks"}},
			},
		}
		Expect(k8s.Create(ctx, policy)).To(Succeed())
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deny-works-" + ns},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
				MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"pmw-test-locked": ns},
				}},
			},
		}
		Expect(k8s.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(k8s.Delete(ctx, binding)).To(Succeed())
			Expect(k8s.Delete(ctx, policy)).To(Succeed())
		})
		// The policy takes a moment to load: wait until it denies.
		Eventually(func() error {
			probe := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: locked}}
			return k8s.Create(ctx, probe, client.DryRunAll)
		}, timeout, interval).Should(MatchError(ContainSubstring("accepts no ManifestWorks")))

		missing := "cluster-without-namespace-" + ns
		fw.Decide(ns, "p", "p-decision-1", clusters[0], locked, missing)
		pmw := framework.MakePMW("refused", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(workData(g, pmw, clusters[0])).To(ContainSubstring(`"v":"1"`))
			c := fw.Condition(g, pmw, workv1alpha1.ConditionManifestworkApplied)
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonWriteFailed))
			g.Expect(c.Message).To(And(ContainSubstring(locked), ContainSubstring(missing), ContainSubstring("2 ManifestWork writes failed")))
		}, timeout, interval).Should(Succeed())
	})
})
