package kubectlpmw

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// PausePatch is the JSON merge patch that pauses (true) or resumes (false) a PlacementManifestWork: it sets
// spec.paused, or removes it.
func PausePatch(pause bool) []byte {
	var v any // null removes the field
	if pause {
		v = true
	}
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"paused": v}})
	return b
}

// RetryPatch is the JSON merge patch that asks the manager to roll out the failed revision n again.
func RetryPatch(n int64) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		workv1alpha1.AnnotationRetryRevision: strconv.FormatInt(n, 10),
	}}})
	return b
}

// PlanRetry is the revision a retry names: status.failedRevision. It refuses when no revision failed, and when
// the manager already retried that revision (status.retriedRevision is its number): the manager retries a
// revision once, so the annotation would ask for nothing; a spec change or an undo moves the rollout on.
func PlanRetry(live *unstructured.Unstructured) (int64, error) {
	ref := pmwRef(live.GetName())
	n, _, _ := unstructured.NestedInt64(live.Object, "status", "failedRevision", "revision")
	if n == 0 {
		return 0, usageError("nothing to retry: no failed revision (%s has no status.failedRevision)", ref)
	}
	if retried, _, _ := unstructured.NestedInt64(live.Object, "status", "retriedRevision"); retried == n {
		return 0, usageError("revision %d of %s failed again after its retry (status.retriedRevision), and the manager retries a revision once: change the spec (revert it in git) or go back with kubectl pmw rollout undo %s",
			n, ref, live.GetName())
	}
	return n, nil
}

func newRolloutPauseCommand(s *Streams, pause bool) *cobra.Command {
	var hf hubFlags
	cmd := &cobra.Command{
		Use:   "pause NAME",
		Short: "Stop new revisions of a PlacementManifestWork from reaching clusters (spec.paused)",
		Long: `Pause the rollout of a PlacementManifestWork, as kubectl rollout pause does for a Deployment: it sets spec.paused,
and while it is set no cluster receives a new revision; the clusters keep what they run. Changes to the spec
still make revisions, which resume rolls out. A GitOps tool that owns the spec may take the field away again.`,
		Example: `  # Pause, change the template, check the plan, then resume
  kubectl pmw rollout pause web -n apps
  kubectl apply -f web-pmw.yaml
  kubectl pmw plan web -n apps
  kubectl pmw rollout resume web -n apps`,
	}
	done, already := "paused", "already paused"
	if !pause {
		cmd.Use = "resume NAME"
		cmd.Short = "Let new revisions of a paused PlacementManifestWork reach clusters again"
		cmd.Long = `Resume the rollout of a paused PlacementManifestWork, as kubectl rollout resume does for a Deployment: it
removes spec.paused, and the rollout strategy brings the current revision to the clusters.`
		cmd.Example = `  # Resume, then wait for the rollout
  kubectl pmw rollout resume web -n apps && kubectl pmw rollout status web -n apps`
		done, already = "resumed", "not paused"
	}
	cmd.Args = nameArg
	cmd.ValidArgsFunction = hf.completeNames
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		h, live, err := hf.connectAndGet(ctx, args[0])
		if err != nil {
			return err
		}
		if live.paused() == pause {
			_, err := fmt.Fprintf(s.Out, "%s %s\n", pmwRef(args[0]), already)
			return err
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(live.obj.GroupVersionKind())
		obj.SetNamespace(h.namespace)
		obj.SetName(args[0])
		if err := h.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, PausePatch(pause))); err != nil {
			return h.explainWrite(err, "PlacementManifestWork "+h.namespace+"/"+args[0])
		}
		// An API server whose CRD has no spec.paused drops the field without an error: say so, as nothing was
		// paused.
		if got, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); got != pause {
			return hubError(errors.New("the hub's PlacementManifestWork CRD has no spec.paused, so nothing was " + done +
				": upgrade the CRD and the manager (docs/install.md)"))
		}
		_, err = fmt.Fprintf(s.Out, "%s %s\n", pmwRef(args[0]), done)
		return err
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	return cmd
}

func newRolloutRetryCommand(s *Streams) *cobra.Command {
	var hf hubFlags
	cmd := &cobra.Command{
		Use:   "retry NAME",
		Short: "Roll out a PlacementManifestWork's failed revision again",
		Long: `Ask the manager to roll out the failed revision (status.failedRevision) again: after a rollout fails, the
failure policy keeps that revision from the clusters until the spec changes or you retry. It sets the
annotation work.open-cluster-management.io/retry-revision to the failed revision's number, so a retry of an old
failure does not retry a later one. The manager retries a revision once: exit 1 when no revision has failed, or
when the failed revision already had its retry (status.retriedRevision) and failed again; then change the spec
(revert it in git) or run kubectl pmw rollout undo.`,
		Example: `  # Retry after fixing what made the clusters fail (a missing Secret, a full node), then wait
  kubectl pmw rollout retry web -n apps && kubectl pmw rollout status web -n apps`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			h, live, err := hf.connectAndGet(ctx, args[0])
			if err != nil {
				return err
			}
			n, err := PlanRetry(live.obj)
			if err != nil {
				return err
			}
			if err := h.client.Patch(ctx, live.obj, client.RawPatch(types.MergePatchType, RetryPatch(n))); err != nil {
				return h.explainWrite(err, "PlacementManifestWork "+h.namespace+"/"+args[0])
			}
			_, err = fmt.Fprintf(s.Out, "%s: retrying revision %d\n", pmwRef(args[0]), n)
			return err
		},
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	return cmd
}
