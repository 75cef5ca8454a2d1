package kubectlpmw

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/bundle"
)

// helmOnly are the flags of render that only --helm uses.
var helmOnly = []string{"release-name", "version", "devel", "values", "set", "set-string", "set-file", "set-json",
	"set-literal", "include-crds", "kube-version", "api-versions", "repo", "username", "password", "cert-file",
	"key-file", "ca-file", "insecure-skip-tls-verify", "plain-http", "pass-credentials"}

func newRenderCommand(s *Streams) *cobra.Command {
	var (
		wf        wrapFlags
		helm      bundle.HelmOptions
		kustomize string
	)
	cmd := &cobra.Command{
		Use:   "render (--helm CHART | --kustomize DIR) --namespace NS [flags]",
		Short: "Render a Helm chart or a kustomize folder into a PlacementManifestWork",
		Long: `Render a Helm chart (a folder, a packaged .tgz, an oci:// reference or repo/chart of your Helm
repositories) through the Helm SDK, or a kustomize folder through the kustomize API, on this machine, and
write a PlacementManifestWork that delivers the result to the clusters of a Placement, to stdout. Nothing is
asked of a cluster: Helm's lookup finds nothing, as in helm template.

The output is deterministic (the same input gives the same bytes, so GitOps diffs stay quiet); an object a chart
renders differently every time gets a warning. For a chart, --namespace is also the release namespace. The
chart's crds/ folders are left out unless --include-crds; see docs/cli.md for what hooks and tests become.
Warnings go to stderr; on an error nothing is written to stdout.`,
		Example: `  # A local chart with values, into the apps namespace, to the clusters of the Placement prod
  kubectl pmw render --helm ./chart --values prod.yaml --set image.tag=1.2.3 \
    --namespace apps --placement prod > app-pmw.yaml

  # A chart of an OCI registry, a fixed version, its web Deployment split across the clusters
  kubectl pmw render --helm oci://registry.example.com/charts/web --version 1.4.0 \
    --release-name web -n apps --split Deployment/web

  # A kustomize overlay, applied to the hub at once
  kubectl pmw render --kustomize overlays/prod --name web -n apps | kubectl apply -f -`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (helm.Chart == "") == (kustomize == "") {
				return usageError("render takes --helm CHART or --kustomize DIR (one of them); see '%s --help'", cmd.CommandPath())
			}
			if _, err := wf.options(); err != nil {
				return err
			}
			var (
				objs     []*unstructured.Unstructured
				warnings []bundle.Warning
				err      error
			)
			if kustomize != "" {
				for _, name := range helmOnly {
					if cmd.Flags().Changed(name) {
						return usageError("--%s is for --helm, not --kustomize", name)
					}
				}
				objs, err = bundle.RenderKustomize(kustomize)
			} else {
				helm.Namespace = wf.opts.Namespace
				if wf.opts.Name == "" && helm.ReleaseName != "" {
					wf.opts.Name = helm.ReleaseName
				}
				objs, warnings, err = bundle.RenderHelm(cmd.Context(), helm)
			}
			if err != nil {
				printWarnings(s.Err, warnings)
				return usageError("%v", err)
			}
			return wrapAndWrite(s, objs, warnings, &wf)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&helm.Chart, "helm", "", "A Helm chart: a folder, a packaged .tgz, an oci:// reference, or repo/chart")
	fs.StringVar(&kustomize, "kustomize", "", "A folder with a kustomization.yaml")
	fs.StringVar(&helm.ReleaseName, "release-name", "", "The Helm release name, .Release.Name (default: the chart's name); also the PlacementManifestWork's name without --name")
	fs.StringVar(&helm.Version, "version", "", "The chart version (a constraint) of a remote chart (default: the latest)")
	fs.BoolVar(&helm.Devel, "devel", false, "Let --version match pre-releases")
	fs.StringArrayVar(&helm.ValuesFiles, "values", nil, "A values file for the chart (repeatable; later ones win)")
	fs.StringArrayVar(&helm.Set, "set", nil, "Set a chart value, key=value (repeatable, as helm --set)")
	fs.StringArrayVar(&helm.SetString, "set-string", nil, "Set a chart value as a string, key=value (repeatable)")
	fs.StringArrayVar(&helm.SetFile, "set-file", nil, "Set a chart value from a file's content, key=path (repeatable)")
	fs.StringArrayVar(&helm.SetJSON, "set-json", nil, "Set a chart value as JSON, key=json (repeatable)")
	fs.StringArrayVar(&helm.SetLiteral, "set-literal", nil, "Set a chart value to a literal string, key=value (repeatable)")
	fs.BoolVar(&helm.IncludeCRDs, "include-crds", false, "Deliver the CustomResourceDefinitions of the chart's crds/ folders too")
	fs.StringVar(&helm.KubeVersion, "kube-version", "", "The Kubernetes version the chart is rendered for, .Capabilities.KubeVersion (default: "+bundle.DefaultKubeVersion+")")
	fs.StringSliceVar(&helm.APIVersions, "api-versions", nil, "API versions added to .Capabilities.APIVersions, such as monitoring.coreos.com/v1 (repeatable)")
	fs.StringVar(&helm.RepoURL, "repo", "", "The chart repository URL of a chart named without repo/")
	fs.StringVar(&helm.Username, "username", "", "The chart repository's user name")
	fs.StringVar(&helm.Password, "password", "", "The chart repository's password")
	fs.StringVar(&helm.CertFile, "cert-file", "", "A client certificate for the chart repository")
	fs.StringVar(&helm.KeyFile, "key-file", "", "The client certificate's key")
	fs.StringVar(&helm.CAFile, "ca-file", "", "A CA bundle to verify the chart repository's certificate")
	fs.BoolVar(&helm.InsecureSkipTLSVerify, "insecure-skip-tls-verify", false, "Do not verify the chart repository's certificate")
	fs.BoolVar(&helm.PlainHTTP, "plain-http", false, "Reach the chart repository or registry over plain HTTP")
	fs.BoolVar(&helm.PassCredentialsAll, "pass-credentials", false, "Pass the credentials to every domain the chart repository redirects to")
	wf.add(fs)
	wf.registerCompletions(cmd)
	_ = cmd.MarkFlagDirname("kustomize")
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
	return cmd
}
