package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// ClusterInput is what is known of one decided cluster.
type ClusterInput struct {
	// Work is the cluster's ManifestWork; nil when it has none yet.
	Work *workv1.ManifestWork
	// Unavailable, when not empty, says why the ManagedCluster is not available.
	Unavailable string
	// Manifests are, per index, the manifests of the work and what to interpret them by on this cluster: the
	// template's (Inputs) when the work carries the current template, else the work's own (WorkManifests).
	// The agent's report of the manifest at ordinal i is matched to Manifests[i].
	Manifests []ManifestInput
}

// ManagedClusterUnavailable says why a ManagedCluster is not available (its Available condition False,
// Unknown or not reported yet), or "" when it is: the ClusterInput's Unavailable, and transparent mode's
// judgement of a cluster's last report.
func ManagedClusterUnavailable(mc *clusterv1.ManagedCluster) string {
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	switch {
	case c == nil:
		return "the ManagedCluster has not reported availability yet"
	case c.Status == metav1.ConditionTrue:
		return ""
	case c.Status == metav1.ConditionUnknown:
		return fmt.Sprintf("the ManagedCluster's availability is Unknown: %s", c.Message)
	default:
		return fmt.Sprintf("the ManagedCluster is not available: %s", c.Message)
	}
}

// ClusterResult is the health of a cluster and of each of its manifests.
type ClusterResult struct {
	Verdict
	// Applied is true when the work reports Applied=True for its current generation.
	Applied bool
	// Manifests holds, per manifest index, its verdict and feedback; nil before the agent reports the work's
	// current generation.
	Manifests []ManifestResult
}

// ManifestResult is one manifest's health and feedback on one cluster.
type ManifestResult struct {
	Verdict
	Feedback Feedback
}

// Cluster decides the health of one cluster: degraded when the ManagedCluster is unavailable, the work is not
// applied or degraded, or a manifest is degraded; progressing while the work is being deleted (it is neither
// applied nor available then); healthy when the work is applied and available for its current generation and
// every manifest is healthy; progressing otherwise. Only conditions of the work's current generation count.
func Cluster(in ClusterInput) ClusterResult {
	if in.Work == nil {
		if in.Unavailable != "" {
			return ClusterResult{Verdict: Verdict{State: Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: in.Unavailable}}
		}
		return ClusterResult{Verdict: progressing(workv1alpha1.ReasonWorkNotCreated, "no ManifestWork yet")}
	}
	w := in.Work
	current := func(t string) *metav1.Condition {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != w.Generation {
			return nil
		}
		return c
	}
	is := func(t string, s metav1.ConditionStatus) bool { c := current(t); return c != nil && c.Status == s }
	deleting := !w.DeletionTimestamp.IsZero()
	res := ClusterResult{Applied: !deleting && is(workv1.WorkApplied, metav1.ConditionTrue)}
	if current(workv1.WorkApplied) != nil {
		// The agent reported this generation, applied or not: its per-manifest report is current too, so a
		// manifest that failed to apply counts as degraded in the per-manifest aggregates as well.
		res.Manifests = manifests(in)
	}
	switch {
	case in.Unavailable != "":
		res.Verdict = Verdict{State: Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: in.Unavailable}
	case deleting:
		res.Verdict = progressing(workv1alpha1.ReasonWorkDeleting, "the ManifestWork is being deleted")
	case is(workv1.WorkApplied, metav1.ConditionFalse):
		res.Verdict = degraded(workv1alpha1.ReasonApplyFailed, "not applied: %s", current(workv1.WorkApplied).Message)
	case is(workv1.WorkDegraded, metav1.ConditionTrue):
		res.Verdict = degraded(workv1alpha1.ReasonWorkDegraded, "%s", current(workv1.WorkDegraded).Message)
	case !res.Applied:
		res.Verdict = progressing(workv1alpha1.ReasonWorkNotApplied, "generation %d not yet applied by the agent", w.Generation)
	default:
		res.Verdict = worst(res.Manifests)
		if res.State == Healthy && !is(workv1.WorkAvailable, metav1.ConditionTrue) {
			res.Verdict = progressing(workv1alpha1.ReasonWorkNotAvailable, "the agent has not yet found every resource")
		}
	}
	return res
}

func manifests(in ClusterInput) []ManifestResult {
	byOrdinal := make(map[int32]*workv1.ManifestCondition, len(in.Work.Status.ResourceStatus.Manifests))
	for i := range in.Work.Status.ResourceStatus.Manifests {
		mc := &in.Work.Status.ResourceStatus.Manifests[i]
		byOrdinal[mc.ResourceMeta.Ordinal] = mc
	}
	out := make([]ManifestResult, len(in.Manifests))
	templateHash := in.Work.Annotations[workv1alpha1.AnnotationTemplateHash]
	for i, m := range in.Manifests {
		m.Status = byOrdinal[int32(i)]
		m.WorkTemplateHash = templateHash
		if m.Status != nil {
			out[i].Feedback = FeedbackOf(m.Status.StatusFeedbacks.Values)
			if allOwn(m.Status.StatusFeedbacks.Values) {
				m.own = out[i].Feedback // the same values: one map per manifest and cluster, not two
			}
		}
		out[i].Verdict = Manifest(m)
	}
	return out
}

// worst is the first degraded manifest's verdict, else the first progressing one's, else healthy.
func worst(ms []ManifestResult) Verdict {
	var first *Verdict
	for i := range ms {
		switch ms[i].State {
		case Degraded:
			return Verdict{State: Degraded, Reason: workv1alpha1.ReasonManifestDegraded, Message: ms[i].Message}
		case Progressing:
			if first == nil {
				first = &ms[i].Verdict
			}
		}
	}
	if first != nil {
		return Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: first.Message}
	}
	return healthy()
}
