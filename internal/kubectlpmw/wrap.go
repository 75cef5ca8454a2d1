package kubectlpmw

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/bundle"
)

// wrapFlags are the flags of wrap and render that say what goes around the manifests (bundle.Options), and the
// output format.
type wrapFlags struct {
	opts                bundle.Options
	labels, annotations []string
	output              string
}

func (f *wrapFlags) add(fs *pflag.FlagSet) {
	o := &f.opts
	fs.StringVar(&o.Name, "name", "", "Name of the PlacementManifestWork (default: the manifests' app.kubernetes.io/instance label, which Helm sets to the release name)")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace of the PlacementManifestWork on the hub, also given to the namespaced manifests without one (required)")
	fs.StringVar(&o.Placement, "placement", "", "Placement of the namespace whose clusters get the manifests (default: none, the manager creates one named like the PlacementManifestWork that selects every cluster of the namespace's ManagedClusterSets)")
	fs.StringArrayVar(&o.Splits, "split", nil, "Split a manifest's replicas across the clusters instead of copying them: Kind/name, Kind.group/name or Kind/namespace/name (repeatable)")
	fs.BoolVar(&o.SplitAllWorkloads, "split-workloads", false, "Split every Deployment, StatefulSet, ReplicaSet and Job (not Helm hooks) as --split does")
	fs.StringVar(&o.Rollout, "rollout", "", "Rollout strategy: All, Progressive or ProgressivePerGroup (default: none, the manager's All)")
	fs.StringVar(&o.MaxConcurrency, "max-concurrency", "", "Progressive: clusters updated at once, a number or a percentage such as 25%")
	fs.StringVar(&o.MinSuccessTime, "min-success-time", "", "How long a cluster stays available before the rollout goes on, such as 1m")
	fs.StringVar(&o.ProgressDeadline, "progress-deadline", "", "How long a cluster may take to become available, such as 10m, or None")
	fs.StringVar(&o.MaxFailures, "max-failures", "", "Clusters that may fail before the rollout stops, a number or a percentage")
	fs.StringSliceVar(&o.ClusterScoped, "cluster-scoped", nil, "Cluster-scoped kinds besides Kubernetes' own and the CRDs' among the manifests, as Kind or Kind.group (comma-separated or repeated)")
	fs.IntVar(&o.MaxManifestBytes, "max-manifest-bytes", bundle.DefaultMaxManifestBytes, "Largest total size of the manifests, OCM's limit on one ManifestWork (match the manager's --max-manifest-bytes)")
	fs.StringArrayVar(&f.labels, "label", nil, "A label key=value for the PlacementManifestWork (repeatable)")
	fs.StringArrayVar(&f.annotations, "annotation", nil, "An annotation key=value for the PlacementManifestWork (repeatable)")
	fs.StringVarP(&f.output, "output", "o", outputYAML, "Output format: yaml or json")
}

func (f *wrapFlags) registerCompletions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(outputYAML, outputJSON))
	_ = cmd.RegisterFlagCompletionFunc("rollout", fixedCompletions("All", "Progressive", "ProgressivePerGroup"))
}

// options checks the flags and returns the Options of bundle.Wrap.
func (f *wrapFlags) options() (bundle.Options, error) {
	if err := checkOutput(f.output, outputYAML, outputJSON); err != nil {
		return bundle.Options{}, err
	}
	o := f.opts
	var err error
	if o.Labels, err = keyValues("--label", f.labels); err != nil {
		return o, err
	}
	if o.Annotations, err = keyValues("--annotation", f.annotations); err != nil {
		return o, err
	}
	return o, nil
}

// keyValues parses key=value flags; the value may hold "=" and ",".
func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("%s %q: write key=value", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}

// wrapAndWrite wraps objs and writes the PlacementManifestWork to s.Out, the warnings (the renderer's first) to
// s.Err. The output is encoded in full before any of it is written: on an error stdout stays empty, so a Helm
// post-renderer's caller applies nothing.
func wrapAndWrite(s *Streams, objs []*unstructured.Unstructured, renderWarnings []bundle.Warning, f *wrapFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	pmw, warnings, err := bundle.Wrap(objs, opts)
	printWarnings(s.Err, append(renderWarnings, warnings...))
	if err != nil {
		return usageError("%v", err)
	}
	var buf bytes.Buffer
	if err := bundle.Encode(&buf, pmw, f.output); err != nil {
		return err
	}
	_, err = s.Out.Write(buf.Bytes())
	return err
}

func printWarnings(w io.Writer, warnings []bundle.Warning) {
	for _, wn := range warnings {
		fmt.Fprintf(w, "Warning: %s\n", oneLine(wn.String()))
	}
}

func newWrapCommand(s *Streams) *cobra.Command {
	var (
		wf        wrapFlags
		files     []string
		recursive bool
	)
	cmd := &cobra.Command{
		Use:   "wrap [-f FILE|DIR|-]... --namespace NS [flags]",
		Short: "Turn Kubernetes manifests into a PlacementManifestWork (also a Helm post-renderer)",
		Long: `Read Kubernetes manifests (YAML documents or JSON, from files, folders or stdin) and write a
PlacementManifestWork that delivers them to the clusters of a Placement, to stdout. Apply it to the hub with
kubectl apply, or let Helm do it: wrap is a Helm post-renderer, which reads the chart's rendered manifests on
stdin and writes what Helm applies on stdout.

Namespaced manifests without a namespace get --namespace. Manifests are replicated to every cluster unless
--split or --split-workloads splits their replicas. Secrets get a warning: they are stored in plain text in the
PlacementManifestWork and the ManifestWorks. Warnings go to stderr; on an error nothing is written to stdout.
The same input always gives the same bytes.`,
		Example: `  # Manifests from files and folders
  kubectl pmw wrap -f deploy.yaml -f config/ --name web --namespace apps > web-pmw.yaml

  # From stdin, split the web Deployment's replicas, roll out progressively two clusters at a time
  kustomize build overlays/prod | kubectl pmw wrap --name web -n apps --split Deployment/web \
    --rollout Progressive --max-concurrency 2 | kubectl apply -f -

  # As a Helm post-renderer: Helm applies one PlacementManifestWork to the hub and tracks it as the release
  helm install web ./chart -n apps --post-renderer kubectl-pmw \
    --post-renderer-args wrap --post-renderer-args --namespace=apps --post-renderer-args --placement=prod`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(*cobra.Command, []string) error {
			if _, err := wf.options(); err != nil {
				return err
			}
			objs, err := readInputs(s, files, recursive)
			if err != nil {
				return err
			}
			return wrapAndWrite(s, objs, nil, &wf)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVarP(&files, "filename", "f", nil, "A manifest file, a folder of .yaml, .yml and .json files, or - for stdin (repeatable; default: stdin)")
	fs.BoolVarP(&recursive, "recursive", "R", false, "Read the folders given with -f recursively")
	wf.add(fs)
	wf.registerCompletions(cmd)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// readInputs reads the manifests of every -f, in order: files, folders (their .yaml, .yml and .json files by
// name) and "-" for stdin; without -f, stdin, unless it is a terminal (nothing piped in).
func readInputs(s *Streams, files []string, recursive bool) ([]*unstructured.Unstructured, error) {
	if len(files) == 0 {
		if f, ok := s.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return nil, usageError("no input: pass -f FILE or pipe manifests to stdin")
		}
		files = []string{"-"}
	}
	var out []*unstructured.Unstructured
	stdinRead := false
	for _, f := range files {
		if f == "-" {
			if stdinRead {
				return nil, usageError("-f - is given twice: stdin can be read once")
			}
			stdinRead = true
			objs, err := bundle.ReadManifests(s.In, "stdin")
			if err != nil {
				return nil, usageError("%v", err)
			}
			out = append(out, objs...)
			continue
		}
		paths, err := manifestFiles(f, recursive)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			objs, err := readFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func readFile(path string) ([]*unstructured.Unstructured, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, usageError("%v", err)
	}
	defer file.Close()
	objs, err := bundle.ReadManifests(file, path)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return objs, nil
}

// manifestFiles is path itself when it is a file, else the .yaml, .yml and .json files of the folder, sorted
// (and of its subfolders with recursive).
func manifestFiles(path string, recursive bool) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once
		}
		return nil, usageError("-f %s: %v", path, err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, usageError("-f %s: %v", path, err)
	}
	if len(out) == 0 {
		hint := ""
		if !recursive {
			hint = " (-R reads its subfolders)"
		}
		return nil, usageError("-f %s: the folder has no .yaml, .yml or .json file%s", path, hint)
	}
	sort.Strings(out)
	return out, nil
}
