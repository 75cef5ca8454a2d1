//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/test/e2e/stack"
)

// Transparent mode (issue #22, docs/transparent.md) end to end: the stack's fleet API server runs no
// controllers at all, the manager runs with --fleet-kubeconfig pointing at it, and everything the user does
// there is a real kubectl command. An unmodified Deployment manifest (testdata/transparent/web.yaml, 4
// replicas) applied to a namespace opted in with the placement label runs 2 and 2 on the two spokes of the
// Placement "pair"; `kubectl rollout status` and `kubectl wait --for=condition=Available` against the fleet API
// server succeed from the status the manager writes back. Relabelling the namespace with the Placement "single"
// moves the 4 replicas to the third spoke, and the spokes' Deployments, read directly every 150 ms, never have
// 0 available replicas between them until the old spokes' Deployments are gone.
var _ = Describe("Transparent mode: kubectl against a fleet API server", Ordered, func() {
	const (
		app      = "web"
		image    = "nginx:1.27"
		replicas = 4
		// pair and single are the Placements in the hub namespace the fleet namespace's label names.
		pair   = "pair"
		single = "single"
		// samplePeriod is how often the move's no-downtime check reads the spokes.
		samplePeriod = 150 * time.Millisecond
		// maxSampleGap is the largest gap between two samples the check accepts: a longer one could hide a
		// moment without an available replica.
		maxSampleGap = 2 * time.Second
	)
	var (
		ns        string
		manifest  = filepath.Join(envhub.RepoRoot(), "test", "e2e", "testdata", "transparent", "web.yaml")
		cacheDir  string
		pairOf    []string // the spokes of the Placement pair
		singleOf  string   // the spoke of the Placement single
		generated = func() *workv1alpha1.PlacementManifestWork {
			return &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workv1alpha1.FleetGeneratedName}}
		}
	)

	// kubectl runs kubectl against the fleet API server, as the stack's admin, and returns its output.
	kubectl := func(ctx context.Context, args ...string) (string, error) {
		all := append([]string{"--kubeconfig=" + stk.Fleet.Kubeconfig, "--cache-dir=" + cacheDir}, args...)
		out, err := exec.CommandContext(ctx, bins.Kubectl, all...).CombinedOutput()
		GinkgoWriter.Printf("$ kubectl %s\n%s", strings.Join(args, " "), out)
		return string(out), err
	}
	mustKubectl := func(ctx context.Context, args ...string) string {
		GinkgoHelper()
		out, err := kubectl(ctx, args...)
		Expect(err).NotTo(HaveOccurred(), "kubectl %s:\n%s", strings.Join(args, " "), out)
		return out
	}

	// spokeAvailable reads the Deployment on a spoke: its available replicas, and whether it exists.
	spokeAvailable := func(ctx context.Context, g Gomega, cluster string) (int32, bool) {
		d := &appsv1.Deployment{}
		err := stk.Spoke(cluster).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d)
		if apierrors.IsNotFound(err) {
			return 0, false
		}
		g.Expect(err).NotTo(HaveOccurred(), "reading the Deployment on %s", cluster)
		return d.Status.AvailableReplicas, true
	}
	// fleetDeployment reads the Deployment on the fleet API server.
	fleetDeployment := func(ctx context.Context, g Gomega) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		g.Expect(stk.Fleet.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d)).To(Succeed())
		return d
	}
	// expectFleetStatus asserts the status the manager wrote back on the fleet API server: every replica
	// updated, ready and available for the current generation, Available=True.
	expectFleetStatus := func(g Gomega, d *appsv1.Deployment) {
		st := d.Status
		g.Expect(st.ObservedGeneration).To(Equal(d.Generation), "status.observedGeneration on the fleet API server")
		g.Expect([]int32{st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas}).To(HaveEach(int32(replicas)),
			"status replicas/updated/ready/available on the fleet API server")
		var available *appsv1.DeploymentCondition
		for i := range st.Conditions {
			if st.Conditions[i].Type == appsv1.DeploymentAvailable {
				available = &st.Conditions[i]
			}
		}
		g.Expect(available).NotTo(BeNil(), "the Available condition on the fleet API server")
		g.Expect(available.Status).To(BeEquivalentTo(metav1.ConditionTrue), "Available: %s", available.Message)
	}
	// expectRunsOn asserts that the workload runs rolled out on the given spokes with those shares, and that
	// the other spokes have no Deployment.
	expectRunsOn := func(ctx context.Context, g Gomega, shares map[string]int32) {
		for _, c := range clusters {
			if share, ok := shares[c]; ok {
				expectRolledOut(g, c, spokeDeployment(ctx, g, c, ns, app), share, image)
				g.Expect(readyPods(ctx, g, c, ns, app)).To(Equal(share), "ready pods on %s", c)
				continue
			}
			_, found := spokeAvailable(ctx, g, c)
			g.Expect(found).To(BeFalse(), "%s still (or already) has the Deployment", c)
		}
	}
	placement := func(name string, spokes ...string) *clusterv1beta1.Placement {
		return &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: clusterv1beta1.PlacementSpec{
				ClusterSets: []string{stack.ClusterSet},
				Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
						Key: ocmsim.LabelClusterName, Operator: metav1.LabelSelectorOpIn, Values: spokes,
					}}},
				}}},
			},
		}
	}

	BeforeAll(func(ctx SpecContext) {
		cacheDir = GinkgoT().TempDir()
		pairOf, singleOf = clusters[:2], clusters[2]
		ns = "shop-" + rand.String(5)

		By("the hub administrator's part: the hub namespace bound to the clusterset, and two Placements")
		Expect(stk.BindClusterSet(ctx, ns)).To(Succeed())
		Expect(hub.Create(ctx, placement(pair, pairOf...))).To(Succeed())
		Expect(hub.Create(ctx, placement(single, singleOf))).To(Succeed())
		// Both decided before anything moves: the move then measures the manager, not the placement controller.
		Eventually(func(g Gomega) {
			for name, want := range map[string][]string{pair: pairOf, single: {singleOf}} {
				list := &clusterv1beta1.PlacementDecisionList{}
				g.Expect(hub.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name})).To(Succeed())
				var decided []string
				for _, d := range list.Items {
					for _, c := range d.Status.Decisions {
						decided = append(decided, c.ClusterName)
					}
				}
				g.Expect(decided).To(ConsistOf(want), "the decisions of the Placement %s", name)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		By("the user's part, with kubectl on the fleet API server: a namespace opted in to the Placement " + pair)
		mustKubectl(ctx, "create", "namespace", ns)
		mustKubectl(ctx, "label", "namespace", ns, workv1alpha1.LabelFleetPlacement+"="+pair)
	})

	AfterAll(func(ctx SpecContext) {
		if ns == "" {
			return
		}
		// Best effort for a failed spec; the last spec asserts the clean-up itself.
		_, _ = kubectl(ctx, "label", "namespace", ns, workv1alpha1.LabelFleetPlacement+"-")
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(generated()), &workv1alpha1.PlacementManifestWork{}))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(BeTrue(), "the generated PlacementManifestWork is still there")
		for _, name := range []string{pair, single} {
			Expect(client.IgnoreNotFound(hub.Delete(ctx, placement(name)))).To(Succeed())
		}
	})

	It("runs an unmodified Deployment applied with kubectl on the spokes, and kubectl rollout status and wait succeed against the fleet API server", func(ctx SpecContext) {
		start := time.Now()
		mustKubectl(ctx, "apply", "-n", ns, "-f", manifest)

		By("the generated PlacementManifestWork on the hub, naming the Placement " + pair)
		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, generated())
			g.Expect(got.Labels).To(HaveKeyWithValue(workv1alpha1.LabelFleetGenerated, "true"))
			g.Expect(got.Spec.PlacementRef).NotTo(BeNil())
			g.Expect(got.Spec.PlacementRef.Name).To(Equal(pair))
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		By(fmt.Sprintf("the %d replicas split 2 and 2 over %v, rolled out with kwok's pods Ready, nothing on %s", replicas, pairOf, singleOf))
		Eventually(func(g Gomega) {
			expectRunsOn(ctx, g, map[string]int32{pairOf[0]: replicas / 2, pairOf[1]: replicas / 2})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		By("kubectl rollout status and kubectl wait --for=condition=Available against the fleet API server")
		out := mustKubectl(ctx, "rollout", "status", "-n", ns, "deployment/"+app, "--timeout=2m")
		Expect(out).To(ContainSubstring("successfully rolled out"))
		mustKubectl(ctx, "wait", "-n", ns, "--for=condition=Available", "deployment/"+app, "--timeout=30s")
		converged(phaseHub, start)
		Eventually(func(g Gomega) { expectFleetStatus(g, fleetDeployment(ctx, g)) }).
			WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("moves the workload to another spoke when the namespace is relabelled, a replica available on the spokes and Available on the fleet API server throughout", func(ctx SpecContext) {
		var (
			start       time.Time
			samples     int
			last        time.Time
			maxGap      time.Duration
			minAvail    = int32(replicas)
			fleetMin    = int32(replicas)
			fleetNotAvl int // samples where the fleet Deployment's Available condition was not True
			maxAvail    int32
			// timeline has a line per change of what the samples saw, for the report.
			timeline []string
		)
		// sample reads every spoke's Deployment and fails the spec at once when none has an available replica,
		// or when the samples are too far apart to tell.
		sample := func(g Gomega) {
			now := time.Now()
			var sum int32
			per := map[string]int32{}
			for _, c := range clusters {
				n, _ := spokeAvailable(ctx, g, c)
				per[c] = n
				sum += n
			}
			maxGap = max(maxGap, now.Sub(last))
			if gap := now.Sub(last); gap > maxSampleGap {
				StopTrying(fmt.Sprintf("two samples of the spokes %s apart: the check cannot tell that a replica was available in between", gap)).Now()
			}
			last = now
			samples++
			minAvail, maxAvail = min(minAvail, sum), max(maxAvail, sum)
			if sum == 0 {
				StopTrying(fmt.Sprintf("no replica available on any spoke %s into the move (available by spoke: %v)", now.Sub(start).Round(time.Millisecond), per)).Now()
			}
			// What the fleet API server says meanwhile: asserted after the move (the spokes' truth first), and in
			// the report.
			d := &appsv1.Deployment{}
			fleetSaw := "unread"
			if err := stk.Fleet.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: app}, d); err == nil {
				fleetMin = min(fleetMin, d.Status.AvailableReplicas)
				if !deploymentAvailable(d) {
					fleetNotAvl++
				}
				fleetSaw = fmt.Sprintf("availableReplicas %d, Available %t", d.Status.AvailableReplicas, deploymentAvailable(d))
			}
			line := fmt.Sprintf("spokes available %v; fleet API server: %s", per, fleetSaw)
			if len(timeline) == 0 || !strings.HasSuffix(timeline[len(timeline)-1], line) {
				timeline = append(timeline, "+"+now.Sub(start).Round(time.Millisecond).String()+": "+line)
			}
		}

		Eventually(func(g Gomega) {
			expectRunsOn(ctx, g, map[string]int32{pairOf[0]: replicas / 2, pairOf[1]: replicas / 2})
		}).
			WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed(), "the workload does not run on %v before the move", pairOf)
		// The first sample's gap counts from the relabel on.
		start = time.Now()
		last = start
		mustKubectl(ctx, "label", "namespace", ns, workv1alpha1.LabelFleetPlacement+"="+single, "--overwrite")

		By(fmt.Sprintf("every %s until the workload runs on %s alone: the sum of the spokes' available replicas never 0", samplePeriod, singleOf))
		Eventually(func(g Gomega) {
			sample(g)
			expectRunsOn(ctx, g, map[string]int32{singleOf: replicas})
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(samplePeriod).Should(Succeed())
		converged(phaseSpokes, start)
		report := fmt.Sprintf("%d samples of the spokes, at most %s apart; available replicas on the spokes together: fewest %d, most %d (of %d); "+
			"on the fleet API server meanwhile: fewest availableReplicas %d, Available not True in %d samples\n%s",
			samples, maxGap.Round(time.Millisecond), minAvail, maxAvail, replicas, fleetMin, fleetNotAvl, strings.Join(timeline, "\n"))
		AddReportEntry("move", report)
		GinkgoWriter.Println(report)
		Expect(minAvail).To(BeNumerically(">", 0))
		// The status on the fleet API server tells the same truth: the leaving spokes still serve.
		Expect(fleetNotAvl).To(BeZero(), "samples where the fleet Deployment was not Available while the spokes served")
		Expect(fleetMin).To(BeNumerically(">", 0), "the fewest availableReplicas the fleet API server showed")

		Expect(getPMW(ctx, Default, generated()).Spec.PlacementRef.Name).To(Equal(single), "the generated PMW's placementRef")
		By("kubectl rollout status and wait against the fleet API server after the move")
		mustKubectl(ctx, "rollout", "status", "-n", ns, "deployment/"+app, "--timeout=2m")
		mustKubectl(ctx, "wait", "-n", ns, "--for=condition=Available", "deployment/"+app, "--timeout=30s")
		converged(phaseHub, start)
		Eventually(func(g Gomega) { expectFleetStatus(g, fleetDeployment(ctx, g)) }).
			WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
	})

	It("removes the workload from the spokes when it is deleted with kubectl, and the generated PlacementManifestWork when the namespace opts out", func(ctx SpecContext) {
		start := time.Now()
		mustKubectl(ctx, "delete", "-n", ns, "-f", manifest)
		Eventually(func(g Gomega) {
			expectRunsOn(ctx, g, nil)
			for _, c := range clusters {
				expectGone(ctx, g, c, ns, app)
			}
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		mustKubectl(ctx, "label", "namespace", ns, workv1alpha1.LabelFleetPlacement+"-")
		Eventually(func(g Gomega) {
			err := hub.Get(ctx, client.ObjectKeyFromObject(generated()), &workv1alpha1.PlacementManifestWork{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the generated PlacementManifestWork is still there: %v", err)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
		// The user's Placements are theirs: opting out leaves them.
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: single}, &clusterv1beta1.Placement{})).To(Succeed())
		// The fleet API server has no namespace controller: a deleted namespace stays Terminating there.
		mustKubectl(ctx, "delete", "namespace", ns, "--wait=false")
	})
})

// deploymentAvailable tells whether a Deployment's Available condition is True.
func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == "True"
		}
	}
	return false
}
