package v1alpha1

// The transparent mode's keys (docs/transparent.md): the labels and annotations users put on the fleet API
// server's namespaces and objects, and the ones the manager puts on what it generates on the hub and delivers.
// They are a contract (kubectl get placement -l ...), as the other well-known keys are.
const (
	// FleetPrefix starts every key of the transparent mode. Annotations with it are the fleet's own and are
	// not delivered to the clusters, except AnnotationFleetGeneration, which the manager adds.
	FleetPrefix = "fleet.open-cluster-management.io/"

	// LabelFleetPlacement, on a namespace of the fleet API server, opts the namespace in and names the
	// Placement its workloads go to: a Placement of that name in the hub namespace named like this namespace,
	// so OCM's ManagedClusterSetBindings there stay the security boundary.
	LabelFleetPlacement = FleetPrefix + "placement"

	// AnnotationFleetClusterSelector, on a namespace of the fleet API server, opts the namespace in and gives a
	// label selector of ManagedClusters, as kubectl -l takes it ("env=prod,region in (eu-1,eu-2)"); a Placement
	// named FleetGeneratedName is generated from it. It cannot be used together with LabelFleetPlacement. An
	// empty value selects every cluster of the ManagedClusterSets bound to the hub namespace.
	AnnotationFleetClusterSelector = FleetPrefix + "cluster-selector"

	// AnnotationFleetNumberOfClusters, beside AnnotationFleetClusterSelector, is the generated Placement's
	// numberOfClusters: how many of the selected clusters to use (a decimal from 0 to 2147483647).
	AnnotationFleetNumberOfClusters = FleetPrefix + "number-of-clusters"

	// AnnotationFleetDistribution, on an object of the fleet API server, chooses how it reaches the clusters:
	// Replicate (every cluster gets it whole) or Split (its replica field is divided across the clusters).
	// Without it Deployments, StatefulSets and ReplicaSets are split and every other kind is replicated.
	AnnotationFleetDistribution = FleetPrefix + "distribution"

	// AnnotationFleetGeneration is on every manifest the manager delivers from the fleet API server: the
	// metadata.generation of the fleet object it was made from, so a cluster's ManifestWork tells which
	// generation of each object it carries (observedGeneration on the fleet waits for every cluster).
	AnnotationFleetGeneration = FleetPrefix + "generation"

	// LabelFleetGenerated, with the value "true", is on what the manager generates on the hub (the
	// PlacementManifestWork, the Placement made from a cluster selector, the Namespace manifest): objects
	// without it are the users' and are never changed or removed.
	LabelFleetGenerated = FleetPrefix + "generated"

	// FleetGeneratedName is the name of the PlacementManifestWork generated for a namespace, and of the
	// Placement generated from its cluster selector, in the hub namespace named like the fleet namespace.
	FleetGeneratedName = "fleet"
)

// Event reasons of the transparent mode, on the fleet API server's namespaces and objects and on the generated
// PlacementManifestWork.
const (
	// EventFleetHubNamespaceMissing (Warning, on the fleet namespace): the hub has no namespace of the same
	// name, so nothing is delivered; an administrator creates it with a ManagedClusterSetBinding.
	EventFleetHubNamespaceMissing = "HubNamespaceMissing"
	// EventFleetInvalidOptIn (Warning, on the fleet namespace): its opt-in label or annotations do not parse;
	// what is delivered stays as it is.
	EventFleetInvalidOptIn = "InvalidOptIn"
	// EventFleetNotGenerated (Warning, on the fleet namespace): the hub namespace holds a PlacementManifestWork
	// or Placement named FleetGeneratedName that the manager did not generate; it is left alone.
	EventFleetNotGenerated = "NotGenerated"
	// EventFleetTranslateFailed (Warning, on the fleet namespace): the namespace's objects cannot be translated.
	EventFleetTranslateFailed = "TranslateFailed"
	// EventFleetKindsUnreadable (Warning, on the fleet namespace): the generated PlacementManifestWork delivers
	// objects of kinds the manager cannot read now; it is kept as it is until they can.
	EventFleetKindsUnreadable = "KindsUnreadable"
	// EventFleetNotDelivered (Warning, on the fleet object and on the generated PlacementManifestWork): an object
	// is left out, and why.
	EventFleetNotDelivered = "NotDelivered"
)
