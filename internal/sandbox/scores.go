package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
)

// The scores sample's names: each cluster's AddOnPlacementScoreGenerator and AddOnPlacementScore, and the score
// in it that the Placement "nearest" and the PlacementManifestWork "nearest" read.
const (
	ScoreResource = "latency"
	ScoreName     = "users"
)

// regionLatency is the simulated latency from each region's clusters to the users of the scores sample.
var regionLatency = map[string]time.Duration{"us-east": 10 * time.Millisecond, "eu-west": 60 * time.Millisecond, "ap-south": 200 * time.Millisecond}

// SimulatedLatency is the i-th (0-based) sandbox cluster's simulated latency to the users: its region's, plus
// 10 ms per cluster before it up to 110 ms, so that neighbours do not tie (with 5 clusters: 10, 70, 220, 40
// and 100 ms) and no latency nears the probes' timeout.
func SimulatedLatency(i int) time.Duration {
	return regionLatency[ClusterLabels("", i)[LabelRegion]] + time.Duration(i%12)*10*time.Millisecond
}

// latencyServer answers GET /<cluster> after that cluster's simulated latency: the "users" the score agents
// measure their latency to.
type latencyServer struct {
	server *http.Server
	url    string
}

func startLatencyServer(latencies map[string]time.Duration) (*latencyServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the simulated users: %w", err)
	}
	s := &latencyServer{url: "http://" + ln.Addr().String()}
	s.server = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := latencies[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("ok\n"))
	})}
	go func() { _ = s.server.Serve(ln) }()
	return s, nil
}

func (s *latencyServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.server.Shutdown(ctx)
}

// Generator is the scores sample's AddOnPlacementScoreGenerator of a cluster: the latency to the users, which
// the sandbox serves at url, measured twice every 10 seconds, 100 ms scoring 0.
func Generator(cluster, url string) *scoresv1alpha1.AddOnPlacementScoreGenerator {
	return &scoresv1alpha1.AddOnPlacementScoreGenerator{
		ObjectMeta: metav1.ObjectMeta{Name: ScoreResource, Namespace: cluster},
		Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
			AddOnPlacementSelector: scoresv1alpha1.AddOnSelector{Name: scoreagent.DefaultAddonName},
			Latencies: []scoresv1alpha1.LatencyProbe{{
				Name: ScoreName, URL: url + "/" + cluster, Runs: ptr.To[int32](2),
				Scale: &scoresv1alpha1.LatencyScale{HalfMillis: 100},
			}},
			Interval: &metav1.Duration{Duration: 10 * time.Second},
		},
	}
}

// startScoreAgents serves the simulated users, writes each cluster's generator and runs every cluster's score
// agent in mgr (the simulated agents' manager, whose cache holds the cluster namespaces), as the addon would run
// one on each cluster. The agents may reach the local server only (--allow=127.0.0.1/32).
func (r *runner) startScoreAgents(ctx context.Context, c client.Client, mgr ctrl.Manager, clusters []string) error {
	latencies := make(map[string]time.Duration, len(clusters))
	for i, name := range clusters {
		latencies[name] = SimulatedLatency(i)
	}
	srv, err := startLatencyServer(latencies)
	if err != nil {
		return err
	}
	r.onStop(srv.stop)
	allow, err := guard.ParseAllowlist("127.0.0.1/32")
	if err != nil {
		return err
	}
	agents := make(map[string]*scoreagent.Reconciler, len(clusters))
	for _, name := range clusters {
		registry, err := scoreagent.NewRegistry(guard.Config{Allow: allow}, mgr.GetAPIReader())
		if err != nil {
			return err
		}
		agents[name] = &scoreagent.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Registry: registry,
			ClusterName: name, AddonName: scoreagent.DefaultAddonName}
	}
	if err := scoreagent.SetupClusters(mgr, agents, 0); err != nil {
		return fmt.Errorf("setting up the score agents: %w", err)
	}
	var errs []error
	for _, name := range clusters {
		if err := c.Create(ctx, Generator(name, srv.url)); err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating the score generator of %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
