package suite

import (
	"context"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/watchlist"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// ManagerOptions are what a suite varies between the managers it starts.
type ManagerOptions struct {
	// Name tells the managers of a spec apart in logs.
	Name string
	// MaxConcurrentWrites is controllers.Options.MaxConcurrentWrites; 16 when zero.
	MaxConcurrentWrites int
	// DecisionSettleTimeout is controllers.Options.DecisionSettleTimeout; the controller's default when zero.
	DecisionSettleTimeout time.Duration
	// LeaderElectionID turns leader election on, with a Lease of that name in LeaderElectionNamespace.
	LeaderElectionID        string
	LeaderElectionNamespace string
	// WrapClient, when set, wraps the manager's client (after the write recorder) to inject faults.
	WrapClient func(client.WithWatch) client.WithWatch
	// WrapCache, when set, wraps the cache the manager's client reads from.
	WrapCache func(client.Reader) client.Reader
}

// Manager is a PlacementManifestWork manager running in this process, set up as cmd/main.go sets it up, its
// client's writes recorded.
type Manager struct {
	ctrl.Manager
	Name string
	// Recorder holds every write the manager's client sent.
	Recorder *framework.WriteRecorder

	f        *Framework
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
	err      error
}

// StartManager starts a manager and registers its Stop with the cleanup of the node that calls it: a manager
// started in a spec stops when the spec ends, one started in BeforeSuite when the suite ends.
func (f *Framework) StartManager(o ManagerOptions) *Manager {
	// As cmd/main.go: the informers list, not streamed (the ManifestWorks' never do: internal/trimmedlist).
	watchlist.Off()
	m := &Manager{Name: o.Name, Recorder: &framework.WriteRecorder{}, f: f, done: make(chan struct{})}
	writes := o.MaxConcurrentWrites
	if writes == 0 {
		writes = 16
	}
	logger := logf.Log
	if o.Name != "" {
		logger = logger.WithName(o.Name)
	}
	cacheOpts, err := controllers.CacheOptions(f.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	opts := ctrl.Options{
		Scheme:                 controllers.Scheme(),
		Cache:                  cacheOpts,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logger,
		// Several managers run in this process one after the other (two at once for leader election), each
		// with the controller named "placementmanifestwork".
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		NewClient: func(c *rest.Config, options client.Options) (client.Client, error) {
			if o.WrapCache != nil && options.Cache != nil && options.Cache.Reader != nil {
				cached := *options.Cache
				cached.Reader = o.WrapCache(cached.Reader)
				options.Cache = &cached
			}
			recorded, err := m.Recorder.NewClient(c, options)
			if err != nil || o.WrapClient == nil {
				return recorded, err
			}
			return o.WrapClient(recorded.(client.WithWatch)), nil
		},
	}
	if o.LeaderElectionID != "" {
		opts.LeaderElection = true
		opts.LeaderElectionID = o.LeaderElectionID
		opts.LeaderElectionNamespace = o.LeaderElectionNamespace
		opts.LeaderElectionReleaseOnCancel = true
		opts.LeaseDuration = ptr.To(4 * time.Second)
		opts.RenewDeadline = ptr.To(3 * time.Second)
		opts.RetryPeriod = ptr.To(time.Second)
	}
	m.Manager, err = ctrl.NewManager(f.Config, opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	gomega.Expect(controllers.SetupWithManager(ctx, m.Manager, controllers.Options{
		MaxConcurrentReconciles: 4, MaxConcurrentWrites: writes, DecisionSettleTimeout: o.DecisionSettleTimeout,
	})).To(gomega.Succeed())

	f.mu.Lock()
	if f.running == nil {
		f.running = map[*Manager]bool{}
	}
	f.running[m] = true
	f.mu.Unlock()
	go func() {
		defer ginkgo.GinkgoRecover()
		defer close(m.done)
		m.err = m.Start(ctx)
	}()
	ginkgo.DeferCleanup(m.Stop)
	return m
}

// Stop cancels the manager and waits until Start has returned: every reconcile has ended and, with leader
// election, the Lease is released. Stopping a stopped manager does nothing.
func (m *Manager) Stop() {
	m.stopOnce.Do(func() {
		m.cancel()
		gomega.Eventually(m.done, m.f.Timeout, m.f.Interval).Should(gomega.BeClosed(), "manager %s stops", m.Name)
		gomega.Expect(m.err).NotTo(gomega.HaveOccurred(), "manager %s", m.Name)
		m.f.mu.Lock()
		delete(m.f.running, m)
		m.f.mu.Unlock()
	})
}

// Stopped tells whether the manager's Start has returned.
func (m *Manager) Stopped() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// Leading tells whether the manager has been elected leader (at once, without leader election).
func (m *Manager) Leading() bool {
	select {
	case <-m.Elected():
		return true
	default:
		return false
	}
}

// WorkWrites are the ManifestWork writes the manager sent to the API server.
func (m *Manager) WorkWrites() []framework.Write {
	return m.Recorder.Writes(func(w framework.Write) bool { return w.Kind == "ManifestWork" })
}

// Run starts m, a manager a spec builds itself (the transparent mode's, a score agent's), and returns a stop
// that cancels it and waits until its Start has returned without an error; stopping twice does nothing. The
// caller registers the stop with its cleanup, at the scope the manager lives for.
func (f *Framework) Run(m ctrl.Manager, name string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer ginkgo.GinkgoRecover()
		done <- m.Start(ctx)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			gomega.Eventually(done, f.Timeout, f.Interval).Should(gomega.Receive(gomega.BeNil()), "%s stops", name)
		})
	}
}
