package framework

import (
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// series returns the series of a metric family in controller-runtime's registry whose labels include labels.
func series(name string, labels map[string]string) ([]*dto.Metric, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return nil, err
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// ControllerCount sums a controller-runtime counter (controller_runtime_reconcile_total,
// controller_runtime_reconcile_errors_total, ...) over the PlacementManifestWork controller's series.
func ControllerCount(name string) (float64, error) {
	ms, err := series(name, map[string]string{"controller": "placementmanifestwork"})
	var total float64
	for _, m := range ms {
		total += m.GetCounter().GetValue()
	}
	return total, err
}

// Gauge reads a gauge series; -1 when the series does not exist.
func Gauge(name string, labels map[string]string) (float64, error) {
	ms, err := series(name, labels)
	if err != nil || len(ms) == 0 {
		return -1, err
	}
	return ms[0].GetGauge().GetValue(), nil
}

// HistogramCount is how many observations a histogram has.
func HistogramCount(name string) (uint64, error) {
	ms, err := series(name, nil)
	if err != nil || len(ms) == 0 {
		return 0, err
	}
	return ms[0].GetHistogram().GetSampleCount(), nil
}
