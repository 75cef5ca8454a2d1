package scoreagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/headroom"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
)

// DefaultAddonName is the addon the agent serves when --addon-name is not given.
const DefaultAddonName = "score-agent"

// Options configure an agent.
type Options struct {
	// Hub reaches the hub with the addon's credentials (scoped to the cluster namespace).
	Hub *rest.Config
	// Spoke reads the managed cluster's nodes and pods, for the node-headroom plugin.
	Spoke client.Reader
	// ClusterName is the managed cluster's name, and so the hub namespace the agent reads and writes.
	ClusterName string
	// AddonName is the addon whose generators the agent measures; DefaultAddonName when empty.
	AddonName string
	// Guard is what the latency probes may reach (the --allow and --allow-ports flags).
	Guard guard.Config
	// Plugins are registered beside the built-in latency and node-headroom plugins.
	Plugins []scoreagent.Plugin
	// Manager are the manager's options (metrics and probe addresses, logger). The agent sets the scheme and
	// restricts the cache to the cluster namespace; leader election stays off, the agent runs one replica.
	Manager ctrl.Options
	// MaxConcurrentReconciles is how many generators are measured at once; 4 when 0.
	MaxConcurrentReconciles int
	// MaxConcurrentProbes bounds the scores of one generator measured at once; 4 when 0.
	MaxConcurrentProbes int
	// Now is the agent's clock; time.Now when nil. Tests move it.
	Now func() time.Time
}

// Scheme holds the types the agent reads and writes on the hub.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, scoresv1alpha1.AddToScheme, clusterv1alpha1.Install} {
		if err := add(s); err != nil {
			panic(err) // adding static types cannot fail at run time
		}
	}
	return s
}

// NewRegistry holds the agent's plugins: the latency probe through a guard with g's policy, the
// node-headroom plugin reading spoke, and extra.
func NewRegistry(g guard.Config, spoke client.Reader, extra ...scoreagent.Plugin) (*scoreagent.Registry, error) {
	return scoreagent.NewRegistry(append([]scoreagent.Plugin{latency.New(guard.New(g)), headroom.New(SpokeLister{Reader: spoke})}, extra...)...)
}

// NewManager returns a manager, not started, that runs the agent's controller against the hub.
func NewManager(o Options) (ctrl.Manager, error) {
	if o.AddonName == "" {
		o.AddonName = DefaultAddonName
	}
	var problems []error
	if o.Hub == nil {
		problems = append(problems, errors.New("no hub configuration"))
	}
	if o.Spoke == nil {
		problems = append(problems, errors.New("no client for the managed cluster"))
	}
	for what, name := range map[string]string{"the cluster name": o.ClusterName, "the addon name": o.AddonName} {
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			problems = append(problems, fmt.Errorf("%s %q is not a DNS label: %v", what, name, errs))
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	registry, err := NewRegistry(o.Guard, o.Spoke, o.Plugins...)
	if err != nil {
		return nil, err
	}

	mo := o.Manager
	mo.Scheme = Scheme()
	mo.Cache.DefaultNamespaces = map[string]cache.Config{o.ClusterName: {}}
	mo.LeaderElection = false
	mgr, err := ctrl.NewManager(o.Hub, mo)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		Registry:            registry,
		ClusterName:         o.ClusterName,
		AddonName:           o.AddonName,
		MaxConcurrentProbes: o.MaxConcurrentProbes,
		Now:                 o.Now,
		Recorder:            mgr.GetEventRecorder("score-agent"),
	}
	if err := r.SetupWithManager(mgr, o.MaxConcurrentReconciles); err != nil {
		return nil, err
	}
	return mgr, nil
}

// SetupWithManager registers the reconciler: it wakes on a generator's creation, spec change and deletion
// (its own status writes do not wake it), on the deletion of an AddOnPlacementScore it owns (written again),
// and at each generator's next measurement.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, maxConcurrentReconciles int) error {
	return setup(mgr, r, maxConcurrentReconciles)
}

// SetupClusters registers, in one controller, the reconcilers of several clusters that share mgr (the
// sandbox runs the agents of all its simulated clusters in one process): a generator goes to the reconciler
// of its namespace's cluster, and a generator in another namespace is ignored, as an agent ignores it.
func SetupClusters(mgr ctrl.Manager, byCluster map[string]*Reconciler, maxConcurrentReconciles int) error {
	return setup(mgr, reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		r, ok := byCluster[req.Namespace]
		if !ok {
			return ctrl.Result{}, nil
		}
		return r.Reconcile(ctx, req)
	}), maxConcurrentReconciles)
}

func setup(mgr ctrl.Manager, r reconcile.Reconciler, maxConcurrentReconciles int) error {
	if maxConcurrentReconciles <= 0 {
		maxConcurrentReconciles = 4
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("addonplacementscoregenerator").
		For(&scoresv1alpha1.AddOnPlacementScoreGenerator{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&clusterv1alpha1.AddOnPlacementScore{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: maxConcurrentReconciles}).
		Complete(r)
}
