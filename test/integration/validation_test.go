package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/yamlobjects"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("PlacementManifestWork schema validation", func() {
	split := func(s *workv1alpha1.SplitStrategy) workv1alpha1.DistributionStrategy {
		return workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit, Split: s}
	}
	base := func() *framework.PMWWrapper {
		return framework.MakePMW("v", "default").Placement("p").Manifest(framework.Deployment("web", "default", 3))
	}

	DescribeTable("rejects invalid objects with a message that says what is wrong",
		func(pmw *workv1alpha1.PlacementManifestWork, message string) {
			pmw.Namespace = fw.NewNamespace("valid")
			err := k8s.Create(context.Background(), pmw, client.DryRunAll)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("unknown distribution type",
			base().Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: "Copy"}).Obj(),
			`Unsupported value: "Copy"`),
		Entry("Split without split",
			base().Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit}).Obj(),
			"split must be set when type is Split, and only then"),
		Entry("Replicate with split",
			base().Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionReplicate,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj(),
			"split must be set when type is Split, and only then"),
		Entry("unknown split type",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: "Random"})).Obj(),
			`Unsupported value: "Random"`),
		Entry("min above max",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance,
				LimitRange: &workv1alpha1.LimitRange{Min: ptr.To[int32](3), Max: ptr.To[int32](2)}})).Obj(),
			"limitRange.min must not be greater than limitRange.max"),
		Entry("negative min",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance,
				LimitRange: &workv1alpha1.LimitRange{Min: ptr.To[int32](-1)}})).Obj(),
			"should be greater than or equal to 0"),
		Entry("field path without a leading dot",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance, FieldPath: "spec.replicas"})).Obj(),
			"spec.distributionStrategy[0].split.fieldPath"),
		Entry("Weighted without weights",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted})).Obj(),
			"weights must be set when split.type is Weighted, and only then"),
		Entry("weight with both a name and a selector",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted,
				Weights: []workv1alpha1.ClusterWeight{{ClusterName: "a", ClusterSelector: &metav1.LabelSelector{}, Weight: 1}}})).Obj(),
			"set exactly one of clusterName and clusterSelector"),
		Entry("Score without score",
			base().Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitScore})).Obj(),
			"score must be set when split.type is Score, and only then"),
		Entry("two entries for the same manifest",
			base().Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionReplicate}).
				Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "Deployment", Type: workv1alpha1.DistributionReplicate}).Obj(),
			"two distributionStrategy entries name the same manifest"),
		Entry("a name too long for the generated Placement",
			framework.MakePMW(strings.Repeat("a", 64), "default").Manifest(framework.ConfigMap("c", "default", nil)).Obj(),
			"use a name of at most 63 characters or set spec.placementRef"),
		Entry("a placementRef name too long for OCM's decision label",
			framework.MakePMW("v", "default").Placement(strings.Repeat("a", 64)).Obj(),
			"spec.placementRef.name"),
	)

	It("accepts entries for different manifests of the same name", func() {
		pmw := base().Manifest(framework.ConfigMap("web", "default", nil)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Kind: "ConfigMap", Type: workv1alpha1.DistributionReplicate}).
			Strategy(split(&workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance})).Obj()
		pmw.Spec.DistributionStrategy[1].Kind = "Deployment"
		pmw.Namespace = fw.NewNamespace("valid")
		Expect(k8s.Create(context.Background(), pmw, client.DryRunAll)).To(Succeed())
	})

	It("accepts every sample in config/samples", func() {
		ns := fw.NewNamespace("samples")
		files, err := filepath.Glob(filepath.Join(envhub.RepoRoot(), "config", "samples", "work_*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(files).NotTo(BeEmpty())
		for _, f := range files {
			data, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			objs, err := yamlobjects.DecodeBytes(data, f)
			Expect(err).NotTo(HaveOccurred())
			for _, obj := range objs {
				obj.SetNamespace(ns)
				Expect(k8s.Create(context.Background(), obj, client.DryRunAll)).To(Succeed(), "%s: %s", filepath.Base(f), obj.GetName())
			}
		}
	})
})
