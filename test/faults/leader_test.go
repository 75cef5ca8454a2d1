package faults

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var _ = Describe("Two managers with leader election", func() {
	It("have one leader at a time, and hand over with no double write and no lost update", func(ctx SpecContext) {
		ns := newNamespace("leader")
		clusters := newClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		id := "pmw-faults-" + rand.String(6)
		a := startManager(managerOptions{name: "a", leaderElectionID: id, leaderElectionNamespace: ns})
		b := startManager(managerOptions{name: "b", leaderElectionID: id, leaderElectionNamespace: ns})

		var leader, follower *manager
		Eventually(func(g Gomega) {
			g.Expect(a.elected()).NotTo(Equal(b.elected()), "exactly one manager is elected")
		}, timeout, interval).Should(Succeed())
		leader, follower = a, b
		if b.elected() {
			leader, follower = b, a
		}
		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		firstHolder := *lease.Spec.HolderIdentity

		Eventually(func(g Gomega) {
			g.Expect(keys(worksByCluster(g, worksOf(g, pmw)))).To(ConsistOf(clusters[0], clusters[1]))
			g.Expect(current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(follower.elected()).To(BeFalse(), "one leader at a time")
			g.Expect(follower.recorder.Writes(func(framework.Write) bool { return true })).To(BeEmpty(), "the follower writes nothing")
		}, "2s", interval).Should(Succeed())
		// (A reconcile can run on a cache that has not yet caught up with the manager's own writes and repeat a
		// write, so writes are checked by kind and target, not counted.)
		Expect(writeTargets(leader)).To(And(ContainElements("create "+clusters[0], "create "+clusters[1]),
			HaveEach(BeElementOf("create "+clusters[0], "create "+clusters[1]))), "the leader created the two works")

		// Handover: the leader stops (releasing the Lease); a change made right away, before the follower has
		// taken over, must not be lost.
		leader.stop()
		writesAtStop := len(leader.recorder.Writes(func(framework.Write) bool { return true }))
		decide(ns, "p", "p-decision-1", clusters...)

		Eventually(follower.elected, timeout, interval).Should(BeTrue(), "the follower takes over")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(Equal(firstHolder))))
		Eventually(func(g Gomega) {
			g.Expect(keys(worksByCluster(g, worksOf(g, pmw)))).To(ConsistOf(clusters))
			g.Expect(current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		// A change after the handover reaches every cluster through the new leader.
		updatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.ManifestWorkTemplate = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
		})
		Eventually(func(g Gomega) {
			works := worksByCluster(g, worksOf(g, pmw))
			g.Expect(works).To(HaveLen(3))
			for _, w := range works {
				g.Expect(configValue(g, &w)).To(Equal("2"))
			}
		}, timeout, interval).Should(Succeed())

		Expect(leader.recorder.Writes(func(framework.Write) bool { return true })).To(HaveLen(writesAtStop),
			"the old leader wrote nothing after it stopped")
		want := []string{"create " + clusters[2], "update " + clusters[0], "update " + clusters[1], "update " + clusters[2]}
		Expect(writeTargets(follower)).To(And(ContainElements(want), HaveEach(BeElementOf(want))),
			"the new leader created the missing work and updated each work, and nothing else")

		deletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})

// writeTargets lists a manager's ManifestWork writes as "<verb> <cluster>".
func writeTargets(m *manager) []string {
	var out []string
	for _, w := range m.workWrites() {
		out = append(out, w.Verb+" "+w.Namespace)
	}
	return out
}

// configValue reads data.v of the ConfigMap a work carries first.
func configValue(g Gomega, w *workv1.ManifestWork) string {
	obj := map[string]any{}
	g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj)).To(Succeed())
	data, _ := obj["data"].(map[string]any)
	v, _ := data["v"].(string)
	return v
}
