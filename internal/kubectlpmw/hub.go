package kubectlpmw

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
)

// hubFlags reach the hub as kubectl does: the kubeconfig loading rules (--kubeconfig, else $KUBECONFIG, else
// ~/.kube/config), a context and a namespace (the context's when -n is not given).
type hubFlags struct {
	kubeconfig     string
	context        string
	namespace      string
	requestTimeout time.Duration
}

func (f *hubFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Path to the hub's kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "The kubeconfig context to use (default: its current context)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "Namespace of the PlacementManifestWork (default: the context's namespace)")
	fs.DurationVar(&f.requestTimeout, "request-timeout", 30*time.Second, "How long to wait for each request to the hub")
}

// hub is a client of the hub and the namespace the command works in.
type hub struct {
	client    client.Client
	namespace string
	// server is the API server's address, for messages.
	server string
}

// connect loads the kubeconfig and makes a client; the API server is first contacted by the first request.
func (f *hubFlags) connect() (*hub, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.context}
	overrides.Context.Namespace = f.namespace
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, hubError(kubeconfigError(f.kubeconfig, err))
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, hubError(fmt.Errorf("reading the namespace of the kubeconfig context: %w", err))
	}
	cfg.Timeout = f.requestTimeout
	c, err := client.New(cfg, client.Options{Scheme: controllers.Scheme()})
	if err != nil {
		return nil, hubError(fmt.Errorf("cannot reach the hub at %s: %w; check --kubeconfig and --context", cfg.Host, err))
	}
	return &hub{client: c, namespace: ns, server: cfg.Host}, nil
}

// explain turns an error of a request for a kind (plural, such as "placementmanifestworks") and an object's
// description into the one-line error the command ends with: NotFound is bad input (ExitUsage); anything else
// means the hub cannot be used (ExitHub), and the message says what to do.
func (h *hub) explain(err error, resource, what string) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return usageError("%s not found on the hub at %s", what, h.server)
	case meta.IsNoMatchError(err):
		return hubError(fmt.Errorf("the hub at %s does not serve %s: install its CRD (PlacementManifestWork: docs/install.md)", h.server, resource))
	case apierrors.IsForbidden(err):
		return hubError(fmt.Errorf("reading %s is forbidden: %s; ask your hub admin for the Role in docs/user-guide.md", what, apiMessage(err)))
	case apierrors.IsUnauthorized(err):
		return hubError(fmt.Errorf("the hub at %s did not accept your credentials: %s; log in again or check --context", h.server, apiMessage(err)))
	case errors.As(err, &status):
		return hubError(fmt.Errorf("reading %s: the hub at %s answered: %w", what, h.server, err))
	default:
		return hubError(fmt.Errorf("cannot reach the hub at %s: %w; check --kubeconfig, --context and the network", h.server, err))
	}
}

func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// kubeconfigError says why no kubeconfig could be used, and what to do, without clientcmd's advice to set
// KUBERNETES_MASTER.
func kubeconfigError(explicit string, err error) error {
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	switch {
	case !clientcmd.IsEmptyConfig(err):
		return fmt.Errorf("no usable kubeconfig for the hub: %w; check --kubeconfig, KUBECONFIG and --context", err)
	case explicit == "" && env != "":
		return fmt.Errorf("no kubeconfig for the hub: KUBECONFIG is %s, and none of its files holds a configuration (missing?); fix it or pass --kubeconfig", env)
	default:
		return errors.New("no kubeconfig for the hub: none at --kubeconfig, KUBECONFIG or ~/.kube/config; pass --kubeconfig or set KUBECONFIG")
	}
}

// completeNames completes a PlacementManifestWork name from the hub (for the first argument only), as kubectl
// completes resource names; nothing when the hub cannot be read.
func (f *hubFlags) completeNames(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.complete(cmd, &workv1alpha1.PlacementManifestWorkList{}, true, toComplete)
}

// completeNamespaces completes -n from the hub's namespaces; nothing when they cannot be listed.
func (f *hubFlags) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return f.complete(cmd, &corev1.NamespaceList{}, false, toComplete)
}

// complete lists the objects of list (in the command's namespace when inNamespace) and returns the names that
// start with toComplete; none when the hub cannot be read.
func (f *hubFlags) complete(cmd *cobra.Command, list client.ObjectList, inNamespace bool, toComplete string) ([]string, cobra.ShellCompDirective) {
	h, err := f.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var opts []client.ListOption
	if inNamespace {
		opts = append(opts, client.InNamespace(h.namespace))
	}
	if err := h.client.List(cmd.Context(), list, opts...); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, item := range items {
		if o, ok := item.(client.Object); ok && strings.HasPrefix(o.GetName(), toComplete) {
			names = append(names, o.GetName())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
