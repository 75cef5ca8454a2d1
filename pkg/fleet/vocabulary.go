package fleet

// The labels and annotations users put on the fleet API server's namespaces and objects, and the ones the
// controller puts on what it generates on the hub, are a contract (kubectl get placement -l ...). House style
// keeps such keys in api/v1alpha1; they live here until the transparent mode's controller and API settle.
const (
	// Prefix starts every key of the transparent mode. Annotations with it are the fleet's own and are not
	// delivered to the clusters.
	Prefix = "fleet.open-cluster-management.io/"

	// LabelPlacement, on a namespace of the fleet API server, opts the namespace in and names the Placement its
	// workloads go to: a Placement of that name in the hub namespace named like this namespace, so OCM's
	// ManagedClusterSetBindings there stay the security boundary.
	LabelPlacement = Prefix + "placement"

	// AnnotationClusterSelector, on a namespace of the fleet API server, opts the namespace in and gives a label
	// selector of ManagedClusters, as kubectl -l takes it ("env=prod,region in (eu-1,eu-2)"); a Placement named
	// GeneratedName is generated from it. It cannot be used together with LabelPlacement. An empty value selects
	// every cluster of the ManagedClusterSets bound to the hub namespace.
	AnnotationClusterSelector = Prefix + "cluster-selector"

	// AnnotationNumberOfClusters, beside AnnotationClusterSelector, is the generated Placement's
	// numberOfClusters: how many of the selected clusters to use (a decimal from 0 to 2147483647).
	AnnotationNumberOfClusters = Prefix + "number-of-clusters"

	// AnnotationDistribution, on an object of the fleet API server, chooses how it reaches the clusters:
	// Replicate (every cluster gets it whole) or Split (its replica field is divided across the clusters).
	// Without it Deployments, StatefulSets and ReplicaSets are split and every other kind is replicated.
	AnnotationDistribution = Prefix + "distribution"

	// LabelGenerated, with the value "true", is on what the controller generates on the hub (the
	// PlacementManifestWork, the Placement made from a cluster selector, the Namespace manifest): objects
	// without it are the users' and are never changed or removed.
	LabelGenerated = Prefix + "generated"

	// GeneratedName is the name of the PlacementManifestWork generated for a namespace, and of the Placement
	// generated from its cluster selector, in the hub namespace named like the fleet namespace.
	GeneratedName = "fleet"
)

// Annotations the fleet API server or kubectl put on objects that mean nothing on the clusters.
const (
	// annotationLastApplied is kubectl apply's record of the user's last configuration: a copy of it on the
	// clusters would make kubectl apply there compute its patches from the fleet's.
	annotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"
)

// Reason says why an object of an opted-in namespace is not delivered to the clusters (Unsupported.Reason).
// The values are CamelCase, fit for an Event's reason.
type Reason string

const (
	// ReasonOwned: the object has ownerReferences, so a controller on the fleet API server made it from its
	// owner; only the roots are delivered, and the clusters' controllers make the rest there. Expected, not a
	// problem: a controller may leave it out of events.
	ReasonOwned Reason = "Owned"
	// ReasonUnsupportedKind: objects of the kind cannot work unchanged on the clusters (see unsupportedKinds).
	ReasonUnsupportedKind Reason = "UnsupportedKind"
	// ReasonClusterScoped: the kind is cluster-scoped; a namespace cannot own it.
	ReasonClusterScoped Reason = "ClusterScoped"
	// ReasonOtherNamespace: the object is of another namespace than the one translated.
	ReasonOtherNamespace Reason = "OtherNamespace"
	// ReasonInvalidDistribution: its AnnotationDistribution is neither Replicate nor Split, or asks to split an
	// object that has no replica field to divide.
	ReasonInvalidDistribution Reason = "InvalidDistribution"
)

// Event reasons of Status.
const (
	// EventClusterDegraded (Warning): the object is degraded on a cluster (its pods fail, the agent cannot apply
	// it, the cluster is unavailable).
	EventClusterDegraded = "ClusterDegraded"
	// EventClusterProgressing (Normal): the object is not yet what it should be on a cluster (pods starting, a
	// rollout under way, no ManifestWork yet).
	EventClusterProgressing = "ClusterProgressing"
	// EventNoClusters (Warning): the namespace's placement selects no cluster, so nothing runs anywhere.
	EventNoClusters = "NoClusters"
)
