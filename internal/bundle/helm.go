package bundle

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultKubeVersion is the Kubernetes version charts are rendered for when HelmOptions.KubeVersion is empty
// (.Capabilities.KubeVersion, and the check of a chart's kubeVersion): the version of the Kubernetes libraries
// this module builds with, which a test keeps in step with go.mod. Helm's own default, v1.20, refuses many
// current charts.
const DefaultKubeVersion = "v1.35.0"

// HelmOptions say which chart RenderHelm renders, and how.
type HelmOptions struct {
	// Chart is a chart directory, a packaged chart (.tgz), an oci:// reference, or repo/chart of a repository
	// in the user's Helm repositories (or a chart name with RepoURL). A path that exists wins.
	Chart string
	// ReleaseName is .Release.Name; the chart's name when empty.
	ReleaseName string
	// Namespace is .Release.Namespace; "default" when empty. Wrap gives it to the namespaced objects without one.
	Namespace string
	// Version is the chart version (a constraint) to fetch for a remote chart; the latest when empty.
	Version string
	// Devel lets Version match pre-releases.
	Devel bool
	// ValuesFiles (-f), Set (--set), SetString, SetFile, SetJSON and SetLiteral are Helm's values options,
	// merged as Helm merges them.
	ValuesFiles                                  []string
	Set, SetString, SetFile, SetJSON, SetLiteral []string
	// IncludeCRDs renders the chart's crds/ folders (its own and its subcharts') as manifests. Without it they
	// are left out, with a warning naming them.
	IncludeCRDs bool
	// KubeVersion is .Capabilities.KubeVersion; DefaultKubeVersion when empty.
	KubeVersion string
	// APIVersions are added to .Capabilities.APIVersions (group/version or group/version/Kind), as Helm's
	// --api-versions: nothing is asked of a cluster.
	APIVersions []string

	// RepoURL, Username, Password, CertFile, KeyFile, CAFile, InsecureSkipTLSVerify, PlainHTTP and
	// PassCredentialsAll reach a remote chart, as Helm's flags of the same names. Registry logins and
	// repositories come from the user's Helm configuration (HELM_REGISTRY_CONFIG, HELM_REPOSITORY_CONFIG,
	// HELM_REPOSITORY_CACHE), as for helm itself.
	RepoURL, Username, Password      string
	CertFile, KeyFile, CAFile        string
	InsecureSkipTLSVerify, PlainHTTP bool
	PassCredentialsAll               bool
}

// RenderHelm renders a chart as `helm install` would on a cluster of its own, without one: the chart's
// templates with the values, hooks included (Wrap decides what becomes of them), the crds/ folders only with
// IncludeCRDs, NOTES.txt left out. lookup finds nothing, as in `helm template`. The chart is rendered twice, and
// an object that differs between the two (a random password, a generated certificate, the time) gets a
// warning: it would change every PlacementManifestWork rendered from the chart. Errors are one line, naming
// the chart.
func RenderHelm(ctx context.Context, opts HelmOptions) ([]*unstructured.Unstructured, []Warning, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("helm chart %s: %s", opts.Chart, oneLine(fmt.Sprintf(format, args...)))
	}
	if opts.Chart == "" {
		return nil, nil, fmt.Errorf("no chart: name a chart directory, a packaged chart (.tgz) or an oci:// reference")
	}
	settings := cli.New()
	path, err := locateChart(opts, settings)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	first, err := renderChart(ctx, path, opts, settings)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	second, err := renderChart(ctx, path, opts, settings)
	if err != nil {
		return nil, nil, fail("%v", err)
	}

	var warnings []Warning
	if first.deprecated {
		warnings = append(warnings, Warning{Object: "chart " + first.name, Message: "the chart is deprecated"})
	}
	if !opts.IncludeCRDs && len(first.crdFiles) > 0 {
		warnings = append(warnings, Warning{Object: "chart " + first.name, Message: fmt.Sprintf("the CustomResourceDefinitions "+
			"of its crds/ folder (%s) are left out: pass --include-crds to deliver them too, or install them on the "+
			"clusters another way", strings.Join(first.crdFiles, ", "))})
	}
	// Objects that render differently each time.
	again := map[string][]byte{}
	for _, o := range second.objs {
		again[objectID(o)], _ = json.Marshal(o.Object)
	}
	for _, o := range first.objs {
		raw, _ := json.Marshal(o.Object)
		if prev, ok := again[objectID(o)]; !ok || !bytes.Equal(prev, raw) {
			warnings = append(warnings, Warning{Object: objectID(o), Message: "renders differently every time (a random " +
				"value, a generated certificate or the time in the chart's templates): each render changes the " +
				"PlacementManifestWork and so every cluster's ManifestWork; set the value (--set, --values) so it is fixed"})
		}
	}
	return first.objs, warnings, nil
}

// rendered is one rendering of a chart.
type rendered struct {
	name       string
	deprecated bool
	objs       []*unstructured.Unstructured
	crdFiles   []string
}

func renderChart(ctx context.Context, path string, opts HelmOptions, settings *cli.EnvSettings) (rendered, error) {
	ch, err := loader.Load(path)
	if err != nil {
		return rendered{}, fmt.Errorf("loading: %v", err)
	}
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return rendered{}, fmt.Errorf("a %s chart cannot be rendered on its own; render a chart that depends on it", ch.Metadata.Type)
	}
	if deps := ch.Metadata.Dependencies; len(deps) > 0 {
		if err := action.CheckDependencies(ch, deps); err != nil {
			return rendered{}, fmt.Errorf("%v; run helm dependency build on the chart first", err)
		}
	}
	valueOpts := values.Options{ValueFiles: opts.ValuesFiles, Values: opts.Set, StringValues: opts.SetString,
		FileValues: opts.SetFile, JSONValues: opts.SetJSON, LiteralValues: opts.SetLiteral}
	vals, err := valueOpts.MergeValues(getter.All(settings))
	if err != nil {
		return rendered{}, fmt.Errorf("values: %v; fix the values files or --set", err)
	}

	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName = opts.ReleaseName
	if inst.ReleaseName == "" {
		inst.ReleaseName = ch.Name()
	}
	inst.Namespace = opts.Namespace
	if inst.Namespace == "" {
		inst.Namespace = "default"
	}
	kubeVersion := opts.KubeVersion
	if kubeVersion == "" {
		kubeVersion = DefaultKubeVersion
	}
	if inst.KubeVersion, err = chartutil.ParseKubeVersion(kubeVersion); err != nil {
		return rendered{}, fmt.Errorf("kube version %q: %v; give one such as v1.30.0", kubeVersion, err)
	}
	inst.APIVersions = opts.APIVersions
	rel, err := inst.RunWithContext(ctx, ch, vals)
	if err != nil {
		return rendered{}, fmt.Errorf("rendering: %v; fix the chart or its values", err)
	}

	out := rendered{name: ch.Name(), deprecated: ch.Metadata.Deprecated}
	// ch is the chart as rendered: subcharts that conditions or tags disable are gone.
	for _, crd := range ch.CRDObjects() {
		if !opts.IncludeCRDs {
			out.crdFiles = append(out.crdFiles, crd.Filename)
			continue
		}
		objs, err := ReadManifests(bytes.NewReader(crd.File.Data), crd.Filename)
		if err != nil {
			return rendered{}, err
		}
		out.objs = append(out.objs, objs...)
	}
	objs, err := ReadManifests(strings.NewReader(rel.Manifest), "the rendered chart")
	if err != nil {
		return rendered{}, err
	}
	out.objs = append(out.objs, objs...)
	for _, h := range rel.Hooks {
		objs, err := ReadManifests(strings.NewReader(h.Manifest), h.Path)
		if err != nil {
			return rendered{}, err
		}
		out.objs = append(out.objs, objs...)
	}
	slices.Sort(out.crdFiles)
	return out, nil
}

// locateChart returns the path of the chart on disk: opts.Chart when it exists, else the chart fetched (from
// an OCI registry or a repository) into the Helm cache, as helm install does.
func locateChart(opts HelmOptions, settings *cli.EnvSettings) (string, error) {
	if _, err := os.Stat(opts.Chart); err == nil {
		return opts.Chart, nil
	}
	local := filepath.IsAbs(opts.Chart) || strings.HasPrefix(opts.Chart, ".") || strings.HasSuffix(opts.Chart, ".tgz")
	if local || !registry.IsOCI(opts.Chart) && opts.RepoURL == "" && !strings.Contains(opts.Chart, "/") {
		return "", fmt.Errorf("no such chart directory or file; name a chart directory, a packaged chart (.tgz), an oci:// reference, or repo/chart")
	}
	client, err := registryClient(opts, settings)
	if err != nil {
		return "", err
	}
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}, RegistryClient: client})
	inst.SetRegistryClient(client)
	cpo := &inst.ChartPathOptions
	cpo.Version, cpo.RepoURL, cpo.Username, cpo.Password = opts.Version, opts.RepoURL, opts.Username, opts.Password
	cpo.CertFile, cpo.KeyFile, cpo.CaFile = opts.CertFile, opts.KeyFile, opts.CAFile
	cpo.InsecureSkipTLSverify, cpo.PlainHTTP, cpo.PassCredentialsAll = opts.InsecureSkipTLSVerify, opts.PlainHTTP, opts.PassCredentialsAll
	if cpo.Version == "" && opts.Devel {
		cpo.Version = ">0.0.0-0"
	}
	path, err := cpo.LocateChart(opts.Chart, settings)
	switch {
	case err == nil:
		return path, nil
	case registry.IsOCI(opts.Chart):
		return "", fmt.Errorf("%v; check the reference, --version and your registry login (helm registry login)", err)
	case opts.RepoURL != "":
		return "", fmt.Errorf("%v; check the chart name, --version and --repo", err)
	default:
		return "", fmt.Errorf("%v; check the chart name and --version, and that helm repo list has its repository (or pass --repo)", err)
	}
}

// registryClient reaches OCI registries with the user's Helm logins, writing nothing to stdout.
func registryClient(opts HelmOptions, settings *cli.EnvSettings) (*registry.Client, error) {
	clientOpts := []registry.ClientOption{
		registry.ClientOptEnableCache(true),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(settings.RegistryConfig),
		registry.ClientOptBasicAuth(opts.Username, opts.Password),
	}
	if opts.PlainHTTP {
		clientOpts = append(clientOpts, registry.ClientOptPlainHTTP())
	}
	if opts.CertFile != "" && opts.KeyFile != "" || opts.CAFile != "" || opts.InsecureSkipTLSVerify {
		cfg, err := clientTLS(opts)
		if err != nil {
			return nil, err
		}
		clientOpts = append(clientOpts, registry.ClientOptHTTPClient(&http.Client{
			Transport: &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment},
		}))
	}
	return registry.NewClient(clientOpts...)
}

// clientTLS is Helm's TLS configuration for a registry: a client certificate, a CA, or no verification.
func clientTLS(opts HelmOptions) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: opts.InsecureSkipTLSVerify, MinVersion: tls.VersionTLS12}
	if opts.CertFile != "" && opts.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", opts.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
