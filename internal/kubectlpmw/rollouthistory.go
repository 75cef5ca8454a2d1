package kubectlpmw

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func newRolloutHistoryCommand(s *Streams) *cobra.Command {
	var (
		hf     hubFlags
		output string
		number int64
	)
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List a PlacementManifestWork's revisions, or print one revision's template",
		Long: `List the revisions of a PlacementManifestWork's template, oldest first, as kubectl rollout history does: the
number, the ControllerRevision's name, when it was created, whether it is the current revision (being rolled
out), the completed one (the last rolled out everywhere) or the failed one, and its change cause (the
kubernetes.io/change-cause annotation: the ControllerRevision's, else, for the current revision, the
PlacementManifestWork's).

With --revision N, print that revision's template: the part of the spec a revision records
(manifestWorkTemplate, distributionStrategy, overrides, splitCompanions, propagateDependencies), as YAML or,
with -o json, JSON. A template that comes back takes the next number, so numbers grow with time.`,
		Example: `  # The revisions of web
  kubectl pmw rollout history web -n apps

  # The template of revision 2
  kubectl pmw rollout history web -n apps --revision 2

  # What changed between revisions 2 and 3
  diff <(kubectl pmw rollout history web --revision 2) <(kubectl pmw rollout history web --revision 3)`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputTable, outputYAML, outputJSON); err != nil {
				return err
			}
			if number < 0 {
				return usageError("--revision %d: a revision is a number from 1", number)
			}
			h, err := hf.connect()
			if err != nil {
				return err
			}
			live, revisions, err := readRevisions(cmd.Context(), h, args[0])
			if err != nil {
				return err
			}
			if number > 0 {
				cr := findRevision(revisions, number)
				if cr == nil {
					return usageError("%s has no revision %d; its revisions are %s", pmwRef(args[0]), number, revisionNumbers(revisions))
				}
				tmpl, err := RevisionTemplate(cr)
				if err != nil {
					return err
				}
				format := output
				if format == outputTable {
					format = outputYAML
				}
				return encode(s.Out, tmpl, format)
			}
			hist := BuildHistory(live.pmw, failedRef(live), revisions)
			switch output {
			case outputYAML, outputJSON:
				return encode(s.Out, hist, output)
			}
			return WriteHistory(s.Out, hist)
		},
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	cmd.Flags().Int64Var(&number, "revision", 0, "Print the template of this revision instead of the list")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: yaml or json (default: the table; YAML with --revision)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(outputYAML, outputJSON))
	return cmd
}

// failedRef is status.failedRevision as a reference, or nil.
func failedRef(l *livePMW) *workv1alpha1.RevisionReference {
	n, name := l.failedRevision()
	if n == 0 && name == "" {
		return nil
	}
	return &workv1alpha1.RevisionReference{Revision: n, Name: name}
}

// History is what `kubectl pmw rollout history` prints: the table as text, or this with -o yaml|json.
type History struct {
	Name      string        `json:"name"`
	Namespace string        `json:"namespace"`
	Revisions []HistoryItem `json:"revisions"`
}

// HistoryItem is one revision.
type HistoryItem struct {
	Revision int64       `json:"revision"`
	Name     string      `json:"name"`
	Created  metav1.Time `json:"created"`
	// Current: the revision of the current spec, being rolled out (status.currentRevision).
	Current bool `json:"current,omitempty"`
	// Completed: the last revision rolled out everywhere (status.completedRevision).
	Completed bool `json:"completed,omitempty"`
	// Failed: the revision whose rollout failed (status.failedRevision).
	Failed      bool   `json:"failed,omitempty"`
	ChangeCause string `json:"changeCause,omitempty"`
}

// BuildHistory lists the revisions, oldest number first, marked from the status: current, completed, and
// failed (the failed revision is passed in, as the plugin reads it from the unstructured object). The change
// cause is the ControllerRevision's kubernetes.io/change-cause annotation, else, for the current revision, the
// PlacementManifestWork's: the cause of the change the spec holds now.
func BuildHistory(pmw *workv1alpha1.PlacementManifestWork, failed *workv1alpha1.RevisionReference, revisions []appsv1.ControllerRevision) History {
	is := func(ref *workv1alpha1.RevisionReference, cr *appsv1.ControllerRevision) bool {
		if ref == nil {
			return false
		}
		if ref.Name != "" {
			return ref.Name == cr.Name
		}
		return ref.Revision == cr.Revision
	}
	h := History{Name: pmw.Name, Namespace: pmw.Namespace, Revisions: []HistoryItem{}}
	for i := range revisions {
		cr := &revisions[i]
		item := HistoryItem{
			Revision: cr.Revision, Name: cr.Name, Created: cr.CreationTimestamp,
			Current: is(pmw.Status.CurrentRevision, cr), Completed: is(pmw.Status.CompletedRevision, cr), Failed: is(failed, cr),
			ChangeCause: cr.Annotations[workv1alpha1.AnnotationChangeCause],
		}
		if item.ChangeCause == "" && item.Current {
			item.ChangeCause = pmw.Annotations[workv1alpha1.AnnotationChangeCause]
		}
		h.Revisions = append(h.Revisions, item)
	}
	return h
}

// WriteHistory prints the history as kubectl rollout history does: the object, then a table.
func WriteHistory(w io.Writer, h History) error {
	if _, err := fmt.Fprintf(w, "%s\n", pmwRef(h.Name)); err != nil {
		return err
	}
	t := &table{}
	t.add(plain("REVISION"), plain("NAME"), plain("CREATED"), plain("STATUS"), plain("CHANGE-CAUSE"))
	if len(h.Revisions) == 0 {
		t.add(plain("(none)"))
	}
	for _, r := range h.Revisions {
		var marks []string
		for _, m := range []struct {
			on   bool
			text string
		}{{r.Current, "current"}, {r.Completed, "completed"}, {r.Failed, "failed"}} {
			if m.on {
				marks = append(marks, m.text)
			}
		}
		created := "-"
		if !r.Created.IsZero() {
			created = r.Created.UTC().Format(time.RFC3339)
		}
		cause := oneLine(r.ChangeCause)
		if cause == "" {
			cause = "<none>"
		}
		t.add(plain(strconv.FormatInt(r.Revision, 10)), plain(r.Name), plain(created), plain(orDash(strings.Join(marks, ","))), plain(cause))
	}
	return t.write(w)
}

// RevisionTemplate is a revision's data (the template-relevant part of the spec, see revision.Data) as an
// object to print.
func RevisionTemplate(cr *appsv1.ControllerRevision) (map[string]any, error) {
	out := map[string]any{}
	if len(cr.Data.Raw) == 0 {
		return nil, usageError("ControllerRevision %s/%s holds no data", cr.Namespace, cr.Name)
	}
	if err := utiljson.Unmarshal(cr.Data.Raw, &out); err != nil {
		return nil, usageError("ControllerRevision %s/%s does not hold a PlacementManifestWork template: %v", cr.Namespace, cr.Name, err)
	}
	return out, nil
}
