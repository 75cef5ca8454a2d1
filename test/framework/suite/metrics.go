package suite

import (
	"github.com/onsi/gomega"

	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// The metrics are those of controller-runtime's registry, which every manager of the process shares.

// Reconciles is how many times the PlacementManifestWork controller has reconciled in this process.
func (f *Framework) Reconciles() float64 {
	n, err := framework.ControllerCount("controller_runtime_reconcile_total")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return n
}

// ReconcileErrors is how many reconciles of the PlacementManifestWork controller have failed in this process.
func (f *Framework) ReconcileErrors() float64 {
	n, err := framework.ControllerCount("controller_runtime_reconcile_errors_total")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return n
}

// Gauge reads a gauge series; -1 when the series does not exist.
func (f *Framework) Gauge(name string, labels map[string]string) float64 {
	v, err := framework.Gauge(name, labels)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return v
}

// HistogramCount is how many observations a histogram has.
func (f *Framework) HistogramCount(name string) uint64 {
	n, err := framework.HistogramCount(name)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return n
}
