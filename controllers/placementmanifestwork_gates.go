package controllers

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rolloutsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"
	placementsdk "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// maxApprovalsRecorded bounds status.approvals.
const maxApprovalsRecorded = 20

// recordApprovals is status.approvals after this reconcile: the recorded ones, and the annotation's approvals
// of the current revision's gates not recorded yet, stamped now. Approvals of other revisions are left out:
// they approve nothing, and recording them would suggest they did.
func recordApprovals(pmw *workv1alpha1.PlacementManifestWork, current int64, now time.Time) []workv1alpha1.RolloutApproval {
	out := append([]workv1alpha1.RolloutApproval(nil), pmw.Status.Approvals...)
	gates := make(map[string]bool, len(pmw.Spec.RolloutGates))
	for _, g := range pmw.Spec.RolloutGates {
		gates[g.Name] = true
	}
	for _, a := range workv1alpha1.ParseApprovals(pmw.Annotations[workv1alpha1.AnnotationApprove]) {
		if a.Revision != current || current == 0 || !gates[a.Gate] || approved(out, current, a.Gate) {
			continue
		}
		a.ApprovedAt = metav1.NewTime(now.UTC().Truncate(time.Second))
		out = append(out, a)
	}
	if len(out) > maxApprovalsRecorded {
		out = out[len(out)-maxApprovalsRecorded:]
	}
	return out
}

func approved(approvals []workv1alpha1.RolloutApproval, revision int64, gate string) bool {
	for _, a := range approvals {
		if a.Revision == revision && a.Gate == gate {
			return true
		}
	}
	return false
}

// holdAtGates applies the rollout gates to a step of sdk-go's rollout (toRollout, in its order), removing from
// allowed the clusters that a gate not approved for the current revision holds back, and returns the first
// gate that held one back ("" when none did):
//   - afterClusters N: once N clusters carry the current revision (are not ToApply), no other cluster gets it;
//     before that, a step gives it to at most the clusters missing up to N;
//   - afterGroup G: once every cluster of decision group G carries it, the clusters of other groups that do
//     not wait (sdk-go moves to the next group only once G is done).
func holdAtGates(gates []workv1alpha1.RolloutGate, isApproved func(gate string) bool, statuses []rolloutsdk.ClusterRolloutStatus,
	toRollout []rolloutsdk.ClusterRolloutStatus, groupOf map[string]placementsdk.GroupKey, allowed map[string]bool) string {
	carrying := 0
	for _, s := range statuses {
		if s.Status != rolloutsdk.ToApply && s.Status != rolloutsdk.Skip { // a skipped (kept) cluster carries nothing new
			carrying++
		}
	}
	awaiting := ""
	hold := func(gate, cluster string) {
		if allowed[cluster] {
			delete(allowed, cluster)
			if awaiting == "" {
				awaiting = gate
			}
		}
	}
	for _, g := range gates {
		if isApproved(g.Name) {
			continue
		}
		switch {
		case g.AfterClusters != nil:
			room := int(*g.AfterClusters) - carrying
			for _, c := range toRollout {
				if c.Status != rolloutsdk.ToApply || !allowed[c.ClusterName] {
					continue
				}
				if room > 0 {
					room--
					continue
				}
				hold(g.Name, c.ClusterName)
			}
		case g.AfterGroup != "":
			members, done := 0, true
			for _, s := range statuses {
				if groupName(groupOf[s.ClusterName]) == g.AfterGroup {
					members++
					done = done && s.Status != rolloutsdk.ToApply
				}
			}
			if members == 0 || !done {
				continue
			}
			for _, c := range toRollout {
				if c.Status == rolloutsdk.ToApply && groupName(groupOf[c.ClusterName]) != g.AfterGroup {
					hold(g.Name, c.ClusterName)
				}
			}
		}
	}
	return awaiting
}

// awaitingApprovalMessage says where the rollout waits and how to let it go on.
func awaitingApprovalMessage(pmwName, gate, current string, st *workv1alpha1.RolloutStatus, revision int64) string {
	approve := fmt.Sprintf("kubectl pmw rollout approve %s --gate %s", pmwName, gate)
	if revision > 0 {
		approve = fmt.Sprintf("%s (or add %q to the annotation %s)", approve, fmt.Sprintf("%d/%s", revision, gate), workv1alpha1.AnnotationApprove)
	}
	return fmt.Sprintf("The rollout of %s waits for approval at gate %s: %d of %d clusters carry it, %d of them available, %d failed; approve with %s",
		current, gate, st.Updated, st.Total, st.Succeeded, st.Failed, approve)
}
