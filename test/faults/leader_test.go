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
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

var _ = Describe("Two managers with leader election", func() {
	It("have one leader at a time, and hand over with no double write and no lost update", func(ctx SpecContext) {
		ns := fw.NewNamespace("leader")
		clusters := fw.NewClusters(3)
		Expect(k8s.Create(ctx, framework.Placement("p", ns))).To(Succeed())
		fw.Decide(ns, "p", "p-decision-1", clusters[0], clusters[1])
		pmw := framework.MakePMW("web", ns).Placement("p").
			Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
		Expect(k8s.Create(ctx, pmw)).To(Succeed())

		id := "pmw-faults-" + rand.String(6)
		a := fw.StartManager(suite.ManagerOptions{Name: "a", LeaderElectionID: id, LeaderElectionNamespace: ns})
		b := fw.StartManager(suite.ManagerOptions{Name: "b", LeaderElectionID: id, LeaderElectionNamespace: ns})

		var leader, follower *suite.Manager
		Eventually(func(g Gomega) {
			g.Expect(a.Leading()).NotTo(Equal(b.Leading()), "exactly one manager is elected")
		}, timeout, interval).Should(Succeed())
		leader, follower = a, b
		if b.Leading() {
			leader, follower = b, a
		}
		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		firstHolder := *lease.Spec.HolderIdentity

		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters[0], clusters[1]))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(2))
		}, timeout, interval).Should(Succeed())
		// The recorder sees status writes too (the leader's), so the follower's none below includes them.
		Expect(leader.Recorder.Writes(func(w framework.Write) bool { return w.Verb == "update/status" })).NotTo(BeEmpty())
		Consistently(func(g Gomega) {
			g.Expect(follower.Leading()).To(BeFalse(), "one leader at a time")
			g.Expect(follower.Recorder.Writes(func(framework.Write) bool { return true })).To(BeEmpty(), "the follower writes nothing")
		}, "2s", interval).Should(Succeed())
		// (A reconcile can run on a cache that has not yet caught up with the manager's own writes and repeat a
		// write, so writes are checked by kind and target, not counted.)
		Expect(writeTargets(leader)).To(And(ContainElements("create "+clusters[0], "create "+clusters[1]),
			HaveEach(BeElementOf("create "+clusters[0], "create "+clusters[1]))), "the leader created the two works")

		// Handover: the leader stops (releasing the Lease); a change made right away, before the follower has
		// taken over, must not be lost.
		leader.Stop()
		writesAtStop := len(leader.Recorder.Writes(func(framework.Write) bool { return true }))
		fw.Decide(ns, "p", "p-decision-1", clusters...)

		Eventually(follower.Leading, timeout, interval).Should(BeTrue(), "the follower takes over")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: id}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(Equal(firstHolder))))
		Eventually(func(g Gomega) {
			g.Expect(fw.WorkClusters(g, pmw)).To(ConsistOf(clusters))
			g.Expect(fw.Current(g, pmw).Status.PlacedManifestWorkSummary.Total).To(BeEquivalentTo(3))
		}, timeout, interval).Should(Succeed())

		// A change after the handover reaches every cluster through the new leader.
		fw.UpdatePMW(pmw, func(p *workv1alpha1.PlacementManifestWork) {
			p.Spec.ManifestWorkTemplate = framework.MakePMW("x", ns).
				Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "2"})).Obj().Spec.ManifestWorkTemplate
		})
		Eventually(func(g Gomega) {
			works := fw.WorksByCluster(g, pmw)
			g.Expect(works).To(HaveLen(3))
			for _, w := range works {
				g.Expect(configValue(g, &w)).To(Equal("2"))
			}
		}, timeout, interval).Should(Succeed())

		Expect(leader.Recorder.Writes(func(framework.Write) bool { return true })).To(HaveLen(writesAtStop),
			"the old leader wrote nothing after it stopped")
		want := []string{"create " + clusters[2], "update " + clusters[0], "update " + clusters[1], "update " + clusters[2]}
		Expect(writeTargets(follower)).To(And(ContainElements(want), HaveEach(BeElementOf(want))),
			"the new leader created the missing work and updated each work, and nothing else")

		fw.DeletePMW(pmw, timeout)
	}, SpecTimeout(3*timeout))
})

// writeTargets lists a manager's ManifestWork writes as "<verb> <cluster>".
func writeTargets(m *suite.Manager) []string {
	var out []string
	for _, w := range m.WorkWrites() {
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
