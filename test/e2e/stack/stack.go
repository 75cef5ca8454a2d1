//go:build e2e

// Package stack runs a real Open Cluster Management hub and spoke clusters on one machine, every component a
// plain process built from Go modules: no containers, no kind.
//
//   - The hub: kube-apiserver and etcd (envtest) with the OCM and PlacementManifestWork CRDs, a
//     kube-controller-manager running only the garbage collector, OCM's placement controller and the
//     PlacementManifestWork manager binary.
//   - Each spoke: its own kube-apiserver and etcd, kube-controller-manager, kube-scheduler and kwok with one
//     fake Node (so Deployments, ReplicaSets and Jobs really roll out and pods become Ready), OCM's work
//     agent connected to the hub for the spoke's cluster namespace, and this project's score agent
//     (cmd/score-agent) with a hub kubeconfig, as the work agent runs, answering to the addon name ScoreAddOn
//     and allowed to probe loopback addresses (the scenarios' latency servers run in the test process).
//   - The fleet API server: a kube-apiserver and etcd of their own with no CRDs and no controllers at all (no
//     kube-controller-manager), so a Deployment stored there is a template. The manager runs with
//     --fleet-kubeconfig pointing at it (transparent mode, docs/transparent.md); it acts only on namespaces
//     opted in with a label, so the scenarios that write PlacementManifestWorks are unaffected.
//
// The stack plays OCM's registration: it registers every spoke as an accepted, available ManagedCluster in
// the ManagedClusterSet "e2e" and binds the set to namespaces (BindClusterSet). docs/e2e.md describes it.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// appliedManifestWorkCRD is the one CRD a spoke needs (the work agent records what it applied there), relative
// to the open-cluster-management.io/api module.
const appliedManifestWorkCRD = "work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml"

// readyTimeout bounds each readiness check of Start: generous for a machine shared with builds.
const readyTimeout = 2 * time.Minute

// Options describe a stack.
type Options struct {
	// Binaries are the programs to run (BuildBinaries).
	Binaries Binaries
	// Dir is the run's folder (kubeconfigs, logs, certificates, etcd data); a new temporary one when empty.
	Dir string
	// Spokes is the number of spoke clusters, named cluster1..clusterN; 3 when zero.
	Spokes int
	// ClusterLabels are put on every ManagedCluster besides the clusterset label and "name".
	ClusterLabels map[string]string
	// StatusSyncInterval is how often the work agents report status and feedback to the hub; 2s when zero
	// (the agent's own default of 10s makes every status check wait about 11s).
	StatusSyncInterval time.Duration
	// Progress receives one line per start-up step; nil discards them.
	Progress io.Writer
}

// Cluster is the hub or one spoke.
type Cluster struct {
	// Name is "hub" or the spoke's ManagedCluster name.
	Name string
	// Kubeconfig is an admin (system:masters) kubeconfig file.
	Kubeconfig string
	// Config is the same admin's client configuration.
	Config *rest.Config
	// Client is a client of that admin: HubScheme on the hub, client-go's scheme on spokes.
	Client client.Client

	env *envtest.Environment
	// scoreAgentProbe is the readiness URL of a spoke's score agent.
	scoreAgentProbe string
}

// Stack is a running hub with its spokes.
type Stack struct {
	// Dir is the run's folder; Stop leaves it in place (see Remove).
	Dir    string
	Hub    *Cluster
	Spokes []*Cluster
	// Fleet is the fleet API server of the transparent mode; its Client has client-go's scheme.
	Fleet *Cluster

	opts         Options
	tmpDir       string
	managerProbe string
	watchdog     *proc.Watchdog

	mu      sync.Mutex
	procs   []*proc.Process
	stopped bool
}

// Start starts the hub and the spokes, registers the spokes and returns once the placement controller
// decides every spoke and every work agent has applied and removed a canary ManifestWork. On error everything
// already started is stopped; the folder is kept for its logs.
func Start(ctx context.Context, opts Options) (_ *Stack, err error) {
	if opts.Spokes == 0 {
		opts.Spokes = 3
	}
	if opts.StatusSyncInterval == 0 {
		opts.StatusSyncInterval = 2 * time.Second
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	s := &Stack{Dir: opts.Dir, opts: opts}
	if s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "pmw-e2e-"); err != nil {
			return nil, fmt.Errorf("creating the run's folder: %w", err)
		}
	}
	s.tmpDir = filepath.Join(s.Dir, "tmp")
	for _, d := range []string{s.tmpDir, filepath.Join(s.Dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if s.watchdog, err = proc.StartWatchdog(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()

	s.Hub = &Cluster{Name: "hub"}
	s.Fleet = &Cluster{Name: "fleet"}
	for i := range opts.Spokes {
		s.Spokes = append(s.Spokes, &Cluster{Name: fmt.Sprintf("cluster%d", i+1)})
	}
	s.progress("starting %d API servers (hub, %d spokes and the fleet API server) in %s", len(s.Spokes)+2, len(s.Spokes), s.Dir)
	if err := s.startAPIServers(); err != nil {
		return nil, err
	}
	for _, c := range s.Spokes {
		s.progress("starting %s: kube-controller-manager, kube-scheduler, kwok, work agent, score agent", c.Name)
		if err := s.startSpoke(ctx, c); err != nil {
			return nil, fmt.Errorf("starting spoke %s: %w", c.Name, err)
		}
	}
	s.progress("starting the hub's garbage collector, placement controller and manager; registering the spokes")
	if err := s.startHub(ctx); err != nil {
		return nil, fmt.Errorf("starting the hub: %w", err)
	}
	if err := s.register(ctx); err != nil {
		return nil, fmt.Errorf("registering the spokes: %w", err)
	}
	if err := s.BindClusterSet(ctx, BoundNamespace); err != nil {
		return nil, err
	}
	s.progress("waiting for the manager, the score agents, the spokes' nodes, the placement controller, the hub's garbage collector and every work agent")
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Stack) progress(format string, args ...any) {
	_, _ = fmt.Fprintf(s.opts.Progress, "e2e stack: "+format+"\n", args...)
}

// startAPIServers starts every cluster's kube-apiserver and etcd, and the fleet API server's, at once: most of
// their start-up is waiting (etcd, CRDs becoming established), so in parallel it takes about as long as one.
func (s *Stack) startAPIServers() error {
	crds, err := envhub.CRDPaths()
	if err != nil {
		return err
	}
	apiDir, err := envhub.ModuleDir("open-cluster-management.io/api")
	if err != nil {
		return err
	}
	clusters := append([]*Cluster{s.Hub, s.Fleet}, s.Spokes...)
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			switch c {
			case s.Hub:
				errs[i] = s.startAPIServer(c, crds, false)
			case s.Fleet:
				// No CRDs: the transparent mode reads built-in kinds only.
				errs[i] = s.startAPIServer(c, []string{}, false)
			default:
				errs[i] = s.startAPIServer(c, []string{filepath.Join(apiDir, appliedManifestWorkCRD)}, true)
			}
		})
	}
	wg.Wait()
	// envtest does not tell the PIDs of the processes it started; they are this process's only children so far
	// besides the watchdog.
	s.watchdog.Watch(proc.ChildPIDs()...)
	return errors.Join(errs...)
}

// startAPIServer starts one cluster's etcd and kube-apiserver with its CRDs and writes an admin kubeconfig.
// Spokes get ServiceAccount admission back (envtest turns it off): pods then get their ServiceAccount as on a
// real cluster, with kube-controller-manager minting the tokens.
func (s *Stack) startAPIServer(c *Cluster, crds []string, spoke bool) error {
	apiLog, err := os.Create(filepath.Join(s.Dir, "logs", c.Name+"-kube-apiserver.log"))
	if err != nil {
		return fmt.Errorf("creating a log: %w", err)
	}
	defer apiLog.Close()
	etcdLog, err := os.Create(filepath.Join(s.Dir, "logs", c.Name+"-etcd.log"))
	if err != nil {
		return fmt.Errorf("creating a log: %w", err)
	}
	defer etcdLog.Close()

	opts := envhub.Options{
		// Certificates and data kept in the run's folder so a contributor finds the certificates and the
		// service-account key there.
		Dir:          filepath.Join(s.Dir, c.Name),
		CertDir:      "pki",
		EtcdDir:      "etcd",
		Assets:       s.opts.Binaries.KubeDir,
		CRDPaths:     crds,
		Users:        []envhub.User{{Name: e2eAdmin, Kubeconfig: "kubeconfig"}},
		APIServerOut: apiLog,
		EtcdOut:      etcdLog,
	}
	if spoke {
		opts.APIServerArgs = map[string]string{"disable-admission-plugins": ""}
	}
	h, err := envhub.Start(opts)
	if err != nil {
		return fmt.Errorf("starting the API server of %s: %w", c.Name, err)
	}
	c.env, c.Kubeconfig, c.Config = h.Env, h.Kubeconfig(e2eAdmin), h.UserConfig(e2eAdmin)
	scheme := clientgoscheme.Scheme
	if c == s.Hub {
		scheme = HubScheme()
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("creating a client of %s: %w", c.Name, err)
	}
	return nil
}

// e2eAdmin is the user (system:masters) of every cluster's kubeconfig.
const e2eAdmin = "e2e-admin"

// startSpoke starts the spoke's controllers, kwok with its Node, the work agent and the score agent.
func (s *Stack) startSpoke(ctx context.Context, c *Cluster) error {
	b := s.opts.Binaries
	ports := make([]int, 4)
	for i := range ports {
		p, err := proc.FreePort()
		if err != nil {
			return err
		}
		ports[i] = p
	}
	kubeconfigs := kubeconfigFlags(c)
	if err := s.startControllerManager(c, "*", ports[0]); err != nil {
		return err
	}
	// kwok does not schedule pods.
	sched := slices.Concat(kubeconfigs, []string{"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[1])})
	if err := s.startProcess(c.Name+"-kube-scheduler", filepath.Join(b.KubeDir, "kube-scheduler"), sched); err != nil {
		return err
	}
	// kwok's "fast" stages (nodes Ready with a lease, pods Running and Ready at once, Job pods completing), and
	// not a ~/.kwok/kwok.yaml of the user's.
	kwok := []string{"--kubeconfig=" + c.Kubeconfig, "--config=" + filepath.Join(b.KwokDir, "stages.yaml"), "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40", "--cidr=10.0.0.1/24"}
	if err := s.startProcess(c.Name+"-kwok", filepath.Join(b.KwokDir, "kwok"), kwok); err != nil {
		return err
	}
	if err := c.Client.Create(ctx, kwokNode("kwok-node-0")); err != nil {
		return fmt.Errorf("creating the kwok node: %w", err)
	}
	if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AgentNamespace}}); err != nil {
		return fmt.Errorf("creating the agent's namespace: %w", err)
	}
	// The hub connection is read from --workload-source-config; --hub-kubeconfig alone is not enough.
	agent := []string{"agent", "--spoke-cluster-name=" + c.Name, "--agent-id=" + c.Name + "-agent",
		"--kubeconfig=" + c.Kubeconfig,
		"--workload-source-config=" + s.Hub.Kubeconfig, "--hub-kubeconfig=" + s.Hub.Kubeconfig,
		"--namespace=" + AgentNamespace, "--disable-leader-election",
		"--status-sync-interval=" + s.opts.StatusSyncInterval.String(),
		"--listen=127.0.0.1:" + strconv.Itoa(ports[2])}
	if err := s.startProcess(c.Name+"-work-agent", filepath.Join(b.OCMDir, "work"), agent); err != nil {
		return err
	}
	return s.startScoreAgent(c, ports[3])
}

// startScoreAgent starts the spoke's score agent as the work agent runs: with the hub's kubeconfig instead of
// the credentials OCM's addon registration would give it. It may probe 127.0.0.1, where the scenarios' latency
// servers listen (the agent refuses loopback addresses unless allowed).
func (s *Stack) startScoreAgent(c *Cluster, probePort int) error {
	c.scoreAgentProbe = "http://127.0.0.1:" + strconv.Itoa(probePort) + "/readyz"
	args := []string{"--hub-kubeconfig=" + s.Hub.Kubeconfig, "--cluster-name=" + c.Name, "--addon-name=" + ScoreAddOn,
		"--kubeconfig=" + c.Kubeconfig, "--allow=127.0.0.1/32",
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort)}
	return s.startProcess(c.Name+"-score-agent", s.opts.Binaries.ScoreAgent, args)
}

// kubeconfigFlags are the flags that point a Kubernetes controller at the cluster, as its admin.
func kubeconfigFlags(c *Cluster) []string {
	return []string{"--kubeconfig=" + c.Kubeconfig, "--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig}
}

// startControllerManager starts a kube-controller-manager for the cluster running the given controllers
// (its --controllers flag), its secure port on port.
func (s *Stack) startControllerManager(c *Cluster, controllers string, port int) error {
	// The root CA stays unset: envtest's apiserver.crt is a serving certificate, not a CA.
	args := slices.Concat(kubeconfigFlags(c), []string{"--leader-elect=false", "--controllers=" + controllers,
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + filepath.Join(c.env.ControlPlane.APIServer.CertDir, "sa-signer.key"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port)})
	return s.startProcess(c.Name+"-kube-controller-manager", filepath.Join(s.opts.Binaries.KubeDir, "kube-controller-manager"), args)
}

// startHub starts the hub's garbage collector, the placement controller and the manager, the manager in
// transparent mode with the fleet API server's kubeconfig.
//
// The garbage collector (a kube-controller-manager running only that controller) does on the hub what it does
// on every real one, and OCM relies on it: the placement controller sets the Placement as owner of its
// PlacementDecisions but never deletes them with the Placement, and it reuses an existing decision by name,
// patching only its status and labels. A Placement deleted and created again (kubectl replace --force, a
// GitOps re-sync) is decided afresh only once the collector has removed the old Placement's decisions.
func (s *Stack) startHub(ctx context.Context) error {
	if err := s.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: HubNamespace}}); err != nil {
		return fmt.Errorf("creating %s: %w", HubNamespace, err)
	}
	gcPort, err := proc.FreePort()
	if err != nil {
		return err
	}
	if err := s.startControllerManager(s.Hub, "garbagecollector", gcPort); err != nil {
		return err
	}
	placementPort, err := proc.FreePort()
	if err != nil {
		return err
	}
	placement := []string{"controller", "--kubeconfig=" + s.Hub.Kubeconfig, "--namespace=" + HubNamespace,
		"--disable-leader-election", "--listen=127.0.0.1:" + strconv.Itoa(placementPort)}
	if err := s.startProcess("hub-placement-controller", filepath.Join(s.opts.Binaries.OCMDir, "placement"), placement); err != nil {
		return err
	}
	probePort, err := proc.FreePort()
	if err != nil {
		return err
	}
	s.managerProbe = "http://127.0.0.1:" + strconv.Itoa(probePort) + "/readyz"
	manager := []string{"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probePort),
		"--fleet-kubeconfig=" + s.Fleet.Kubeconfig}
	return s.startProcess("hub-manager", s.opts.Binaries.Manager, manager, "KUBECONFIG="+s.Hub.Kubeconfig)
}

// register plays OCM's registration for the spokes (ocmsim.Join): the ManagedClusterSet and, per spoke, its
// hub namespace and an accepted, available ManagedCluster in the set.
func (s *Stack) register(ctx context.Context) error {
	names := make([]string, 0, len(s.Spokes))
	for _, c := range s.Spokes {
		names = append(names, c.Name)
	}
	labels := func(string, int) map[string]string { return s.opts.ClusterLabels }
	return ocmsim.Join(ctx, s.Hub.Client, names, ocmsim.JoinOptions{ClusterSet: ClusterSet, Labels: labels})
}

// BindClusterSet binds the set to a hub namespace (creating the namespace when missing), as bound by OCM's
// registration controller (ocmsim.Bind), so Placements there can select the spokes.
func (s *Stack) BindClusterSet(ctx context.Context, namespace string) error {
	if err := ocmsim.Bind(ctx, s.Hub.Client, ClusterSet, namespace); err != nil {
		return fmt.Errorf("binding the clusterset to %s: %w", namespace, err)
	}
	return nil
}

// waitReady checks every component end to end, so that a broken stack fails here with the component named,
// not later as a scenario's timeout.
func (s *Stack) waitReady(ctx context.Context) error {
	if err := s.poll(ctx, "the manager to be ready", probe(s.managerProbe)); err != nil {
		return err
	}
	for _, c := range s.Spokes {
		if err := s.poll(ctx, "the score agent of "+c.Name+" to be ready", probe(c.scoreAgentProbe)); err != nil {
			return err
		}
	}
	for _, c := range s.Spokes {
		if err := s.poll(ctx, c.Name+"'s kwok node to be Ready and its default ServiceAccount to exist", func(ctx context.Context) error {
			node := &corev1.Node{}
			if err := c.Client.Get(ctx, client.ObjectKey{Name: "kwok-node-0"}, node); err != nil {
				return err
			}
			if !nodeReady(node) {
				return errors.New("the node is not Ready (kwok)")
			}
			// Pods are refused until it exists (ServiceAccount admission); kube-controller-manager creates it.
			return c.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		}); err != nil {
			return err
		}
	}
	if err := s.checkPlacement(ctx); err != nil {
		return err
	}
	for _, c := range s.Spokes {
		if err := s.checkAgent(ctx, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// probe checks that a readiness endpoint answers 200.
func probe(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz answered %s", resp.Status)
		}
		return nil
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// checkPlacement waits until the placement controller decides every spoke for a canary Placement, then until
// the garbage collector removes its decisions once it is deleted.
func (s *Stack) checkPlacement(ctx context.Context) error {
	hub := s.Hub.Client
	p := canaryPlacement(BoundNamespace)
	if err := hub.Create(ctx, p); err != nil {
		return fmt.Errorf("creating the canary Placement: %w", err)
	}
	if err := s.poll(ctx, "the placement controller to decide every spoke", func(ctx context.Context) error {
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := hub.List(ctx, list, client.InNamespace(BoundNamespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: canaryName}); err != nil {
			return err
		}
		decided := 0
		for _, d := range list.Items {
			decided += len(d.Status.Decisions)
		}
		if decided != len(s.Spokes) {
			return fmt.Errorf("%d of %d clusters decided", decided, len(s.Spokes))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := hub.Delete(ctx, p); err != nil {
		return fmt.Errorf("deleting the canary Placement: %w", err)
	}
	// Nothing but the garbage collector removes the decisions of a deleted Placement.
	return s.poll(ctx, "the hub's garbage collector to delete the PlacementDecisions of a deleted Placement", func(ctx context.Context) error {
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := hub.List(ctx, list, client.InNamespace(BoundNamespace), client.MatchingLabels{clusterv1beta1.PlacementLabel: canaryName}); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d PlacementDecisions of the deleted canary Placement are left", len(list.Items))
		}
		return nil
	})
}

// checkAgent waits until the cluster's work agent applies a canary ManifestWork, then until it has removed
// it again (the agent's finalizer goes once the ConfigMap is gone from the spoke).
func (s *Stack) checkAgent(ctx context.Context, cluster string) error {
	hub := s.Hub.Client
	w, err := canaryWork(cluster)
	if err != nil {
		return err
	}
	if err := hub.Create(ctx, w); err != nil {
		return fmt.Errorf("creating the canary ManifestWork of %s: %w", cluster, err)
	}
	if err := s.poll(ctx, "the work agent of "+cluster+" to apply a ManifestWork", func(ctx context.Context) error {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			if !meta.IsStatusConditionTrue(w.Status.Conditions, t) {
				return fmt.Errorf("the ManifestWork is not %s", t)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := hub.Delete(ctx, w); err != nil {
		return fmt.Errorf("deleting the canary ManifestWork of %s: %w", cluster, err)
	}
	return s.poll(ctx, "the work agent of "+cluster+" to remove a deleted ManifestWork", func(ctx context.Context) error {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(w), w); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the ManifestWork is still there (%v)", err)
		}
		return nil
	})
}

// poll calls check until it returns nil, a process of the stack exits, or readyTimeout passes.
func (s *Stack) poll(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		last := check(ctx)
		if last == nil {
			return nil
		}
		if err := s.Exited(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: not within %s: %w", what, readyTimeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Exited reports the processes of the stack that have exited, each with the end of its log; nil when all
// run. A scenario that times out should check it: a crashed agent looks like a slow one otherwise.
func (s *Stack) Exited() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	var errs []error
	for _, p := range s.procs {
		errs = append(errs, p.ExitError())
	}
	return errors.Join(errs...)
}

// Stop stops every process and API server of the stack, leaving the run's folder. It is safe to call twice.
func (s *Stack) Stop() error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	procs := s.procs
	s.mu.Unlock()

	// Everything at once: each process gets proc.DefaultGrace, and none needs another to stop cleanly.
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Stop() })
	}
	wg.Wait()
	// The API servers last: the processes above talk to them until they are gone.
	for _, c := range append([]*Cluster{s.Hub, s.Fleet}, s.Spokes...) {
		if c != nil && c.env != nil {
			wg.Go(func() {
				if err := c.env.Stop(); err != nil {
					s.mu.Lock()
					errs = append(errs, fmt.Errorf("stopping the API server of %s: %w", c.Name, err))
					s.mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	s.watchdog.Stop()
	return errors.Join(errs...)
}

// Remove deletes the run's folder; call it after Stop when the logs are not needed.
func (s *Stack) Remove() error {
	if err := os.RemoveAll(s.Dir); err != nil {
		return fmt.Errorf("removing %s: %w", s.Dir, err)
	}
	return nil
}

// Spoke returns the spoke of that name, or nil.
func (s *Stack) Spoke(name string) *Cluster {
	for _, c := range s.Spokes {
		if c.Name == name {
			return c
		}
	}
	return nil
}
