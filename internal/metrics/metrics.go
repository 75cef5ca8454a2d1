// Package metrics defines the manager's Prometheus metrics, registered with controller-runtime's registry so
// they are served on the manager's metrics endpoint.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const namespace = "placementmanifestwork"

var (
	// ManifestWorks is the number of ManifestWorks each PlacementManifestWork owns.
	ManifestWorks = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "manifestworks",
		Help: "ManifestWorks owned by a PlacementManifestWork.",
	}, []string{"namespace", "name"})

	// Clusters is the number of decided clusters of each PlacementManifestWork by health.
	Clusters = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "clusters",
		Help: "Decided clusters of a PlacementManifestWork by health: available, progressing or degraded.",
	}, []string{"namespace", "name", "health"})

	// WriteErrors counts ManifestWork writes the API server refused.
	WriteErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "manifestwork_write_errors_total",
		Help: "ManifestWork creates, updates and deletes that failed.",
	}, []string{"operation"})

	// Rollbacks counts the failed revisions each PlacementManifestWork rolled back (failurePolicy Rollback).
	Rollbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "rollbacks_total",
		Help: "Failed revisions of a PlacementManifestWork that failurePolicy Rollback rolled back.",
	}, []string{"namespace", "name"})

	// RolloutSeconds is how long a revision took from the start of its rollout (status.rollout.startedAt) to
	// its end: completed everywhere, or rolled back.
	RolloutSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "rollout_duration_seconds",
		Help:    "Time from a revision starting to roll out to it being completed on every cluster (result=completed) or rolled back (result=rolled_back).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 16),
	}, []string{"result"})

	// FanOutSeconds is the time from the manager first seeing a PlacementManifestWork generation to every
	// decided cluster having that generation's ManifestWork.
	FanOutSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "fanout_duration_seconds",
		Help:    "Time from a PlacementManifestWork generation first being seen to all its ManifestWorks being written.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(ManifestWorks, Clusters, WriteErrors, Rollbacks, RolloutSeconds, FanOutSeconds)
}

// Forget removes a deleted PlacementManifestWork's series.
func Forget(pmw types.NamespacedName) {
	ManifestWorks.DeleteLabelValues(pmw.Namespace, pmw.Name)
	Rollbacks.DeleteLabelValues(pmw.Namespace, pmw.Name)
	for _, h := range []string{"available", "progressing", "degraded"} {
		Clusters.DeleteLabelValues(pmw.Namespace, pmw.Name, h)
	}
}
