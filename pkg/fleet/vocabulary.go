package fleet

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
