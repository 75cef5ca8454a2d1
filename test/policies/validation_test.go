package policies

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

const splitFieldsPolicy = "placementmanifestwork-split-fields"

// splitWeb is a PlacementManifestWork whose Deployment web is split, with the given strategy's kind, group and
// fieldPath, and the overrides given.
func splitWeb(ns string, strategy workv1alpha1.DistributionStrategy, overrides ...workv1alpha1.ClusterOverride) *workv1alpha1.PlacementManifestWork {
	strategy.Name, strategy.Namespace, strategy.Type = "web", "default", workv1alpha1.DistributionSplit
	if strategy.Split == nil {
		strategy.Split = &workv1alpha1.SplitStrategy{}
	}
	return framework.MakePMW("web", ns).Placement("p").
		Manifest(framework.Deployment("web", "default", 4)).
		Manifest(framework.Deployment("api", "default", 2)).
		Strategy(strategy).Overrides(overrides...).Obj()
}

func patchOverride(name string, manifests []workv1alpha1.OverrideManifest, op workv1alpha1.OverridePatchOp, path string) workv1alpha1.ClusterOverride {
	p := workv1alpha1.OverridePatch{Op: op, Path: path}
	if op != workv1alpha1.OverridePatchRemove {
		raw, _ := json.Marshal(3)
		p.Value = &workv1alpha1.JSON{Raw: raw}
	}
	return workv1alpha1.ClusterOverride{Name: name, Manifests: manifests, Patches: []workv1alpha1.OverridePatch{p}}
}

var _ = Describe("Validation policy in config/validation", func() {
	var ns string
	BeforeEach(func() {
		// Only the validation policy applies here: the namespace is exempt from config/policies' checks.
		ns = fw.NewNamespaceWithLabels("split", map[string]string{exemptExecutor: "exempt", exemptKinds: "exempt"})
	})
	deployment := workv1alpha1.DistributionStrategy{Kind: "Deployment"}

	DescribeTable("refuses an override patch that touches the split field of a Split manifest it selects, naming it",
		func(strategy workv1alpha1.DistributionStrategy, o workv1alpha1.ClusterOverride, want string) {
			refused(admin, splitWeb(ns, strategy, o), splitFieldsPolicy, want)
		},
		Entry("a Deployment's replicas, every manifest selected", deployment,
			patchOverride("more", nil, workv1alpha1.OverridePatchReplace, "/spec/replicas"),
			"override more patches /spec/replicas, the split field /spec/replicas of Deployment default/web: the split sets that field per cluster"),
		Entry("the spec above it, the manifest selected by name and kind", deployment,
			patchOverride("spec", []workv1alpha1.OverrideManifest{{Name: "web", Kind: "Deployment"}}, workv1alpha1.OverridePatchAdd, "/spec"),
			"override spec patches /spec, the split field /spec/replicas of Deployment default/web"),
		Entry("a fieldPath set on a kind the policy does not know", workv1alpha1.DistributionStrategy{Split: &workv1alpha1.SplitStrategy{FieldPath: ".spec.workers.count"}},
			patchOverride("workers", []workv1alpha1.OverrideManifest{{Namespace: "default"}}, workv1alpha1.OverridePatchRemove, "/spec/workers"),
			"override workers patches /spec/workers, the split field /spec/workers/count of manifest default/web"),
		Entry("a Job's parallelism", workv1alpha1.DistributionStrategy{Kind: "Job", Group: "batch"},
			patchOverride("jobs", []workv1alpha1.OverrideManifest{{Kind: "Job"}}, workv1alpha1.OverridePatchReplace, "/spec/parallelism"),
			"the split field /spec/parallelism of Job default/web"),
	)

	DescribeTable("admits overrides that leave the split fields to the split",
		func(strategy workv1alpha1.DistributionStrategy, o workv1alpha1.ClusterOverride) {
			accepted(admin, splitWeb(ns, strategy, o))
		},
		Entry("a patch beside the split field", deployment,
			patchOverride("env", nil, workv1alpha1.OverridePatchAdd, "/spec/minReadySeconds")),
		Entry("replicas of a manifest the override does not select", deployment,
			patchOverride("api", []workv1alpha1.OverrideManifest{{Name: "api"}}, workv1alpha1.OverridePatchReplace, "/spec/replicas")),
		Entry("a field whose name starts like the split field's", workv1alpha1.DistributionStrategy{Split: &workv1alpha1.SplitStrategy{FieldPath: ".spec.replicas"}},
			patchOverride("similar", nil, workv1alpha1.OverridePatchAdd, "/spec/replicasHint")),
		Entry("a kind the distribution entry leaves open (the manager checks it with the interpreters)", workv1alpha1.DistributionStrategy{},
			patchOverride("more", nil, workv1alpha1.OverridePatchReplace, "/spec/replicas")),
		Entry("an override whose kind the distribution entry does not name", workv1alpha1.DistributionStrategy{Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}},
			patchOverride("deployments", []workv1alpha1.OverrideManifest{{Kind: "Deployment"}}, workv1alpha1.OverridePatchReplace, "/spec/replicas")),
	)

	It("checks updates of the spec too", func(ctx SpecContext) {
		pmw := splitWeb(ns, deployment)
		Eventually(func() error { return admin.Create(ctx, pmw) }, timeout, interval).Should(Succeed())
		pmw.Spec.Overrides = []workv1alpha1.ClusterOverride{patchOverride("more", nil, workv1alpha1.OverridePatchReplace, "/spec/replicas")}
		pmw.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
		err := admin.Update(ctx, pmw)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("override more patches /spec/replicas"))
	})
})
