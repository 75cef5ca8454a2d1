package main

import (
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
)

// Users of the hub. Each process gets its own, so the audit log tells their requests apart.
const (
	userHarness = "bench-harness"
	userLimit   = "bench-limit"
	userManager = "bench-pmw-manager"
	userOCM     = "bench-ocm-work-manager"
)

// mwrsCRD is the ManifestWorkReplicaSet CRD OCM's work hub manager needs, relative to the
// open-cluster-management.io/api module.
const mwrsCRD = "work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml"

// auditPolicy logs one Metadata event per finished request of the processes under test; nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["` + userLimit + `", "` + userManager + `", "` + userOCM + `"]
- level: None
`

// hub is the envtest API server every phase of a run shares.
type hub struct {
	env       *envhub.Hub
	auditPath string
	// kubeconfigs of the processes under test, by user.
	kubeconfigs map[string]string
	// harness is the unthrottled client the harness (and the agents it plays) use.
	harness client.Client
	// harnessCfg and limitCfg are the rest configs of the harness and of the limit client, unthrottled.
	harnessCfg, limitCfg *rest.Config
}

// scheme holds the project's types and OCM's ManifestWorkReplicaSet.
func scheme() *runtime.Scheme {
	s := controllers.Scheme()
	if err := ocmworkv1alpha1.Install(s); err != nil {
		panic(err)
	}
	return s
}

// startHub starts the hub's etcd and kube-apiserver, with the extra kube-apiserver flags extra (key=value).
func startHub(dir string, extra []string) (*hub, error) {
	// The ManifestWorkReplicaSet CRD of the api version OCM's binary is built with; the project's otherwise.
	apiDir, err := ocmAPIDir()
	if err != nil {
		if apiDir, err = envhub.ModuleDir("open-cluster-management.io/api"); err != nil {
			return nil, err
		}
	}
	users := []string{userHarness, userLimit, userManager, userOCM}
	opts := envhub.Options{
		Dir:           dir,
		ExtraCRDPaths: []string{filepath.Join(apiDir, mwrsCRD)},
		AuditPolicy:   auditPolicy,
		// The log backend rotates at 100 MB when maxsize is 0; a run writes a few hundred MB. Rotation is
		// followed by the tailer anyway.
		APIServerArgs: map[string]string{"audit-log-maxsize": "100000"},
		// etcd refuses writes once its database reaches its quota, 2 GiB by default; the rows of 50,000 works
		// write several GiB of revisions before the API server's compaction (every 5 minutes) frees them.
		EtcdArgs: map[string]string{"quota-backend-bytes": strconv.FormatInt(8<<30, 10)},
	}
	flags, err := flagValues(extra)
	if err != nil {
		return nil, fmt.Errorf("-apiserver-args: %w", err)
	}
	maps.Copy(opts.APIServerArgs, flags)
	for _, u := range users {
		opts.Users = append(opts.Users, envhub.User{Name: u})
	}
	eh, err := envhub.Start(opts)
	if err != nil {
		return nil, err
	}
	h := &hub{env: eh, auditPath: eh.AuditLog, kubeconfigs: map[string]string{}}
	for _, u := range users {
		h.kubeconfigs[u] = eh.Kubeconfig(u)
	}
	unthrottled := func(u string) *rest.Config {
		cfg := eh.UserConfig(u)
		cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
		return cfg
	}
	h.harnessCfg = unthrottled(userHarness)
	if h.limitCfg, err = boundedConnections(unthrottled(userLimit), limitConnections); err != nil {
		h.stop()
		return nil, err
	}
	if h.harness, err = client.New(h.harnessCfg, client.Options{Scheme: scheme()}); err != nil {
		h.stop()
		return nil, err
	}
	return h, nil
}

// limitConnections bounds the limit client's connections, not its requests: each HTTP/2 connection carries up
// to 250 requests at once, so 32 carry 8,000.
const limitConnections = 32

// boundedConnections is cfg with a transport that opens at most n connections. Go's transport otherwise dials a
// connection for every request waiting for one: 5,000 creates at once start thousands of TLS handshakes, which
// take the API server's CPU from the creates and the harness's file descriptors (an earlier run failed with
// "socket: too many open files" after 12,332 retries).
func boundedConnections(cfg *rest.Config, n int) (*rest.Config, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	out := rest.CopyConfig(cfg)
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.Transport = &http.Transport{
		TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, TLSHandshakeTimeout: 10 * time.Second,
		MaxConnsPerHost: n, MaxIdleConnsPerHost: n, IdleConnTimeout: 90 * time.Second,
	}
	return out, nil
}

func (h *hub) stop() {
	if h.env != nil {
		_ = h.env.Stop()
	}
}

// flagValues maps each of args, "key=value" or "--key=value", to its value.
func flagValues(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	for _, kv := range args {
		k, v, ok := strings.Cut(strings.TrimLeft(kv, "-"), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}
