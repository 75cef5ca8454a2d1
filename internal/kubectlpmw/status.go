package kubectlpmw

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

func newStatusCommand(s *Streams) *cobra.Command {
	var (
		hf     hubFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a PlacementManifestWork's conditions and a table of its clusters",
		Long: `Show where a PlacementManifestWork stands: its generation, summary and conditions (with reason and
message), then one row per cluster: the ManifestWork, whether the agent applied it, the cluster's health and
reason, the split shares it carries and its template revision (current or outdated).

Health is the manager's (status.unhealthyClusters); a cluster the status does not name, beyond its 10, is
judged here from its work's report. Without access to the cluster namespaces the table shows what the status
says. The exit code is 0 when the PlacementManifestWork is Ready for its current generation and 3 when it is
not, so scripts can gate on it as on ` + "`kubectl wait`" + `, without waiting.`,
		Example: `  # The table of one PlacementManifestWork in the current namespace
  kubectl pmw status web

  # More columns: the work's Available condition, decided or leaving, who judged the health, the message
  kubectl pmw status web -n apps -o wide

  # The same data for scripts
  kubectl pmw status web -o json | jq '.clusters[] | select(.health == "Degraded") | .cluster'

  # Gate a pipeline step on Ready
  kubectl pmw status web >/dev/null || echo "not ready (exit $?)"`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputTable, outputWide, outputYAML, outputJSON); err != nil {
				return err
			}
			h, err := hf.connect()
			if err != nil {
				return err
			}
			in, warnings, err := readStatus(cmd.Context(), h, types.NamespacedName{Namespace: h.namespace, Name: args[0]})
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintln(s.Err, "Warning:", w)
			}
			report := BuildStatus(in)
			switch output {
			case outputYAML, outputJSON:
				err = encode(s.Out, report, output)
			default:
				err = WriteStatus(s.Out, report, output == outputWide, useColor(s.Out))
			}
			if err != nil {
				return err
			}
			if !report.Ready {
				return errNotReady
			}
			return nil
		},
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: wide, yaml or json (default: the table)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(outputWide, outputYAML, outputJSON))
	return cmd
}

// readStatus reads a PlacementManifestWork, the ManifestWorks it owns (found by its label, kept when they carry
// its UID, as the manager finds them) and its Placement's decisions. Works and decisions that the user may not
// read are left out with a warning: the status alone still says a lot.
func readStatus(ctx context.Context, h *hub, key types.NamespacedName) (StatusInput, []string, error) {
	pmw := &workv1alpha1.PlacementManifestWork{}
	what := "PlacementManifestWork " + key.String()
	if err := h.client.Get(ctx, key, pmw); err != nil {
		return StatusInput{}, nil, h.explain(err, "placementmanifestworks", what)
	}
	in := StatusInput{PMW: pmw}
	var warnings []string

	works := &workv1.ManifestWorkList{}
	ownership := manifestwork.OwnershipOf(pmw)
	err := h.client.List(ctx, works, client.MatchingLabels(ownership.Labels()))
	switch {
	case err == nil:
		in.WorksKnown = true
		for i := range works.Items {
			if ownership.Owns(&works.Items[i]) {
				in.Works = append(in.Works, works.Items[i])
			}
		}
	case apierrors.IsForbidden(err):
		warnings = append(warnings, "you may not list ManifestWorks in the cluster namespaces; showing what the status says")
	default:
		return StatusInput{}, nil, h.explain(err, "manifestworks", "the ManifestWorks of "+what)
	}

	in.Revisions, err = listRevisions(ctx, h, pmw)
	switch {
	case err == nil:
	case apierrors.IsForbidden(err):
		warnings = append(warnings, "you may not list ControllerRevisions in "+pmw.Namespace+"; the works' revisions are not shown")
	default:
		return StatusInput{}, nil, h.explain(err, "controllerrevisions", "the ControllerRevisions of "+what)
	}

	placement := pmw.Status.Placement
	if placement == "" {
		placement = pmw.PlacementName()
	}
	decisions := &clusterv1beta1.PlacementDecisionList{}
	err = h.client.List(ctx, decisions, client.InNamespace(pmw.Namespace),
		client.MatchingLabels{clusterv1beta1.PlacementLabel: placement})
	switch {
	case err == nil:
		in.DecidedKnown = true
		for _, d := range decisions.Items {
			for _, c := range d.Status.Decisions {
				in.Decided = append(in.Decided, c.ClusterName)
			}
		}
	case apierrors.IsForbidden(err):
		warnings = append(warnings, "you may not list PlacementDecisions in "+pmw.Namespace+"; leaving clusters are not told apart")
	default:
		return StatusInput{}, nil, h.explain(err, "placementdecisions", "the PlacementDecisions of Placement "+pmw.Namespace+"/"+placement)
	}
	return in, warnings, nil
}
