package integration

import (
	"context"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/kubectlpmw"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

// `kubectl pmw rollout` against the hub and the manager, as a user runs it.
var _ = Describe("kubectl pmw rollout", func() {
	var (
		ctx   context.Context
		ns    string
		admin string
	)
	F := metav1.ConditionFalse

	BeforeEach(func() {
		ctx = context.Background()
		ns = fw.NewNamespace("clirollout")
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		admin = fw.Kubeconfig("rollout-admin-"+ns, "system:masters")
	})

	// stored reads a PlacementManifestWork as stored, whether or not the manager caught up with it.
	stored := func(pmw *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
		got := &workv1alpha1.PlacementManifestWork{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), got)).To(Succeed())
		return got
	}

	run := func(args ...string) (stdout, stderr string, code int) {
		return suite.Plugin(ctx, append(args, "-n", ns, "--kubeconfig", admin)...)
	}

	manifests := func(v string) []workv1.Manifest {
		return framework.MakePMW("x", ns).Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": v})).Obj().
			Spec.ManifestWorkTemplate.Workload.Manifests
	}

	It("lists the revisions, prints one, undoes to revision 1 (renumbered by the manager) and waits for it", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		pmw.Annotations = map[string]string{workv1alpha1.AnnotationChangeCause: "first cut"}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		first := rolledOut(ctx, pmw, clusters, 1)
		for i, v := range []string{"2", "3"} {
			fw.UpdatePMW(pmw, func(cur *workv1alpha1.PlacementManifestWork) {
				cur.Spec.ManifestWorkTemplate.Workload.Manifests = manifests(v)
				cur.Annotations[workv1alpha1.AnnotationChangeCause] = "v" + v
			})
			rolledOut(ctx, pmw, clusters, int64(i+2))
		}

		By("history lists the three revisions, the current one with the PMW's change cause")
		stdout, stderr, code := run("rollout", "history", "web")
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		GinkgoWriter.Print(stdout)
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		Expect(lines).To(HaveLen(5))
		Expect(lines[0]).To(Equal("placementmanifestwork/web"))
		Expect(cellsOf(lines[1])).To(Equal([]string{"REVISION", "NAME", "CREATED", "STATUS", "CHANGE-CAUSE"}))
		Expect(cellsOf(lines[2])[0:2]).To(Equal([]string{"1", first}))
		Expect(cellsOf(lines[2])[3:]).To(Equal([]string{"-", "first", "cut"}), "the manager copied the PMW's change cause onto each revision")
		Expect(cellsOf(lines[3])[3:]).To(Equal([]string{"-", "v2"}))
		Expect(cellsOf(lines[4])[0]).To(Equal("3"))
		Expect(cellsOf(lines[4])[3:]).To(Equal([]string{"current,completed", "v3"}))

		stdout, _, code = run("rollout", "history", "web", "-o", "json")
		Expect(code).To(Equal(kubectlpmw.ExitOK))
		var history kubectlpmw.History
		Expect(json.Unmarshal([]byte(stdout), &history)).To(Succeed())
		Expect(history.Revisions).To(HaveLen(3))
		Expect(history.Revisions[2].Current).To(BeTrue())

		By("--revision 1 prints that revision's template")
		stdout, _, code = run("rollout", "history", "web", "--revision", "1")
		Expect(code).To(Equal(kubectlpmw.ExitOK))
		var tmpl workv1alpha1.PlacementManifestWorkSpec
		Expect(yaml.Unmarshal([]byte(stdout), &tmpl)).To(Succeed())
		Expect(tmpl.ManifestWorkTemplate.Workload.Manifests).To(HaveLen(1))
		Expect(string(tmpl.ManifestWorkTemplate.Workload.Manifests[0].Raw)).To(ContainSubstring(`"data":{"v":"1"}`))

		By("undo refuses the current revision and one that does not exist")
		stdout, stderr, code = run("rollout", "undo", "web", "--to-revision", "3")
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(Equal("Error: placementmanifestwork/web is already at revision 3\n"))
		_, stderr, code = run("rollout", "undo", "web", "--to-revision", "9")
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stderr).To(Equal("Error: placementmanifestwork/web has no revision 9; its revisions are 1, 2, 3\n"))

		By("undo --to-revision 1 writes revision 1's template into the spec; the manager makes it current again as 4")
		generation := fw.Current(Default, pmw).Generation
		stdout, stderr, code = run("rollout", "undo", "web", "--to-revision", "1")
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stdout).To(Equal("placementmanifestwork/web rolled back to revision 1\n"))
		cur := stored(pmw)
		Expect(cur.Generation).To(Equal(generation + 1))
		Expect(cur.Spec.ManifestWorkTemplate.Workload.Manifests).To(Equal(manifests("1")))
		Expect(cur.Spec.PlacementRef).To(Equal(&workv1alpha1.LocalPlacementReference{Name: "p"}), "the rest of the spec is kept")
		Expect(cur.Annotations).To(HaveKeyWithValue(workv1alpha1.AnnotationChangeCause, "first cut"), "revision 1's change cause")
		data, err := revision.Data(cur)
		Expect(err).NotTo(HaveOccurred())
		Expect(revision.Name(cur.Name, data)).To(Equal(first), "the spec's template is revision 1's, byte for byte")
		Expect(rolledOut(ctx, pmw, clusters, 4)).To(Equal(first))

		By("status exits 0 once the revision is rolled out and every cluster is available")
		stdout, stderr, code = run("rollout", "status", "web", "--timeout", "30s")
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stdout: %s\nstderr: %s", stdout, stderr)
		Expect(stdout).To(HaveSuffix("placementmanifestwork/web successfully rolled out (revision 4) to 2 clusters\n"))

		By("undo without --to-revision goes to the revision before the current one")
		stdout, stderr, code = run("rollout", "undo", "web")
		Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
		Expect(stdout).To(Equal("placementmanifestwork/web rolled back to revision 3\n"))
		Expect(stored(pmw).Spec.ManifestWorkTemplate.Workload.Manifests).To(Equal(manifests("3")))
		rolledOut(ctx, pmw, clusters, 5)

		fw.DeletePMW(pmw, timeout)
	})

	It("status waits, exits 3 when --timeout passes first or the rollout fails, and prints once with --watch=false", func() {
		clusters := fw.NewClusters(2)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		pmw.Spec.RolloutStrategy = &clusterv1alpha1.RolloutStrategy{
			Type:        clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)},
		}
		Expect(k8s.Create(ctx, pmw)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(fw.WorkClusters(g, pmw)).NotTo(BeEmpty()) }, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(fw.Current(g, pmw).Status.ObservedGeneration).To(Equal(fw.Current(g, pmw).Generation))
		}, timeout, interval).Should(Succeed())

		By("a rollout that does not complete: exit 3 after --timeout, with the progress on stdout")
		stdout, stderr, code := run("rollout", "status", "web", "--timeout", "2s")
		Expect(code).To(Equal(kubectlpmw.ExitNotReady), "stdout: %s", stdout)
		Expect(stdout).To(ContainSubstring("Waiting for the rollout of placementmanifestwork/web"))
		Expect(stderr).To(Equal("Error: timed out after 2s waiting for the rollout of placementmanifestwork/web\n"))

		stdout, stderr, code = run("rollout", "status", "web", "--watch=false")
		Expect(code).To(Equal(kubectlpmw.ExitNotReady))
		Expect(strings.Count(stdout, "\n")).To(Equal(1), stdout)
		Expect(stderr).To(BeEmpty())

		By("the first cluster fails beyond maxFailures: exit 3 at once, saying why")
		first := fw.WorkClusters(Default, pmw)[0]
		fw.AgentReports(pmw, first, map[string]metav1.ConditionStatus{workv1.WorkApplied: F})
		Eventually(func(g Gomega) {
			_, stderr, code := run("rollout", "status", "web", "--timeout", "20s")
			g.Expect(code).To(Equal(kubectlpmw.ExitNotReady))
			g.Expect(stderr).To(HavePrefix("Error: the rollout of placementmanifestwork/web (revision 1) failed: RolloutMaxFailures: "))
			g.Expect(strings.Count(stderr, "\n")).To(Equal(1))
		}, timeout, interval).Should(Succeed())

		By("a name that does not exist is bad input")
		_, stderr, code = run("rollout", "status", "nope")
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stderr).To(ContainSubstring("PlacementManifestWork " + ns + "/nope not found"))
	})

	It("pause and resume set and remove spec.paused; retry needs a failed revision", func() {
		clusters := fw.NewClusters(1)
		fw.Decide(ns, "p", "p-decision-1", clusters...)
		pmw := framework.MakePMW("web", ns).Placement("p").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		// spec.paused of the PMW as stored, read without the Go type.
		paused := func() (bool, bool) {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pmw), u)).To(Succeed())
			p, found, err := unstructured.NestedBool(u.Object, "spec", "paused")
			Expect(err).NotTo(HaveOccurred())
			return p, found
		}
		// Whether the hub's CRD has spec.paused: the API server drops unknown fields without an error.
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "placementmanifestworks." + workv1alpha1.GroupVersion.Group}, crd)).To(Succeed())
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		Expect(versions).NotTo(BeEmpty())
		_, knowsPaused, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "paused")

		stdout, stderr, code := run("rollout", "pause", "web")
		if !knowsPaused {
			By("a CRD without spec.paused: pause says nothing was paused (exit 2)")
			Expect(code).To(Equal(kubectlpmw.ExitHub))
			Expect(stderr).To(Equal("Error: the hub's PlacementManifestWork CRD has no spec.paused, so nothing was paused: upgrade the CRD and the manager (docs/install.md)\n"))
			Expect(paused()).To(BeFalse())
		} else {
			By("pause sets spec.paused, once")
			Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
			Expect(stdout).To(Equal("placementmanifestwork/web paused\n"))
			p, found := paused()
			Expect(found && p).To(BeTrue())
			stdout, _, code = run("rollout", "pause", "web")
			Expect(code).To(Equal(kubectlpmw.ExitOK))
			Expect(stdout).To(Equal("placementmanifestwork/web already paused\n"))

			By("resume removes it")
			stdout, stderr, code = run("rollout", "resume", "web")
			Expect(code).To(Equal(kubectlpmw.ExitOK), "stderr: %s", stderr)
			Expect(stdout).To(Equal("placementmanifestwork/web resumed\n"))
			_, found = paused()
			Expect(found).To(BeFalse())
		}
		stdout, _, code = run("rollout", "resume", "web")
		Expect(code).To(Equal(kubectlpmw.ExitOK))
		Expect(stdout).To(Equal("placementmanifestwork/web not paused\n"))

		By("retry without a failed revision is refused")
		stdout, stderr, code = run("rollout", "retry", "web")
		Expect(code).To(Equal(kubectlpmw.ExitUsage))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(Equal("Error: nothing to retry: no failed revision (placementmanifestwork/web has no status.failedRevision)\n"))
	})
})
