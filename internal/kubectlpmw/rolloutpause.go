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
failure does not retry a later one. Exit 1 when no revision has failed.`,
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
			n, _ := live.failedRevision()
			if n == 0 {
				return usageError("nothing to retry: no failed revision (%s has no status.failedRevision)", pmwRef(args[0]))
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
