// Package fleet is the pure core of the transparent mode (issue #22): a plain Deployment kubectl-applied to a
// namespace of a fleet API server (a Kubernetes API server that runs no workload controllers, so what it
// stores are templates, not pods) runs on the clusters of an OCM hub, and its status on the fleet API server
// is written from theirs. It has no client and no clock; the controller that watches both API servers calls it:
//
//   - OptIn reads a fleet namespace's opt-in: a Placement it names (workv1alpha1.LabelFleetPlacement) or a label selector of
//     clusters (workv1alpha1.AnnotationFleetClusterSelector) from which a Placement spec is generated. Changing that one
//     attribute moves the namespace's workloads; the PlacementManifestWork's move strategy makes it
//     make-before-break.
//   - Translate turns the namespace's objects into one PlacementManifestWork's manifests and distribution:
//     workload kinds with replicas are split (the user asked for 6 replicas, the fleet runs 6), everything else
//     is replicated, workv1alpha1.AnnotationFleetDistribution chooses otherwise. Objects that cannot work unchanged on the
//     clusters are left out and reported (Unsupported), never silently.
//   - Status computes each object's .status on the fleet API server from its clusters' reports, as
//     Kubernetes' own controllers shape it, so that kubectl rollout status, kubectl wait
//     --for=condition=Available and GitOps health checks work unchanged, and the per-cluster events that
//     kubectl describe shows ("cluster eu-1: 0 of 2 ready").
//
// What is left out, and why (see unsupportedKinds): Pods (no controller on the clusters to split, move or
// replace them), Events, Leases, Endpoints and EndpointSlices, ControllerRevisions, service-account-token
// Secrets, cluster-scoped kinds, and every object with ownerReferences (a controller on the fleet API server
// made it from a root, which is what is delivered). What is delivered but behaves per cluster is for the docs
// to state: a PersistentVolumeClaim's data does not move, a Service's load balancer and addresses are per
// cluster (Translate drops the clusterIP and nodePorts the fleet API server allocated), cross-cluster DNS needs
// a multi-cluster services implementation, a replicated Job runs once per cluster.
package fleet
