package kubectlpmw

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

func newRolloutUndoCommand(s *Streams) *cobra.Command {
	var (
		hf hubFlags
		to int64
	)
	cmd := &cobra.Command{
		Use:   "undo NAME",
		Short: "Write an earlier revision's template back into a PlacementManifestWork's spec",
		Long: `Roll a PlacementManifestWork back to an earlier revision, as kubectl rollout undo does for a Deployment: the
revision's template (manifestWorkTemplate, distributionStrategy, overrides, splitCompanions,
propagateDependencies) replaces those fields of the live spec; the rest of the spec (placement, rollout
strategy, failover) is kept. The manager then rolls the template out with the rollout strategy, and the
revision, now current again, takes the next number.

Without --to-revision, the revision before the current one. The change is a JSON merge patch that carries the
resourceVersion it was computed from, so a concurrent edit is not overwritten (it is retried). A GitOps tool
that owns the spec will put it back: revert in git instead. The PlacementManifestWork's
kubernetes.io/change-cause annotation becomes the revision's, or is removed when the revision has none.`,
		Example: `  # Back to the previous template
  kubectl pmw rollout undo web -n apps

  # Back to revision 3, then wait for it to reach every cluster
  kubectl pmw rollout undo web -n apps --to-revision 3 && kubectl pmw rollout status web -n apps`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to < 0 {
				return usageError("--to-revision %d: a revision is a number from 1", to)
			}
			h, err := hf.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var target int64
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				live, revisions, err := readRevisions(ctx, h, args[0])
				if err != nil {
					return err
				}
				modified, cr, err := PlanUndo(live.obj, revisions, to)
				if err != nil {
					return err
				}
				target = cr.Revision
				return h.client.Patch(ctx, modified, client.MergeFromWithOptions(live.obj, client.MergeFromWithOptimisticLock{}))
			})
			var exit *exitError
			if err != nil && !errors.As(err, &exit) {
				return h.explainWrite(err, "PlacementManifestWork "+h.namespace+"/"+args[0])
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "%s rolled back to revision %d\n", pmwRef(args[0]), target)
			return err
		},
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	cmd.Flags().Int64Var(&to, "to-revision", 0, "The revision to roll back to (default: the one before the current)")
	return cmd
}

// PlanUndo is the live PlacementManifestWork (as read, unstructured) with the template of a revision in its
// spec, and that revision: the one numbered to, or, for 0, the newest revision other than the live spec's.
// The template fields are those of the revision's data and of the live spec's own revision data
// (revision.Data): each is set to the revision's value, or removed when the revision has none. It refuses a
// revision that does not exist and the live spec's own revision. The change-cause annotation follows the
// revision's.
func PlanUndo(live *unstructured.Unstructured, revisions []appsv1.ControllerRevision, to int64) (*unstructured.Unstructured, *appsv1.ControllerRevision, error) {
	pmw, err := toTyped(live)
	if err != nil {
		return nil, nil, err
	}
	ref := pmwRef(pmw.Name)
	data, err := revision.Data(pmw)
	if err != nil {
		return nil, nil, usageError("%s: %v", ref, err)
	}
	current := revision.Name(manifestwork.Owner(pmw).Name, data)
	var cr *appsv1.ControllerRevision
	if to == 0 {
		for i := range revisions {
			if revisions[i].Name != current && (cr == nil || revisions[i].Revision > cr.Revision) {
				cr = &revisions[i]
			}
		}
		if cr == nil {
			return nil, nil, usageError("%s has no earlier revision to roll back to; its revisions are %s", ref, revisionNumbers(revisions))
		}
	} else {
		if cr = findRevision(revisions, to); cr == nil {
			return nil, nil, usageError("%s has no revision %d; its revisions are %s", ref, to, revisionNumbers(revisions))
		}
		if cr.Name == current {
			return nil, nil, usageError("%s is already at revision %d", ref, to)
		}
	}
	want, err := RevisionTemplate(cr)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]any{}
	if err := utiljson.Unmarshal(data, &have); err != nil {
		return nil, nil, usageError("%s: %v", ref, err)
	}

	out := live.DeepCopy()
	spec, _, _ := unstructured.NestedMap(out.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	for field := range have {
		delete(spec, field)
	}
	for field, v := range want {
		if v = withoutNulls(v); v != nil {
			spec[field] = v
		} else {
			delete(spec, field)
		}
	}
	if err := unstructured.SetNestedMap(out.Object, spec, "spec"); err != nil {
		return nil, nil, usageError("%s: %v", ref, err)
	}
	annotations := out.GetAnnotations()
	if cause := cr.Annotations[workv1alpha1.AnnotationChangeCause]; cause != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[workv1alpha1.AnnotationChangeCause] = cause
	} else {
		delete(annotations, workv1alpha1.AnnotationChangeCause)
	}
	out.SetAnnotations(annotations)
	return out, cr, nil
}

// withoutNulls is v without the null fields of its objects (JSON null is an absent field), nil for null.
func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e = withoutNulls(e); e != nil {
				out[k] = e
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			out = append(out, withoutNulls(e))
		}
		return out
	}
	return v
}
