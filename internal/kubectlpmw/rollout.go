package kubectlpmw

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

func newRolloutCommand(s *Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Manage the rollout of a PlacementManifestWork: status, history, undo, pause, resume, approve, retry",
		Long: `Manage the rollout of a PlacementManifestWork's template to its clusters, as kubectl rollout does for a
Deployment. Every distinct template is a numbered revision, kept as a ControllerRevision (docs/rollout.md).

  status    wait until the current revision is rolled out everywhere (exit 3 on failure or timeout)
  history   list the revisions, or print one revision's template
  undo      write an earlier revision's template back into the spec
  pause     stop new revisions from reaching clusters (spec.paused)
  resume    let them reach clusters again
  approve   let a rollout waiting at a gate (spec.rolloutGates) go on
  retry     roll out the failed revision again`,
		Example: `  # Wait for a change to reach every cluster
  kubectl pmw rollout status web -n apps --timeout 10m

  # Go back to the previous template
  kubectl pmw rollout undo web -n apps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("%s needs a subcommand: status, history, undo, pause, resume, approve or retry; see '%s --help'",
				cmd.CommandPath(), cmd.CommandPath())
		},
	}
	cmd.AddCommand(
		newRolloutStatusCommand(s),
		newRolloutHistoryCommand(s),
		newRolloutUndoCommand(s),
		newRolloutPauseCommand(s, true),
		newRolloutPauseCommand(s, false),
		newRolloutApproveCommand(s),
		newRolloutRetryCommand(s),
	)
	return cmd
}

// pmwRef is how the rollout commands name a PlacementManifestWork in their messages, as kubectl names objects.
func pmwRef(name string) string { return "placementmanifestwork/" + name }

// livePMW is a PlacementManifestWork read from the hub, as the server sent it (fields this plugin's types do
// not know of, such as those of a newer CRD, included) and as the typed object.
type livePMW struct {
	obj *unstructured.Unstructured
	pmw *workv1alpha1.PlacementManifestWork
}

// getPMW reads a PlacementManifestWork; NotFound is bad input (ExitUsage), anything else a hub error.
func getPMW(ctx context.Context, h *hub, name string) (*livePMW, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("PlacementManifestWork"))
	key := types.NamespacedName{Namespace: h.namespace, Name: name}
	if err := h.client.Get(ctx, key, obj); err != nil {
		return nil, h.explain(err, "placementmanifestworks", "PlacementManifestWork "+key.String())
	}
	pmw, err := toTyped(obj)
	if err != nil {
		return nil, err
	}
	return &livePMW{obj: obj, pmw: pmw}, nil
}

// connectAndGet connects to the hub and reads the named PlacementManifestWork, for the commands that change one.
func (f *hubFlags) connectAndGet(ctx context.Context, name string) (*hub, *livePMW, error) {
	h, err := f.connect()
	if err != nil {
		return nil, nil, err
	}
	live, err := getPMW(ctx, h, name)
	return h, live, err
}

// toTyped converts a PlacementManifestWork read as unstructured to its type; fields the type does not know of
// are left out.
func toTyped(obj *unstructured.Unstructured) (*workv1alpha1.PlacementManifestWork, error) {
	pmw := &workv1alpha1.PlacementManifestWork{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pmw); err != nil {
		return nil, hubError(fmt.Errorf("reading PlacementManifestWork %s/%s: %w", obj.GetNamespace(), obj.GetName(), err))
	}
	return pmw, nil
}

// failedRevision is status.failedRevision (number and name), read from the unstructured object so that a
// plugin built before the field existed reads it from a newer manager; 0 when there is none.
func (l *livePMW) failedRevision() (int64, string) {
	n, _, _ := unstructured.NestedInt64(l.obj.Object, "status", "failedRevision", "revision")
	name, _, _ := unstructured.NestedString(l.obj.Object, "status", "failedRevision", "name")
	return n, name
}

// paused is spec.paused, read from the unstructured object.
func (l *livePMW) paused() bool {
	p, _, _ := unstructured.NestedBool(l.obj.Object, "spec", "paused")
	return p
}

// listRevisions lists the ControllerRevisions a PlacementManifestWork owns (its label, and its UID as their
// controller), as the manager finds them, oldest number first.
func listRevisions(ctx context.Context, h *hub, pmw *workv1alpha1.PlacementManifestWork) ([]appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := h.client.List(ctx, list, client.InNamespace(pmw.Namespace), client.MatchingLabels(revision.Labels(pmw))); err != nil {
		return nil, err
	}
	owned := revision.Owned(list.Items, pmw)
	out := make([]appsv1.ControllerRevision, 0, len(owned))
	for _, cr := range owned {
		out = append(out, *cr)
	}
	return out, nil
}

// readRevisions reads a PlacementManifestWork and its revisions, for history and undo.
func readRevisions(ctx context.Context, h *hub, name string) (*livePMW, []appsv1.ControllerRevision, error) {
	live, err := getPMW(ctx, h, name)
	if err != nil {
		return nil, nil, err
	}
	revisions, err := listRevisions(ctx, h, live.pmw)
	if err != nil {
		return nil, nil, h.explain(err, "controllerrevisions", "the ControllerRevisions of PlacementManifestWork "+live.pmw.Namespace+"/"+name)
	}
	return live, revisions, nil
}

// explainWrite turns an error of a write to a PlacementManifestWork into the one-line error the command ends
// with: NotFound and a refused value are bad input (ExitUsage), forbidden and the rest hub errors.
func (h *hub) explainWrite(err error, what string) error {
	switch {
	case apierrors.IsForbidden(err):
		return hubError(fmt.Errorf("changing %s is forbidden: %s; ask your hub admin for the Role in docs/user-guide.md", what, apiMessage(err)))
	case apierrors.IsConflict(err):
		return usageError("%s changed while this command ran (someone else wrote it); run the command again", what)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return usageError("the hub at %s refused the change to %s: %s", h.server, what, apiMessage(err))
	}
	return h.explain(err, "placementmanifestworks", what)
}

// revisionNumbers lists the revisions' numbers for a message: "1, 2, 3", or "none".
func revisionNumbers(revisions []appsv1.ControllerRevision) string {
	if len(revisions) == 0 {
		return "none"
	}
	parts := make([]string, len(revisions))
	for i, cr := range revisions {
		parts[i] = strconv.FormatInt(cr.Revision, 10)
	}
	return strings.Join(parts, ", ")
}

// findRevision is the revision numbered n, or nil.
func findRevision(revisions []appsv1.ControllerRevision, n int64) *appsv1.ControllerRevision {
	for i := range revisions {
		if revisions[i].Revision == n {
			return &revisions[i]
		}
	}
	return nil
}
