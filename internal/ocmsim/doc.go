// Package ocmsim plays the parts of Open Cluster Management (v1.2) that do not run where the manager is
// tested: the registration of clusters (Join, Bind), the placement controller's decisions (Decide) and the
// work agent (Simulate, Agent). It is the one stand-in for them: the sandbox, the envtest suites (through
// test/framework), the e2e stack (which runs real work agents but plays registration) and the benchmark all
// use it, so a difference from OCM is fixed once.
//
// Each part writes what its OCM component writes, with the same names, labels, reasons and messages, as read
// in OCM's source: pkg/registration (hub and spoke), pkg/placement/controllers/scheduling and pkg/work/spoke.
// The pure parts (ManagedClusterStatus, Decisions, PlacementStatus, Simulate, LiveObject) are functions over
// API objects; Join, Bind, Decide and the Agent do the I/O.
package ocmsim
