package kubectlpmw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/bundle"
)

func newPlanCommand(s *Streams) *cobra.Command {
	var (
		hf           hubFlags
		file         string
		output       string
		serverDryRun bool
		opts         controllers.PreviewOptions
	)
	cmd := &cobra.Command{
		Use:   "plan (-f FILE | NAME)",
		Short: "Show what the manager would do with a PlacementManifestWork, without writing anything",
		Long: `Show what the manager would do with a PlacementManifestWork on the hub as it is now: the decided clusters,
each cluster's split shares and overrides, which ManifestWorks it would create, update (with a diff of the
manifests) or delete, and which clusters the rollout strategy updates first. Nothing is written.

With -f, the PlacementManifestWork of the file (or stdin, -f -) is planned: a new one as created, an existing one
as kubectl apply or helm upgrade would leave it, which keep what the file never set of spec.paused and the
approve and retry-revision annotations (kubectl pmw rollout pause, approve, retry). The file is first sent to the API server as a dry run, so the CRD's defaults and
validation apply (this needs create or update permission; without it the file is planned as written, with a
warning). With NAME, the live PlacementManifestWork is planned as it is.

The plan runs the manager's own code (controllers.Preview: the same gather and desired state), so what it
prints is what the manager then writes, as a manager that has just started would. Exit code 2 when the hub
cannot be reached, lacks the CRD, or you may not read what the plan needs.`,
		Example: `  # What applying a changed file would do
  kubectl pmw plan -f web-pmw.yaml

  # A chart's next version, rendered and planned before helm upgrade
  kubectl pmw render --helm ./chart --namespace apps --name web | kubectl pmw plan -f -

  # What the manager would do now for a live PlacementManifestWork, as JSON
  kubectl pmw plan web -n apps -o json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "", "text", outputYAML, outputJSON); err != nil {
				return err
			}
			if (file == "") == (len(args) == 0) {
				return usageError("plan takes -f FILE or a NAME (one of them); see '%s --help'", cmd.CommandPath())
			}
			var obj *unstructured.Unstructured
			if file != "" {
				var err error
				if obj, err = readPMWFile(s, file); err != nil {
					return err
				}
			}
			h, err := hf.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var pmw *workv1alpha1.PlacementManifestWork
			if obj != nil {
				if obj.GetNamespace() == "" {
					obj.SetNamespace(h.namespace)
				} else if hf.namespace != "" && hf.namespace != obj.GetNamespace() {
					return usageError("%s: the PlacementManifestWork's namespace is %s, not %s (-n)", file, obj.GetNamespace(), hf.namespace)
				}
				pmw, err = planned(ctx, s, h, obj, serverDryRun)
			} else {
				pmw = &workv1alpha1.PlacementManifestWork{}
				key := types.NamespacedName{Namespace: h.namespace, Name: args[0]}
				if err = h.client.Get(ctx, key, pmw); err != nil {
					err = h.explain(err, "placementmanifestworks", "PlacementManifestWork "+key.String())
				}
			}
			if err != nil {
				return err
			}
			res, err := controllers.Preview(ctx, h.client, pmw, opts)
			if err != nil {
				return previewError(h, err)
			}
			var buf bytes.Buffer
			if err := res.Print(&buf, output); err != nil {
				return err
			}
			if _, err := s.Out.Write(buf.Bytes()); err != nil {
				return err
			}
			if res.Invalid != nil {
				// The plan is printed; the exit code tells a script that the manager would refuse the spec.
				return usageError("the manager would write nothing for this PlacementManifestWork: %s: %s", res.Invalid.Reason, res.Invalid.Message)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&file, "filename", "f", "", "A file with one PlacementManifestWork, or - for stdin")
	fs.BoolVar(&serverDryRun, "server-dry-run", true, "Send the file to the API server as a dry run first, so the CRD's defaults and validation apply")
	fs.IntVar(&opts.MaxManifestBytes, "max-manifest-bytes", bundle.DefaultMaxManifestBytes, "The manager's --max-manifest-bytes")
	fs.StringVarP(&output, "output", "o", "", "Output format: yaml or json (default: text, with the diffs)")
	hf.add(fs)
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(outputYAML, outputJSON))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// readPMWFile reads a file (or stdin for "-") that holds exactly one PlacementManifestWork.
func readPMWFile(s *Streams, file string) (*unstructured.Unstructured, error) {
	var (
		objs []*unstructured.Unstructured
		err  error
	)
	if file == "-" {
		objs, err = bundle.ReadManifests(s.In, "stdin")
		if err != nil {
			return nil, usageError("%v", err)
		}
	} else if objs, err = readFile(file); err != nil {
		return nil, err
	}
	if file == "-" {
		file = "stdin"
	}
	gvk := workv1alpha1.GroupVersion.WithKind("PlacementManifestWork")
	if len(objs) != 1 || objs[0].GroupVersionKind() != gvk {
		held := "nothing"
		if len(objs) > 0 {
			kinds := make([]string, 0, len(objs))
			for _, o := range objs {
				kinds = append(kinds, o.GetKind()+" "+o.GetName())
			}
			if len(kinds) > 5 {
				kinds = append(kinds[:5], fmt.Sprintf("and %d more", len(kinds)-5))
			}
			held = strings.Join(kinds, ", ")
		}
		return nil, usageError("%s holds %s; plan takes exactly one %s (%s): make one with kubectl pmw wrap or render", file, held, gvk.Kind, gvk.GroupVersion())
	}
	if objs[0].GetName() == "" {
		return nil, usageError("%s: the PlacementManifestWork has no metadata.name", file)
	}
	return objs[0], nil
}

// planned is the PlacementManifestWork of obj as the API server would store it: sent as a dry run (create, or
// update of the live one with what applying obj keeps of it: keepFromLive), so defaults and validation apply.
// Without permission for the dry run it is obj as written (with what it keeps of the live one, when that can be
// read), with a warning; a PlacementManifestWork the API server refuses is bad input.
func planned(ctx context.Context, s *Streams, h *hub, obj *unstructured.Unstructured, dryRun bool) (*workv1alpha1.PlacementManifestWork, error) {
	what := fmt.Sprintf("PlacementManifestWork %s/%s", obj.GetNamespace(), obj.GetName())
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	err := h.client.Get(ctx, client.ObjectKeyFromObject(obj), live)
	if err == nil {
		obj = obj.DeepCopy()
		keepFromLive(obj, live)
	}
	if dryRun {
		sent := obj.DeepCopy()
		switch {
		case apierrors.IsNotFound(err):
			err = h.client.Create(ctx, sent, client.DryRunAll)
		case err == nil:
			sent.SetResourceVersion(live.GetResourceVersion())
			err = h.client.Update(ctx, sent, client.DryRunAll)
		}
		switch {
		case err == nil:
			obj = sent
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			return nil, usageError("the hub refuses %s: %s", what, apiMessage(err))
		case apierrors.IsForbidden(err):
			fmt.Fprintf(s.Err, "Warning: no dry run of %s (%s): planned as written, without the CRD's defaults and validation\n", what, apiMessage(err))
		default:
			return nil, h.explain(err, "placementmanifestworks", what)
		}
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	pmw := &workv1alpha1.PlacementManifestWork{}
	if err := json.Unmarshal(raw, pmw); err != nil {
		return nil, usageError("%s: %v", what, err)
	}
	return pmw, nil
}

// keptFields are the fields of a PlacementManifestWork that commands other than an apply of its file write:
// spec.paused (kubectl pmw rollout pause and resume) and the annotations the manager reads (kubectl pmw rollout
// approve and retry).
var keptFields = [][]string{
	{"spec", "paused"},
	{"metadata", "annotations", workv1alpha1.AnnotationApprove},
	{"metadata", "annotations", workv1alpha1.AnnotationRetryRevision},
}

// keepFromLive sets on obj, a file's PlacementManifestWork, each of keptFields that obj does not set and live has:
// kubectl apply and helm upgrade patch the live object with what changed in the file, so they leave a field the
// file never set as it is (a plain Update with the file would drop it). Not a field that live's
// kubectl.kubernetes.io/last-applied-configuration sets: the file set it when last applied, and kubectl apply
// removes what the file no longer sets.
func keepFromLive(obj, live *unstructured.Unstructured) {
	var applied map[string]any
	if a := live.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; a != "" {
		_ = json.Unmarshal([]byte(a), &applied) // one that does not parse says nothing
	}
	for _, path := range keptFields {
		if _, set, _ := unstructured.NestedFieldNoCopy(obj.Object, path...); set {
			continue
		}
		if _, was, _ := unstructured.NestedFieldNoCopy(applied, path...); was {
			continue
		}
		if v, found, err := unstructured.NestedFieldCopy(live.Object, path...); found && err == nil {
			_ = unstructured.SetNestedField(obj.Object, v, path...)
		}
	}
}

// previewError gives an error of controllers.Preview its exit code: the hub's refusals, a missing CRD and an
// unreachable hub are ExitHub (the message, already one line, says which); anything else is ExitUsage.
func previewError(h *hub, err error) error {
	var (
		status apierrors.APIStatus
		urlErr *url.Error
		netErr net.Error
	)
	switch {
	case apierrors.IsForbidden(err):
		return hubError(fmt.Errorf("%w; plan reads the hub as the manager does (ManifestWorks in the clusters' namespaces, ManagedClusters, Placements, "+
			"PlacementDecisions, AddOnPlacementScores, ResourceInterpreters): ask your hub admin for the read-only ClusterRole of docs/cli.md#plan", err))
	case meta.IsNoMatchError(err), errors.As(err, &status):
		return hubError(err)
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		return hubError(fmt.Errorf("cannot reach the hub at %s: %w; check --kubeconfig, --context and the network", h.server, err))
	}
	return usageError("%v", err)
}
