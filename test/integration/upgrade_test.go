package integration

import (
	"context"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// Objects stored before the CRD refused undecodable values (an upgrade) can still hold them. One such object
// must not stop the manager from listing, and so reconciling, every other PlacementManifestWork.
var _ = Describe("A spec stored before the CRD refused it", func() {
	It("decodes with its problem named and blocks no other PlacementManifestWork", func() {
		ctx := context.Background()
		ns := fw.NewNamespace("upgrade")

		By("installing a CRD that admits any moveStrategy.timeout, as the CRD before this release did")
		strict := pmwCRD(ctx)
		loose := strict.DeepCopy()
		timeoutSchema := []string{"spec", "versions", "0", "schema", "openAPIV3Schema", "properties", "spec", "properties",
			"moveStrategy", "properties", "timeout"}
		Expect(unstructuredAt(loose.Object, timeoutSchema)).To(HaveKey("x-kubernetes-validations"))
		delete(unstructuredAt(loose.Object, timeoutSchema), "x-kubernetes-validations")
		Expect(k8s.Update(ctx, loose)).To(Succeed())
		DeferCleanup(func() { restoreCRD(ctx, strict) })

		clusters := fw.NewClusters(2)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		bad := framework.MakePMW("bad", ns).Placement("p").Manifest(framework.ConfigMap("c", ns, nil)).Obj()
		bad.Spec.MoveStrategy = &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveMakeBeforeBreak}
		// The spec the user sets later: another template, and a timeout the old CRD admitted.
		badRaw := toUnstructured(framework.MakePMW("bad", ns).Placement("p").
			Manifest(framework.ConfigMap("c", ns, map[string]string{"v": "changed"})).Obj())
		Expect(k8s.Create(ctx, bad)).To(Succeed())
		delivered := map[string]types.UID{}
		Eventually(func(g Gomega) {
			for c, w := range fw.WorksByCluster(g, bad) {
				delivered[c] = w.UID
			}
			g.Expect(delivered).To(HaveLen(2))
		}, timeout, interval).Should(Succeed())
		Expect(unstructured.SetNestedField(badRaw.Object, map[string]any{"type": "MakeBeforeBreak", "timeout": "1d"}, "spec", "moveStrategy")).To(Succeed())
		Eventually(func() error {
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(bad), cur); err != nil {
				return err
			}
			cur.Object["spec"] = badRaw.Object["spec"]
			return k8s.Update(ctx, cur)
		}, timeout, interval).Should(Succeed())
		good := framework.MakePMW("good", ns).Placement("p").Manifest(framework.ConfigMap("c", ns, nil)).Obj()
		Expect(k8s.Create(ctx, good)).To(Succeed())

		By("restoring the strict CRD: the stored value stays")
		restoreCRD(ctx, strict)
		Eventually(func() error {
			again := badRaw.DeepCopy()
			again.SetName("bad-again")
			return k8s.Create(ctx, again, client.DryRunAll)
		}, timeout, interval).Should(MatchError(ContainSubstring("moveStrategy.timeout must be a non-negative duration")))

		By("listing through the manager's scheme: both decode, and the bad one names its problem")
		list := &workv1alpha1.PlacementManifestWorkList{}
		Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		problems := map[string][]string{}
		for _, p := range list.Items {
			problems[p.Name] = p.Spec.DecodeProblems()
		}
		Expect(problems).To(Equal(map[string][]string{
			"bad":  {`spec.moveStrategy.timeout: time: unknown unit "d" in duration "1d"`},
			"good": nil,
		}))

		By("the manager's cache lists both, and the good one is reconciled")
		Eventually(func(g Gomega) {
			cached := &workv1alpha1.PlacementManifestWorkList{}
			g.Expect(mgr.GetCache().List(ctx, cached, client.InNamespace(ns))).To(Succeed())
			g.Expect(cached.Items).To(HaveLen(2))
			fw.Current(g, good) // its status describes its current generation
		}, timeout, interval).Should(Succeed())

		By("writing the bad one's metadata and status is still admitted, and keeps its stored spec")
		got := &workv1alpha1.PlacementManifestWork{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bad), got)).To(Succeed())
		patch := client.MergeFrom(got.DeepCopy())
		got.Labels = map[string]string{"touched": "yes"}
		Expect(k8s.Patch(ctx, got, patch)).To(Succeed())
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(bad), got); err != nil {
				return err
			}
			got.Status.Placement = "written by the test"
			return k8s.Status().Update(ctx, got) // a conflict with the manager's own status write retries
		}, timeout, interval).Should(Succeed())
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bad), stored)).To(Succeed())
		stillBad, _, err := unstructured.NestedString(stored.Object, "spec", "moveStrategy", "timeout")
		Expect(err).NotTo(HaveOccurred())
		Expect(stillBad).To(Equal("1d"))

		By("the manager reports the bad one's problem on its own status and keeps its delivered works as they were")
		Eventually(func(g Gomega) {
			c := fw.Condition(g, bad, workv1alpha1.ConditionStalled)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(workv1alpha1.ReasonInvalidSpec))
			g.Expect(c.Message).To(ContainSubstring(`spec.moveStrategy.timeout: time: unknown unit "d"`))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			works := fw.WorksByCluster(g, bad)
			g.Expect(works).To(HaveLen(2))
			for c, w := range works {
				g.Expect(w.UID).To(Equal(delivered[c]))
				g.Expect(w.Generation).To(BeEquivalentTo(1), "the template change is not written from a spec the manager cannot read")
			}
		}, "2s", interval).Should(Succeed())

		Expect(k8s.Delete(ctx, bad)).To(Succeed())
		Expect(k8s.Delete(ctx, good)).To(Succeed())
	})
})

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// pmwCRD reads the PlacementManifestWork CRD from the API server.
func pmwCRD(ctx context.Context) *unstructured.Unstructured {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	Expect(k8s.Get(ctx, client.ObjectKey{Name: "placementmanifestworks." + workv1alpha1.GroupVersion.Group}, crd)).To(Succeed())
	return crd
}

// restoreCRD puts back the spec of the CRD as it was.
func restoreCRD(ctx context.Context, want *unstructured.Unstructured) {
	Eventually(func() error {
		cur := pmwCRD(ctx)
		cur.Object["spec"] = want.DeepCopy().Object["spec"]
		return k8s.Update(ctx, cur)
	}, timeout, interval).Should(Succeed())
}

// unstructuredAt returns the map at path, where a number indexes a list.
func unstructuredAt(obj map[string]any, path []string) map[string]any {
	var cur any = obj
	for _, k := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			Expect(err).NotTo(HaveOccurred())
			cur = c[i]
		}
	}
	m, ok := cur.(map[string]any)
	Expect(ok).To(BeTrue(), "no object at %v", path)
	return m
}

func toUnstructured(pmw *workv1alpha1.PlacementManifestWork) *unstructured.Unstructured {
	pmw.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pmw)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: raw}
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}
