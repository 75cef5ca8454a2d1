package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
)

// DistributionType says how one manifest of the template reaches the selected clusters.
// +kubebuilder:validation:Enum=Replicate;Split
type DistributionType string

const (
	// DistributionReplicate copies the manifest unchanged to every selected cluster.
	DistributionReplicate DistributionType = "Replicate"
	// DistributionSplit divides an integer field of the manifest (replicas by default) across the selected clusters.
	DistributionSplit DistributionType = "Split"
)

// SplitType says how a split total is divided across clusters.
// +kubebuilder:validation:Enum=Balance;Weighted;Score
type SplitType string

const (
	// SplitBalance gives every cluster the same share, give or take one.
	SplitBalance SplitType = "Balance"
	// SplitWeighted divides in proportion to static weights given in split.weights.
	SplitWeighted SplitType = "Weighted"
	// SplitScore divides in proportion to a score read from each cluster's AddOnPlacementScore.
	SplitScore SplitType = "Score"
)

// DefaultSplitFieldPath is the field a Split divides when split.fieldPath is not set.
const DefaultSplitFieldPath = ".spec.replicas"

// PlacementManifestWorkSpec is the desired state of a PlacementManifestWork.
// +kubebuilder:validation:XValidation:rule="!has(self.rolloutGates) || size(self.rolloutGates) == 0 || has(self.rolloutStrategy) && has(self.rolloutStrategy.type) && (self.rolloutStrategy.type == 'Progressive' || self.rolloutStrategy.type == 'ProgressivePerGroup')",message="rolloutGates need rolloutStrategy.type Progressive or ProgressivePerGroup (the All strategy has no steps to stop between)",fieldPath=".rolloutGates"
type PlacementManifestWorkSpec struct {
	// manifestWorkTemplate is the spec of the ManifestWork written to every selected cluster: the same fields
	// as an OCM ManifestWork's spec, so the spec of an existing ManifestWork can be pasted here.
	// +required
	ManifestWorkTemplate workv1.ManifestWorkSpec `json:"manifestWorkTemplate"`

	// placementRef names a Placement in this PlacementManifestWork's namespace. When it is not set, the
	// controller creates a Placement with the PlacementManifestWork's name and an empty spec (every cluster of
	// the ManagedClusterSets bound to the namespace); later edits to that Placement are kept.
	// +optional
	PlacementRef *LocalPlacementReference `json:"placementRef,omitempty"`

	// distributionStrategy says, per manifest, whether it is replicated to every cluster or has a field split
	// across them. Manifests that no entry names are replicated.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.name == a.name && (has(a.__namespace__) ? a.__namespace__ : '') == (has(b.__namespace__) ? b.__namespace__ : '') && (!has(a.kind) || !has(b.kind) || a.kind == b.kind) && (!has(a.group) || !has(b.group) || a.group == b.group)))",message="two distributionStrategy entries name the same manifest (same name and namespace, and group and kind equal or unset)"
	DistributionStrategy []DistributionStrategy `json:"distributionStrategy,omitempty"`

	// rolloutStrategy governs how a template change, and a cluster joining, reaches the clusters: All at once
	// (the default), Progressive with maxConcurrency, or ProgressivePerGroup, as OCM's RolloutStrategy. A
	// cluster succeeds when it is available (healthy), so progressive rollouts need no condition rules. Its
	// durations, numbers and percentages are checked here, as OCM's type does not check them all: whatever is
	// admitted, the manager can decode and sdk-go's rollout handler can use.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.minSuccessTime) || self.all.minSuccessTime != '' && self.all.minSuccessTime.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="rolloutStrategy.all.minSuccessTime must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)",fieldPath=".all.minSuccessTime"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.progressDeadline) || self.all.progressDeadline != '' && self.all.progressDeadline.matches('^(None|([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?)$')",message="rolloutStrategy.all.progressDeadline must be None or a duration in whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m",fieldPath=".all.progressDeadline"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.maxFailures) || (type(self.all.maxFailures) == int ? self.all.maxFailures >= 0 && self.all.maxFailures <= 2147483647 : self.all.maxFailures.matches('^(100|[0-9]{1,2})%$'))",message="rolloutStrategy.all.maxFailures must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage from 0% to 100%",fieldPath=".all.maxFailures"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.minSuccessTime) || self.progressive.minSuccessTime != '' && self.progressive.minSuccessTime.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="rolloutStrategy.progressive.minSuccessTime must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)",fieldPath=".progressive.minSuccessTime"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.progressDeadline) || self.progressive.progressDeadline != '' && self.progressive.progressDeadline.matches('^(None|([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?)$')",message="rolloutStrategy.progressive.progressDeadline must be None or a duration in whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m",fieldPath=".progressive.progressDeadline"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxFailures) || (type(self.progressive.maxFailures) == int ? self.progressive.maxFailures >= 0 && self.progressive.maxFailures <= 2147483647 : self.progressive.maxFailures.matches('^(100|[0-9]{1,2})%$'))",message="rolloutStrategy.progressive.maxFailures must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage from 0% to 100%",fieldPath=".progressive.maxFailures"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxConcurrency) || (type(self.progressive.maxConcurrency) == int ? self.progressive.maxConcurrency >= 0 && self.progressive.maxConcurrency <= 2147483647 : self.progressive.maxConcurrency.matches('^(100|[0-9]{1,2})%$'))",message="rolloutStrategy.progressive.maxConcurrency must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage from 0% to 100%",fieldPath=".progressive.maxConcurrency"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="rolloutStrategy.progressive.mandatoryDecisionGroups[].groupIndex must be from 0 to 2147483647",fieldPath=".progressive.mandatoryDecisionGroups"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0)",message="rolloutStrategy.progressive.mandatoryDecisionGroups[].groupIndex must be from 0 to 2147483647",fieldPath=".progressive.mandatoryDecisionGroups"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.minSuccessTime) || self.progressivePerGroup.minSuccessTime != '' && self.progressivePerGroup.minSuccessTime.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="rolloutStrategy.progressivePerGroup.minSuccessTime must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)",fieldPath=".progressivePerGroup.minSuccessTime"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.progressDeadline) || self.progressivePerGroup.progressDeadline != '' && self.progressivePerGroup.progressDeadline.matches('^(None|([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?)$')",message="rolloutStrategy.progressivePerGroup.progressDeadline must be None or a duration in whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m",fieldPath=".progressivePerGroup.progressDeadline"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.maxFailures) || (type(self.progressivePerGroup.maxFailures) == int ? self.progressivePerGroup.maxFailures >= 0 && self.progressivePerGroup.maxFailures <= 2147483647 : self.progressivePerGroup.maxFailures.matches('^(100|[0-9]{1,2})%$'))",message="rolloutStrategy.progressivePerGroup.maxFailures must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage from 0% to 100%",fieldPath=".progressivePerGroup.maxFailures"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="rolloutStrategy.progressivePerGroup.mandatoryDecisionGroups[].groupIndex must be from 0 to 2147483647",fieldPath=".progressivePerGroup.mandatoryDecisionGroups"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0)",message="rolloutStrategy.progressivePerGroup.mandatoryDecisionGroups[].groupIndex must be from 0 to 2147483647",fieldPath=".progressivePerGroup.mandatoryDecisionGroups"
	RolloutStrategy *clusterv1alpha1.RolloutStrategy `json:"rolloutStrategy,omitempty"`

	// failover moves the share of a split manifest away from a cluster that stays degraded or unavailable.
	// +optional
	Failover *FailoverPolicy `json:"failover,omitempty"`

	// ttlSecondsAfterFinished, for a template whose manifests finish (Jobs, Pods, kinds whose
	// ResourceInterpreter says Completed or Failed), removes the ManifestWorks, and so the finished workloads
	// on the clusters, this many seconds after every decided cluster finished (status.completion.finishedTime),
	// whether the run completed or failed. The status keeps the result. The works are not written again for
	// this generation of the spec; a change to the spec runs the template again. Unset: the works stay.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// moveStrategy says what happens to the works of clusters that leave the decisions while others join.
	// +optional
	MoveStrategy *MoveStrategy `json:"moveStrategy,omitempty"`

	// propagateDependencies, when true, carries each manifest's dependencies along: for every manifest whose
	// kind's ResourceInterpreter declares dependencies, the ConfigMaps, Secrets and ServiceAccounts it names are
	// read from this PlacementManifestWork's namespace on the hub and delivered to every cluster beside the
	// manifest, into the manifest's namespace, and kept in step when they change on the hub. One that is
	// missing makes Distributed False (DependencyNotFound) and keeps the delivered ManifestWorks as they are.
	// +optional
	PropagateDependencies bool `json:"propagateDependencies,omitempty"`

	// overrides change the manifests some clusters get: the per-cluster variation of one application (a
	// regional image mirror, the cluster's name in an environment variable). They are applied after the split,
	// in list order, a later one winning where two change the same field. A change to an override, or to the
	// labels or claims of a cluster an override reads, is a template change for the clusters it affects, so the
	// rollout strategy governs it. An override that fails on a cluster leaves that cluster's ManifestWork as it
	// was (OverrideFailed); one the manager cannot compile keeps every ManifestWork as it was (InvalidOverride).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Overrides []ClusterOverride `json:"overrides,omitempty"`

	// splitCompanions says what becomes of the companions of a split Deployment, StatefulSet or ReplicaSet in
	// the same template (a HorizontalPodAutoscaler whose scaleTargetRef names it, a PodDisruptionBudget whose
	// selector matches its pods and no other workload's): Apportion (the default when empty) divides their
	// integer counts (minReplicas, maxReplicas, minAvailable, maxUnavailable) by the cluster's share of the
	// workload, keeping percentages, and status.splits[].companions names them; Copy delivers them unchanged.
	// Overrides apply after, so a patch still wins.
	// +optional
	SplitCompanions SplitCompanionsMode `json:"splitCompanions,omitempty"`

	// revisionHistoryLimit is how many earlier revisions of the template are kept as ControllerRevisions
	// besides the current revision and the last completed one, which are always kept. Default 10, applied by
	// the manager (nothing is stored).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// paused, as a Deployment's, holds the rollout while true: no cluster receives a new revision of the
	// template. A cluster whose ManifestWork carries an earlier template keeps it, and a cluster without one
	// waits, unless the current revision is the completed one (status.completedRevision): nothing is held back
	// then. Split shares that change (a cluster joined, left or failed over) still reach the clusters that run
	// the current template. RolloutComplete is False with reason RolloutPaused while a cluster is held back.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// failurePolicy says what happens when a progressive rollout fails (more clusters failed or timed out than
	// rolloutStrategy's maxFailures allows): Pause (the default when empty) stops the rollout where it is;
	// Rollback returns the clusters that carry the failed revision to the last completed revision
	// (status.completedRevision), at the rollout strategy's pace, and records the failed revision in
	// status.failedRevision. The spec is not changed: the failed revision is not rolled out again until the spec
	// changes or the annotation work.open-cluster-management.io/retry-revision names it. The All strategy never
	// reports a failure, so Rollback needs a Progressive or ProgressivePerGroup strategy.
	// +optional
	FailurePolicy RolloutFailurePolicy `json:"failurePolicy,omitempty"`

	// rolloutGates stop a progressive rollout until someone approves it: after a decision group (afterGroup,
	// for ProgressivePerGroup or a mandatory decision group of Progressive), or after the first clusters
	// (afterClusters). A gate holds every cluster beyond it until the annotation
	// work.open-cluster-management.io/approve lists "<revision>/<gate>" for the current revision (kubectl pmw
	// rollout approve sets it), so an approval of one revision never lets another through. status.approvals
	// records each approval the manager acted on. Gates hold new revisions only: a rollback and a cluster that
	// joins on the completed revision pass them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	RolloutGates []RolloutGate `json:"rolloutGates,omitempty"`

	// disruptionBudget bounds, fleet-wide and counted in replicas, what the manager itself takes away from each
	// split workload: a rollout step (a cluster gets a new template), a share decrease (a cluster joined or
	// recovered from failover) and the removal of a leaving cluster's work wait while they would make more of
	// the workload's replicas unavailable than the budget allows, judged by the availableReplicas the agents
	// report. Share increases, failover to other clusters, clusters without available replicas and steps back
	// to the completed revision (a rollback) are never held. status.disruptionBudget says what waits.
	// +optional
	DisruptionBudget *DisruptionBudget `json:"disruptionBudget,omitempty"`

	// decodeProblems are the fields of the stored spec that could not be decoded (see DecodeProblems).
	decodeProblems []string `json:"-"`
}

// RolloutGate is a manual approval step of a progressive rollout.
// +kubebuilder:validation:XValidation:rule="has(self.afterClusters) != has(self.afterGroup)",message="a rollout gate sets exactly one of afterClusters and afterGroup"
type RolloutGate struct {
	// name names the gate in approvals ("<revision>/<name>") and in status.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// afterClusters stops the rollout once this many clusters carry the new revision: no other cluster gets it
	// until the gate is approved.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	AfterClusters *int32 `json:"afterClusters,omitempty"`
	// afterGroup stops the rollout once every cluster of this decision group (its groupName, or its index for
	// a group without a name) carries the new revision: the clusters of other groups that do not carry it wait
	// until the gate is approved. Meant for ProgressivePerGroup, which goes group by group, and for a
	// mandatory decision group of Progressive, which goes first.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	AfterGroup string `json:"afterGroup,omitempty"`
}

// DisruptionBudget is a fleet-wide budget of unavailable replicas for each split workload.
type DisruptionBudget struct {
	// maxUnavailableReplicas is how many of a split workload's replicas (its split total) may be unavailable
	// at once: a number, or a percentage of the total rounded down. When nothing is unavailable, one action
	// that alone exceeds it is let through (a cluster holding more replicas than the budget could otherwise
	// never be updated), and its workload's own rolling update bounds the disruption.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^(100|[0-9]{1,2})%$')",message="disruptionBudget.maxUnavailableReplicas must be a whole number of replicas from 0 to 2147483647, unquoted, or a percentage from 0% to 100%"
	MaxUnavailableReplicas intstr.IntOrString `json:"maxUnavailableReplicas"`
}

// DisruptionBudgetStatus says how the disruption budget stands and what waits for it.
type DisruptionBudgetStatus struct {
	// unavailableReplicas is how many replicas of the split workload nearest its budget are unavailable now,
	// by the agents' reports.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	UnavailableReplicas int32 `json:"unavailableReplicas"`
	// maxUnavailableReplicas is that workload's budget in replicas.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	MaxUnavailableReplicas int32 `json:"maxUnavailableReplicas"`
	// held names, sorted, at most 10 clusters whose rollout step, share decrease or work removal waits for
	// the budget.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=253
	Held []string `json:"held,omitempty"`
	// heldNotListed is how many more clusters wait than held names.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	HeldNotListed int32 `json:"heldNotListed,omitempty"`
	// message says why the first held cluster waits.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// RolloutApproval is an approval of a rollout gate that the manager acted on.
type RolloutApproval struct {
	// revision is the revision number the approval named.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	Revision int64 `json:"revision"`
	// gate is the approved gate's name.
	// +kubebuilder:validation:MaxLength=63
	Gate string `json:"gate"`
	// approvedAt is when the manager first saw the approval.
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="approvedAt must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	ApprovedAt metav1.Time `json:"approvedAt"`
}

// RolloutFailurePolicy says what happens when a rollout fails.
// +kubebuilder:validation:Enum=Pause;Rollback
type RolloutFailurePolicy string

const (
	// FailurePolicyPause stops a failed rollout where it is (the default).
	FailurePolicyPause RolloutFailurePolicy = "Pause"
	// FailurePolicyRollback returns the clusters that carry the failed revision to the last completed one.
	FailurePolicyRollback RolloutFailurePolicy = "Rollback"
)

// SplitCompanionsMode says what becomes of a split workload's HorizontalPodAutoscaler and PodDisruptionBudget.
// +kubebuilder:validation:Enum=Apportion;Copy
type SplitCompanionsMode string

const (
	// SplitCompanionsApportion divides the companions' counts by each cluster's share of the workload.
	SplitCompanionsApportion SplitCompanionsMode = "Apportion"
	// SplitCompanionsCopy delivers the companions to every cluster as the template has them.
	SplitCompanionsCopy SplitCompanionsMode = "Copy"
)

// FailoverPolicy governs failover of split replicas.
type FailoverPolicy struct {
	// disabled turns failover off: a degraded cluster keeps its share.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// gracePeriod is how long a cluster holding a share may be degraded or unavailable before its share is
	// divided among the available clusters. Default 5m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="failover.gracePeriod must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)"
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`
	// recoveryPeriod is how long a failed-over cluster must be available again before it gets its share back,
	// so a flapping cluster does not move replicas back and forth. Default 2m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="failover.recoveryPeriod must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)"
	RecoveryPeriod *metav1.Duration `json:"recoveryPeriod,omitempty"`
}

// MoveType says when the works of clusters that left the decisions are removed.
// +kubebuilder:validation:Enum=MakeBeforeBreak;Immediate
type MoveType string

const (
	// MoveMakeBeforeBreak keeps the works of leaving clusters until no decided cluster is still progressing
	// (the joining clusters are available or degraded), or until the timeout.
	MoveMakeBeforeBreak MoveType = "MakeBeforeBreak"
	// MoveImmediate removes the works of leaving clusters at once.
	MoveImmediate MoveType = "Immediate"
)

// MoveStrategy governs moves of workloads between clusters.
type MoveStrategy struct {
	// type is MakeBeforeBreak (the default) or Immediate.
	// +optional
	// +kubebuilder:default=MakeBeforeBreak
	Type MoveType `json:"type,omitempty"`
	// timeout bounds how long the works of leaving clusters are kept. Default 10m.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$')",message="moveStrategy.timeout must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// LocalPlacementReference names a Placement in the same namespace.
type LocalPlacementReference struct {
	// name of the Placement. OCM labels PlacementDecisions with this name, so it is at most 63 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`
}

// DistributionStrategy picks one manifest of the template by name and namespace (group and kind
// disambiguate) and says how it is distributed.
// +kubebuilder:validation:XValidation:rule="self.type == 'Split' ? has(self.split) : !has(self.split)",message="split must be set when type is Split, and only then"
type DistributionStrategy struct {
	// name of the manifest (metadata.name).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// namespace of the manifest (metadata.namespace); empty for cluster-scoped manifests.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// group of the manifest's apiVersion; empty or unset matches any group (set kind to tell a core-group
	// manifest from another of the same name).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`

	// kind of the manifest; unset matches any kind.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind,omitempty"`

	// type is Replicate (the default) or Split.
	// +optional
	// +kubebuilder:default=Replicate
	Type DistributionType `json:"type,omitempty"`

	// split says how the manifest's field is divided. Required when type is Split.
	// +optional
	Split *SplitStrategy `json:"split,omitempty"`
}

// SplitStrategy divides an integer field of a manifest across the selected clusters. The manifest's own value
// at fieldPath is the total; each cluster's ManifestWork carries that cluster's share.
// +kubebuilder:validation:XValidation:rule="self.type == 'Weighted' ? has(self.weights) && size(self.weights) > 0 : !has(self.weights)",message="weights must be set when split.type is Weighted, and only then"
// +kubebuilder:validation:XValidation:rule="self.type == 'Score' ? has(self.score) : !has(self.score)",message="score must be set when split.type is Score, and only then"
type SplitStrategy struct {
	// type is Balance (the default), Weighted or Score.
	// +optional
	// +kubebuilder:default=Balance
	Type SplitType `json:"type,omitempty"`

	// fieldPath is the integer field that is divided, as a dotted path from the manifest's root. When it is not
	// set, the fields the kind's ResourceInterpreter names, else the built-in kind's (a Job's .spec.parallelism),
	// else .spec.replicas. No default is stored, so an interpreter added later still applies.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^(\.[A-Za-z0-9_-]+)+$`
	FieldPath string `json:"fieldPath,omitempty"`

	// limitRange bounds each cluster's share.
	// +optional
	LimitRange *LimitRange `json:"limitRange,omitempty"`

	// weights are the static weights of a Weighted split. A cluster takes the weight of the first entry that
	// matches it; a cluster that no entry matches has weight 0 and gets no share beyond limitRange.min.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Weights []ClusterWeight `json:"weights,omitempty"`

	// score names the AddOnPlacementScore whose value weighs each cluster in a Score split.
	// +optional
	Score *ScoreSource `json:"score,omitempty"`
}

// LimitRange bounds each cluster's share of a split field.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="limitRange.min must not be greater than limitRange.max"
type LimitRange struct {
	// min is the smallest non-zero share a cluster gets.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	Min *int32 `json:"min,omitempty"`

	// max is the largest share a cluster gets; what cannot be placed is reported on status.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	Max *int32 `json:"max,omitempty"`
}

// ClusterWeight gives the clusters it matches a weight in a Weighted split.
// +kubebuilder:validation:XValidation:rule="has(self.clusterName) != has(self.clusterSelector)",message="set exactly one of clusterName and clusterSelector"
type ClusterWeight struct {
	// clusterName matches one ManagedCluster by name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClusterName string `json:"clusterName,omitempty"`

	// clusterSelector matches ManagedClusters by label.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`

	// weight of the matched clusters, relative to the other entries.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Weight int32 `json:"weight"`
}

// ScoreSource names one score of an AddOnPlacementScore (cluster.open-cluster-management.io/v1alpha1) that
// lives in each cluster's namespace.
type ScoreSource struct {
	// resourceName is the name of the AddOnPlacementScore.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ResourceName string `json:"resourceName"`

	// scoreName is the name of the score inside it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ScoreName string `json:"scoreName"`
}

// PlacedManifestWorkSummary counts the decided clusters by the state of their ManifestWork and workload. Only
// what is reported for the ManifestWork's current generation counts. available, progressing and degraded
// partition total: every decided cluster is in exactly one of them.
type PlacedManifestWorkSummary struct {
	// total is the number of clusters in the placement's decisions, each of which should have a ManifestWork.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Total int32 `json:"total"`
	// applied is the number of clusters whose ManifestWork carries the current template and reports
	// Applied=True for its current generation.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Applied int32 `json:"applied"`
	// available is the number of clusters that are healthy: the ManifestWork carries the current template and
	// is applied and available for its current generation, every manifest is healthy (for example a
	// Deployment's updated and available replicas reach that cluster's share), and the ManagedCluster is
	// available. A cluster a rollout holds on an earlier template is progressing.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Available int32 `json:"available"`
	// progressing is the number of clusters on their way: not available and not degraded (no ManifestWork yet,
	// not yet applied, or workloads not yet healthy).
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Progressing int32 `json:"progressing"`
	// degraded is the number of clusters that need attention: the ManagedCluster is not available, the
	// ManifestWork reports Applied=False or Degraded=True, or a manifest is degraded (for example a failed Job
	// or a Deployment past its progress deadline).
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Degraded int32 `json:"degraded"`
}

// PlacementManifestWorkStatus is the observed state of a PlacementManifestWork.
type PlacementManifestWorkStatus struct {
	// observedGeneration is the generation of the spec that this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions describe the PlacementManifestWork: Ready, Reconciling and Stalled (kstatus), PlacementVerified,
	// ManifestworkApplied, Distributed and RolloutComplete, Completed for a template whose manifests finish,
	// StatusAggregated while an AggregateStatus webhook under Fail rolls a manifest up, and
	// FleetObjectsDelivered for a transparent-mode PMW.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.lastTransitionTime >= timestamp('0001-01-01T00:00:00Z'))",message="conditions[].lastTransitionTime must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// placement is the name of the Placement whose decisions are used.
	// +optional
	Placement string `json:"placement,omitempty"`

	// placedManifestWorkSummary counts the decided clusters by the state of their ManifestWork.
	// +optional
	PlacedManifestWorkSummary PlacedManifestWorkSummary `json:"placedManifestWorkSummary"`

	// splits describes, per split manifest, how its total is divided.
	// +optional
	// +listType=atomic
	Splits []SplitStatus `json:"splits,omitempty"`

	// manifests aggregates, per manifest of the template, its health and numeric feedback across clusters.
	// +optional
	// +listType=atomic
	Manifests []ManifestSummary `json:"manifests,omitempty"`

	// unhealthyClusters names, degraded first and then by name, at most 10 clusters that are not available,
	// with the reason.
	// +optional
	// +listType=atomic
	UnhealthyClusters []ClusterHealth `json:"unhealthyClusters,omitempty"`

	// unhealthyClustersNotListed is how many more clusters are not available than unhealthyClusters names.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	UnhealthyClustersNotListed int32 `json:"unhealthyClustersNotListed,omitempty"`

	// rollout shows the progress of the current template across the decided clusters.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`

	// currentRevision is the revision of the template being rolled out: the ControllerRevision of the current
	// spec's template. Kept as it was while the spec cannot be acted on (an invalid template, an undecided
	// Placement).
	// +optional
	CurrentRevision *RevisionReference `json:"currentRevision,omitempty"`

	// completedRevision is the last revision that was rolled out everywhere: every decided cluster carried it
	// and was available (RolloutComplete True and every cluster available).
	// +optional
	CompletedRevision *RevisionReference `json:"completedRevision,omitempty"`

	// failedRevision is the revision whose rollout failed under failurePolicy Rollback: while it is the
	// current spec's revision, the clusters that carried it are returned to completedRevision and it is not
	// rolled out again. Cleared when the spec moves to another template or a retry is asked for (the annotation
	// work.open-cluster-management.io/retry-revision set to its number).
	// +optional
	FailedRevision *FailedRevision `json:"failedRevision,omitempty"`

	// retriedRevision is the number of the revision whose retry (the annotation
	// work.open-cluster-management.io/retry-revision) was last consumed: the same annotation does not retry it
	// again.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	RetriedRevision int64 `json:"retriedRevision,omitempty"`

	// disruptionBudget says, when spec.disruptionBudget is set, how many replicas are unavailable and which
	// clusters' writes wait for the budget.
	// +optional
	DisruptionBudget *DisruptionBudgetStatus `json:"disruptionBudget,omitempty"`

	// approvals are the approvals of rolloutGates the manager acted on, oldest first, at most 20 (the oldest
	// are dropped): which revision and gate each named and when the manager saw it. Who approved is in the
	// API server's audit log (the update that set the approval annotation).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Approvals []RolloutApproval `json:"approvals,omitempty"`

	// failedOverClusters is the number of clusters whose split shares are currently carried by others.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	FailedOverClusters int32 `json:"failedOverClusters,omitempty"`

	// failedOver names the clusters whose split shares are carried by others, sorted by name, with when they
	// were failed over. The manager keeps failover state in memory and reads this list after a restart, so a
	// failed-over cluster stays failed over; nothing of it is read from the ManifestWorks, which work agents
	// may edit.
	// +optional
	// +listType=atomic
	FailedOver []FailedOverCluster `json:"failedOver,omitempty"`

	// leavingClusters is the number of clusters that left the decisions and whose works are kept until the
	// joining clusters are available (make before break).
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	LeavingClusters int32 `json:"leavingClusters,omitempty"`

	// completion reports the run of a template whose manifests finish (Jobs, Pods, kinds whose
	// ResourceInterpreter says Completed or Failed); absent for a template without such manifests. The manager
	// reads it back after a restart, so works removed after ttlSecondsAfterFinished stay removed.
	// +optional
	Completion *CompletionStatus `json:"completion,omitempty"`

	// overrides counts, per override of spec.overrides in list order, the decided clusters whose desired
	// ManifestWork carries it and those where it failed (their ManifestWorks are kept as they were).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Overrides []OverrideStatus `json:"overrides,omitempty"`
}

// CompletionStatus is how far the run of the template of one generation got across the decided clusters. A
// cluster has completed when every finishing manifest delivered to it completed and the cluster is healthy;
// it has failed when every finishing manifest finished and one of them failed.
type CompletionStatus struct {
	// observedGeneration is the generation of the spec whose run this describes.
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration"`
	// completed is the number of decided clusters where the run completed.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Completed int32 `json:"completed"`
	// failed is the number of decided clusters where the run finished and failed.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Failed int32 `json:"failed"`
	// finishedTime is since when every decided cluster has finished (completed or failed); ttlSecondsAfterFinished
	// counts from it. Absent while some cluster runs.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="finishedTime must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	FinishedTime *metav1.Time `json:"finishedTime,omitempty"`
	// worksRemovedTime is when the manager decided, ttlSecondsAfterFinished after finishedTime, to remove the
	// ManifestWorks of this generation; they are deleted from then on and not written again until the spec
	// changes. The rest of the status is kept as it was then.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="worksRemovedTime must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	WorksRemovedTime *metav1.Time `json:"worksRemovedTime,omitempty"`
}

// RolloutStatus shows how far the current template has reached.
type RolloutStatus struct {
	// updated is the number of decided clusters whose ManifestWork carries the current template.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Updated int32 `json:"updated"`
	// total is the number of decided clusters.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Total int32 `json:"total"`
	// succeeded is the number of updated clusters that are available.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Succeeded int32 `json:"succeeded"`
	// failed is the number of updated clusters that are degraded or timed out.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Failed int32 `json:"failed"`
	// currentGroup is the decision group being rolled out by a ProgressivePerGroup strategy.
	// +optional
	CurrentGroup string `json:"currentGroup,omitempty"`
	// awaitingApproval names the rollout gate (spec.rolloutGates) the rollout of the current revision waits at
	// until it is approved.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	AwaitingApproval string `json:"awaitingApproval,omitempty"`
	// startedAt is when the manager first saw the current revision being rolled out (the rollout duration
	// counts from it); unset when the current revision was already the completed one.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="startedAt must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
}

// RevisionReference names one revision of a PlacementManifestWork's template: an apps/v1 ControllerRevision
// in its namespace.
type RevisionReference struct {
	// revision is the revision's number (the ControllerRevision's revision field): a template that comes back
	// takes the next number, as a StatefulSet's revisions do.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	Revision int64 `json:"revision"`
	// name is the ControllerRevision's name.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// FailedRevision is a revision whose rollout failed, and the clusters it failed on.
type FailedRevision struct {
	// revision is the failed revision's number.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	Revision int64 `json:"revision"`
	// name is the failed revision's ControllerRevision.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// clusters names, sorted, at most 10 of the clusters that failed (degraded or timed out) on it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=253
	Clusters []string `json:"clusters,omitempty"`
	// clustersNotListed is how many more clusters failed than clusters names.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	ClustersNotListed int32 `json:"clustersNotListed,omitempty"`
}

// ManifestSummary aggregates one manifest of the template across the decided clusters.
type ManifestSummary struct {
	// name, namespace, group and kind identify the manifest.
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	// healthy is the number of clusters where the manifest is healthy, by the interpretation of its kind (a
	// ResourceInterpreter's or the built-in one), its condition rules, or else by being applied and available.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Healthy int32 `json:"healthy"`
	// progressing is the number of clusters where it is applied or being applied and not yet healthy.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Progressing int32 `json:"progressing"`
	// degraded is the number of clusters where it is degraded.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Degraded int32 `json:"degraded"`
	// feedback sums, per name, the integer status feedback of the manifest across clusters: for example
	// readyReplicas of a split Deployment, to compare with its total, or succeeded and failed of a split Job.
	// +optional
	// +listType=map
	// +listMapKey=name
	Feedback []FeedbackSum `json:"feedback,omitempty"`
	// aggregated rolls up, per name, the status fields the kind's ResourceInterpreter asks to aggregate.
	// +optional
	// +listType=map
	// +listMapKey=name
	Aggregated []AggregatedField `json:"aggregated,omitempty"`
}

// AggregatedField is one reported status field rolled up across clusters, as the kind's interpreter says.
type AggregatedField struct {
	// name is the interpreter's name for the field.
	Name string `json:"name"`
	// operation is Sum, Min, Max or Count.
	Operation AggregationOperation `json:"operation"`
	// value is the sum, the smallest or the largest value (Sum, Min and Max); absent when no cluster reported
	// an integer.
	// +optional
	Value *int64 `json:"value,omitempty"`
	// counts are, for Count, the clusters per reported value, most clusters first, at most 10 values.
	// +optional
	// +listType=atomic
	Counts []ValueCount `json:"counts,omitempty"`
	// clusters is how many clusters reported the field.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Clusters int32 `json:"clusters"`
}

// ValueCount is how many clusters reported one value.
type ValueCount struct {
	// value as reported, formatted as text (true, 3, Healthy).
	Value string `json:"value"`
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Clusters int32 `json:"clusters"`
}

// FeedbackSum is the sum of one integer feedback value across clusters.
type FeedbackSum struct {
	// name of the value, as in the status of the manifest's kind (readyReplicas, succeeded, ...).
	Name string `json:"name"`
	// value is the sum across the clusters that reported it.
	Value int64 `json:"value"`
	// clusters is how many clusters reported it.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Clusters int32 `json:"clusters"`
}

// ClusterState is the state of a cluster that is not available.
// +kubebuilder:validation:Enum=Progressing;Degraded
type ClusterState string

const (
	// ClusterProgressing: on its way to available (no work yet, not yet applied, workloads not yet healthy, or an
	// earlier template held by the rollout).
	ClusterProgressing ClusterState = "Progressing"
	// ClusterDegraded: needs attention (the ManagedCluster unavailable, the work not applied or degraded, a
	// degraded manifest, or a foreign work in the way).
	ClusterDegraded ClusterState = "Degraded"
)

// ClusterHealth says why one cluster is not available.
type ClusterHealth struct {
	// cluster is the ManagedCluster's name.
	Cluster string `json:"cluster"`
	// state is Progressing or Degraded.
	State ClusterState `json:"state"`
	// reason is a CamelCase reason, such as ClusterUnavailable, ApplyFailed, ManifestDegraded or OutdatedTemplate.
	Reason string `json:"reason"`
	// message says what is wrong, naming the manifest.
	// +optional
	Message string `json:"message,omitempty"`
}

// SplitStatus describes how one split manifest's total is divided. It stays small for any number of clusters:
// shares are counted, and only the clusters whose share differs from the most common one are named.
type SplitStatus struct {
	// name, namespace, group and kind identify the manifest.
	Name string `json:"name"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// +optional
	Group string `json:"group,omitempty"`
	// +optional
	Kind string `json:"kind,omitempty"`
	// fieldPath is the field that is divided.
	FieldPath string `json:"fieldPath"`
	// total is the manifest's own value at fieldPath.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Total int32 `json:"total"`
	// placed is the sum of the shares delivered to the decided clusters that are not failed over (a cluster a
	// rollout holds counts with the share its work carries).
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Placed int32 `json:"placed"`
	// unplaced is what the division could not give any cluster within limitRange (min or max).
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Unplaced int32 `json:"unplaced"`
	// failedOver is the number of replicas kept on failed-over clusters, on top of placed: their share was
	// divided among the available clusters, and they keep their own while they may still serve.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	FailedOver int32 `json:"failedOver,omitempty"`
	// shares counts the clusters per share, largest share first.
	// +optional
	// +listType=atomic
	Shares []ShareCount `json:"shares,omitempty"`
	// clusters names, sorted by name and at most 20 of them, the clusters whose share is not the most common one.
	// +optional
	// +listType=atomic
	Clusters []ClusterShare `json:"clusters,omitempty"`
	// clustersNotListed is how many clusters with an uncommon share are not named in clusters.
	// +optional
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	ClustersNotListed int32 `json:"clustersNotListed,omitempty"`
	// companions are the HorizontalPodAutoscalers and PodDisruptionBudgets of the template whose counts are
	// apportioned by this division (spec.splitCompanions Apportion): each cluster gets them divided by its
	// share, rounded as docs/overrides.md says. A PodDisruptionBudget over the pods of this and other workloads
	// is listed too, with a message, as it is delivered unchanged.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Companions []SplitCompanion `json:"companions,omitempty"`
}

// SplitCompanion is a manifest whose counts follow a split workload's division.
type SplitCompanion struct {
	// kind is HorizontalPodAutoscaler or PodDisruptionBudget.
	Kind string `json:"kind"`
	// name of the manifest; it is in the workload's namespace.
	Name string `json:"name"`
	// fields are the fields apportioned per cluster, such as spec.minReplicas. Empty when the companion is
	// delivered unchanged (see message).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	Fields []string `json:"fields,omitempty"`
	// message says why a manifest that looks like a companion of this workload is delivered unchanged to
	// every cluster instead, and what to do: a PodDisruptionBudget whose selector matches the pods of several
	// workloads of the template. Empty when the companion is apportioned.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// ShareCount says how many clusters hold a given share.
type ShareCount struct {
	// share is the value of the field on these clusters.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Share int32 `json:"share"`
	// clusters is how many clusters hold it.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Clusters int32 `json:"clusters"`
}

// FailedOverCluster is a cluster whose split shares are carried by other clusters.
type FailedOverCluster struct {
	// cluster is the ManagedCluster's name.
	Cluster string `json:"cluster"`
	// since is when it was failed over.
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="since must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	Since metav1.Time `json:"since"`
}

// ClusterShare is one cluster's share.
type ClusterShare struct {
	// cluster is the ManagedCluster's name.
	Cluster string `json:"cluster"`
	// share is the value of the field on that cluster.
	// +kubebuilder:validation:Minimum=-2147483648
	// +kubebuilder:validation:Maximum=2147483647
	Share int32 `json:"share"`
}

// PlacementManifestWork writes one ManifestWork per cluster selected by a Placement, replicating or splitting
// each manifest of its template, and rolls the clusters' results up into its status.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pmw,categories=ocm
// +kubebuilder:printcolumn:name="Placement",type=string,JSONPath=`.status.placement`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.placedManifestWorkSummary.total`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.placedManifestWorkSummary.available`
// +kubebuilder:printcolumn:name="Degraded",type=integer,JSONPath=`.status.placedManifestWorkSummary.degraded`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="has(self.spec.placementRef) || size(self.metadata.name) <= 63",message="without spec.placementRef the generated Placement takes this name, and OCM puts Placement names in a label value: use a name of at most 63 characters or set spec.placementRef"
type PlacementManifestWork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlacementManifestWorkSpec   `json:"spec"`
	Status PlacementManifestWorkStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PlacementManifestWorkList is a list of PlacementManifestWorks.
type PlacementManifestWorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlacementManifestWork `json:"items"`
}

// PlacementName is the name of the Placement whose decisions the PlacementManifestWork uses.
func (p *PlacementManifestWork) PlacementName() string {
	if p.Spec.PlacementRef != nil {
		return p.Spec.PlacementRef.Name
	}
	return p.Name
}
