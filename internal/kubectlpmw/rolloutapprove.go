package kubectlpmw

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// Approval is what approve decided: the annotation's new value, or why nothing is written.
type Approval struct {
	Revision int64
	Gate     string
	// Value is the approval annotation with the approval added; "" when Already is set.
	Value string
	// Already is set when the gate is already approved for the revision (recorded, or in the annotation).
	Already bool
}

// PlanApproval decides, without I/O, the approval of gate (the gate the rollout awaits when empty) for revision
// (the current revision when 0): the entries of the approval annotation for that revision, with this one added.
// Entries of other revisions are dropped: they approve nothing any more.
func PlanApproval(pmw *workv1alpha1.PlacementManifestWork, gate string, revision int64) (Approval, error) {
	var names []string
	for _, g := range pmw.Spec.RolloutGates {
		names = append(names, g.Name)
	}
	if len(names) == 0 {
		return Approval{}, usageError("%s has no rollout gates (spec.rolloutGates): nothing to approve", pmwRef(pmw.Name))
	}
	if revision == 0 {
		if pmw.Status.CurrentRevision == nil {
			return Approval{}, usageError("%s reports no current revision yet; wait for the manager, or name it with --revision", pmwRef(pmw.Name))
		}
		revision = pmw.Status.CurrentRevision.Revision
	}
	if gate == "" {
		if pmw.Status.Rollout == nil || pmw.Status.Rollout.AwaitingApproval == "" {
			return Approval{}, usageError("the rollout of %s waits at no gate now; name one with --gate (%s)", pmwRef(pmw.Name), strings.Join(names, ", "))
		}
		gate = pmw.Status.Rollout.AwaitingApproval
	}
	known := false
	for _, n := range names {
		known = known || n == gate
	}
	if !known {
		return Approval{}, usageError("%s has no rollout gate %q (its gates: %s)", pmwRef(pmw.Name), gate, strings.Join(names, ", "))
	}
	a := Approval{Revision: revision, Gate: gate}
	for _, r := range pmw.Status.Approvals {
		if r.Revision == revision && r.Gate == gate {
			a.Already = true
			return a, nil
		}
	}
	// The entries of other revisions are dropped: they approve nothing any more.
	var keep []workv1alpha1.RolloutApproval
	for _, e := range workv1alpha1.ParseApprovals(pmw.Annotations[workv1alpha1.AnnotationApprove]) {
		if e.Revision != revision {
			continue
		}
		if e.Gate == gate {
			a.Already = true
			return a, nil
		}
		keep = append(keep, e)
	}
	a.Value = workv1alpha1.FormatApprovals(append(keep, workv1alpha1.RolloutApproval{Revision: revision, Gate: gate}))
	return a, nil
}

// ApprovePatch is the JSON merge patch that sets the approval annotation, guarded by the resourceVersion read so
// that two approvals at once do not drop one another.
func ApprovePatch(value, resourceVersion string) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"annotations":     map[string]any{workv1alpha1.AnnotationApprove: value},
	}})
	return b
}

func newRolloutApproveCommand(s *Streams) *cobra.Command {
	var hf hubFlags
	var gate string
	var revision int64
	cmd := &cobra.Command{
		Use:   "approve NAME",
		Short: "Let a rollout waiting at a gate (spec.rolloutGates) go on",
		Long: `Approve a rollout gate of a PlacementManifestWork for its current revision: the rollout stops at a gate (after a
decision group, or after the first clusters) until approved. It adds "<revision>/<gate>" to the annotation
work.open-cluster-management.io/approve, so the approval is for that revision only: a later revision stops at
the gate again. The manager records it in status.approvals and an event; the API server's audit log says who
approved. Without --gate it approves the gate the rollout waits at now (status.rollout.awaitingApproval).`,
		Example: `  # See where the rollout waits, check the canary clusters, then approve
  kubectl pmw rollout status web -n apps --watch=false
  kubectl pmw status web -n apps
  kubectl pmw rollout approve web -n apps

  # Approve a gate ahead of time, for revision 7 only
  kubectl pmw rollout approve web -n apps --gate wave-2 --revision 7`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if revision < 0 {
				return usageError("--revision must be a revision number (kubectl pmw rollout history %s)", args[0])
			}
			ctx := cmd.Context()
			h, live, err := hf.connectAndGet(ctx, args[0])
			if err != nil {
				return err
			}
			a, err := PlanApproval(live.pmw, gate, revision)
			if err != nil {
				return err
			}
			if a.Already {
				_, err := fmt.Fprintf(s.Out, "%s: gate %s already approved for revision %d\n", pmwRef(args[0]), a.Gate, a.Revision)
				return err
			}
			patch := client.RawPatch(types.MergePatchType, ApprovePatch(a.Value, live.obj.GetResourceVersion()))
			if err := h.client.Patch(ctx, live.obj, patch); err != nil {
				return h.explainWrite(err, "PlacementManifestWork "+h.namespace+"/"+args[0])
			}
			_, err = fmt.Fprintf(s.Out, "%s: gate %s approved for revision %d\n", pmwRef(args[0]), a.Gate, a.Revision)
			return err
		},
	}
	cmd.Flags().StringVar(&gate, "gate", "", "the gate to approve (default: the one the rollout waits at)")
	cmd.Flags().Int64Var(&revision, "revision", 0, "the revision to approve it for (default: the current revision)")
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	return cmd
}
