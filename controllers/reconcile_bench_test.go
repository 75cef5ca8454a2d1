package controllers

import (
	"fmt"
	"testing"
	"time"

	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// benchFleet is the benchmark's PlacementManifestWork (its Deployment split, 2 replicas per cluster) over n
// clusters, converged: every cluster's work written as the manager writes it, trimmed as the cache keeps it,
// and reported healthy by the simulated agent.
func benchFleet(tb testing.TB, n int, now time.Time) (*workv1alpha1.PlacementManifestWork, *inputs) {
	tb.Helper()
	p, fleet := benchPMW("1", n, nil), benchClusters(n)
	in := overridesInputs(tb, p, fleet, nil)
	d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		tb.Fatalf("desired state: %v %v", err, invalid)
	}
	owned := make(map[string]*workv1.ManifestWork, n)
	for _, op := range planWrites(p, &observation{inputs: *in, desired: d}, nil, now).ops {
		work := op.written(now)
		work.Generation = 1
		work.Status = ocmsim.Simulate(work, ocmsim.Spoke{Behavior: ocmsim.Healthy}, now.Add(-time.Hour), now).Status
		trimWork(work)
		owned[op.cluster] = work
	}
	if len(owned) != n {
		tb.Fatalf("%d works planned for %d clusters", len(owned), n)
	}
	return p, overridesInputs(tb, p, fleet, owned)
}

// BenchmarkReconcileCompute measures a converged reconcile's computation (desired state, planned writes,
// status), the CPU a reconcile spends besides reading the cache and writing, per work of the PMW: flat per work
// when it is linear in the works. It reports ns/work and the planned writes (0: converged).
func BenchmarkReconcileCompute(b *testing.B) {
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	for _, n := range []int{1000, 5000, 20000} {
		b.Run(fmt.Sprintf("works=%d", n), func(b *testing.B) {
			p, in := benchFleet(b, n, now)
			writes := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
				if err != nil || invalid != nil {
					b.Fatalf("desired state: %v %v", err, invalid)
				}
				obs := &observation{inputs: *in, desired: d}
				wp := planWrites(p, obs, nil, now)
				obs.rollout, obs.upToDate, obs.leaving = wp.rollout, wp.upToDate, wp.leaving
				computeStatus(p, obs)
				writes = len(wp.ops)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/work")
			b.ReportMetric(float64(writes), "writes")
		})
	}
}
