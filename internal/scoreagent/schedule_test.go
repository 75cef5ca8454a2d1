package scoreagent

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
)

// fakeClock is the agent's clock in a test: it moves only when the test or a probe moves it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// timingOutProbe stands in for the latency plugin: it validates the options as the plugin does, and every run
// of a measurement times out, so a measurement takes the probe's worst case on the clock.
type timingOutProbe struct{ clock *fakeClock }

func (timingOutProbe) Name() string { return latency.Name }

func (timingOutProbe) Validate(req scoreagent.Request) error {
	_, err := latency.ParseOptions(req.Options)
	return err
}

func (p timingOutProbe) Measure(_ context.Context, req scoreagent.Request) (scoreagent.Result, error) {
	probe, err := latency.ParseOptions(req.Options)
	if err != nil {
		return scoreagent.Result{}, err
	}
	p.clock.advance(probe.WorstCase())
	return scoreagent.Result{Value: scoreagent.MinScore, Raw: probe.Timeout.String()}, nil
}

// TestScoresDoNotExpireBetweenMeasurements runs the agent's reconcile on a fake clock, each run of every
// probe timing out, one probe at a time: a generator the agent accepts gets each new validUntil written
// before the previous one passes, and one whose measurements could leave its scores expired is refused.
func TestScoresDoNotExpireBetweenMeasurements(t *testing.T) {
	probe := func(name string, runs int32, wait, timeout time.Duration) scoresv1alpha1.LatencyProbe {
		return scoresv1alpha1.LatencyProbe{Name: name, URL: "https://example.com/" + name, Runs: ptr.To(runs),
			WaitBetweenRuns: &metav1.Duration{Duration: wait}, Timeout: &metav1.Duration{Duration: timeout}}
	}
	cases := map[string]struct {
		latencies          []scoresv1alpha1.LatencyProbe
		interval, validFor time.Duration
		wantValid          bool
	}{
		"interval 5m, validFor 10m, 10 runs 60s apart: refused": {
			latencies: []scoresv1alpha1.LatencyProbe{probe("slow", 10, time.Minute, time.Second)},
			interval:  5 * time.Minute, validFor: 10 * time.Minute,
		},
		"interval 5m, validFor 10m, 3 runs 60s apart: accepted": {
			latencies: []scoresv1alpha1.LatencyProbe{probe("slow", 3, time.Minute, time.Second)},
			interval:  5 * time.Minute, validFor: 10 * time.Minute, wantValid: true,
		},
		"two probes that fit side by side but not one after the other: refused": {
			latencies: []scoresv1alpha1.LatencyProbe{probe("a", 5, 30*time.Second, 10*time.Second), probe("b", 5, 30*time.Second, 10*time.Second)},
			interval:  5 * time.Minute, validFor: 10 * time.Minute,
		},
		"two probes one after the other: accepted": {
			latencies: []scoresv1alpha1.LatencyProbe{probe("a", 5, 30*time.Second, 10*time.Second), probe("b", 5, 30*time.Second, 10*time.Second)},
			interval:  4 * time.Minute, validFor: 10 * time.Minute, wantValid: true,
		},
		"the shortest interval and validFor, the default probe: accepted": {
			latencies: []scoresv1alpha1.LatencyProbe{{Name: "plain", URL: "https://example.com/"}},
			interval:  10 * time.Second, validFor: 30 * time.Second, wantValid: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{now: t0}
			reg, err := scoreagent.NewRegistry(timingOutProbe{clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{
				ObjectMeta: metav1.ObjectMeta{Name: "gen", Namespace: "cluster1", UID: "u1", Generation: 1},
				Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
					AddOnPlacementSelector: scoresv1alpha1.AddOnSelector{Name: DefaultAddonName},
					Latencies:              tc.latencies,
					Interval:               &metav1.Duration{Duration: tc.interval},
					ValidFor:               &metav1.Duration{Duration: tc.validFor},
				},
			}
			c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(gen).
				WithStatusSubresource(&scoresv1alpha1.AddOnPlacementScoreGenerator{}, &clusterv1alpha1.AddOnPlacementScore{}).Build()
			r := &Reconciler{Client: c, APIReader: c, Registry: reg, ClusterName: "cluster1", AddonName: DefaultAddonName,
				MaxConcurrentProbes: 1, Now: clock.Now}
			ctx := context.Background()
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(gen)}

			var validUntil time.Time // of the score written last
			measurements := 0
			for step := 0; measurements < 4; step++ {
				if step > 100 {
					t.Fatalf("%d measurements in %d reconciles", measurements, step)
				}
				res, err := r.Reconcile(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				got := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
				if err := c.Get(ctx, req.NamespacedName, got); err != nil {
					t.Fatal(err)
				}
				valid := meta.FindStatusCondition(got.Status.Conditions, scoresv1alpha1.ConditionValid)
				if valid == nil {
					t.Fatal("no Valid condition")
				}
				if step == 0 && (valid.Status == metav1.ConditionTrue) != tc.wantValid {
					t.Errorf("Valid %s: %s; want valid: %v", valid.Status, valid.Message, tc.wantValid)
				}
				if valid.Status != metav1.ConditionTrue {
					return // nothing is measured or written: the watch brings the fixed generator
				}
				score := &clusterv1alpha1.AddOnPlacementScore{}
				if err := c.Get(ctx, req.NamespacedName, score); err != nil {
					t.Fatal(err)
				}
				if next := score.Status.ValidUntil.Time; !next.Equal(validUntil) {
					// A new measurement, written now.
					if !validUntil.IsZero() && !clock.Now().Before(validUntil) {
						t.Errorf("measurement %d: validUntil %s written at %s, after the previous one %s passed",
							measurements+1, next.Format(time.TimeOnly), clock.Now().Format(time.TimeOnly), validUntil.Format(time.TimeOnly))
					}
					validUntil = next
					measurements++
				}
				if res.RequeueAfter <= 0 {
					t.Fatalf("a valid generator is not requeued: %+v", res)
				}
				clock.advance(res.RequeueAfter)
			}
		})
	}
}
