package v1alpha1

// Condition types of a PlacementManifestWork.
const (
	// ConditionReady is True when every decided cluster is available for the current generation (kstatus
	// "Current"): the condition Flux's health checks and `kubectl wait --for=condition=Ready` gate on.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the PlacementManifestWork is on its way to Ready (kstatus "InProgress").
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when it cannot progress without a change by the user (kstatus "Failed"): an
	// invalid template or spec, a missing Placement, a rollout strategy that cannot be used, a rollout stopped
	// by maxFailures. A foreign ManifestWork in the way blocks only its cluster and does not stall the rest.
	ConditionStalled = "Stalled"
	// ConditionPlacementVerified is True when the Placement exists and has decided at least one cluster.
	ConditionPlacementVerified = "PlacementVerified"
	// ConditionManifestworkApplied is True when every decided cluster has an up-to-date ManifestWork and every
	// one of them reports Applied for its current generation.
	ConditionManifestworkApplied = "ManifestworkApplied"
	// ConditionDistributed is True when every distributionStrategy entry was honoured: each names exactly one
	// manifest, and every split total is placed in full.
	ConditionDistributed = "Distributed"
	// ConditionRolloutComplete is True when every decided cluster carries the current template.
	ConditionRolloutComplete = "RolloutComplete"
	// ConditionCompleted, set only when the template has manifests that finish (Jobs, Pods, kinds whose
	// ResourceInterpreter says Completed or Failed), is True when the run completed on every decided cluster.
	ConditionCompleted = "Completed"
)

// Reasons of the PlacementVerified condition.
const (
	// ReasonPlacementDecided: the Placement exists and has decided at least one cluster.
	ReasonPlacementDecided = "PlacementDecided"
	// ReasonPlacementNotFound: the Placement does not exist. Existing ManifestWorks are kept.
	ReasonPlacementNotFound = "PlacementNotFound"
	// ReasonPlacementDecisionEmpty: the Placement exists but selects no cluster.
	ReasonPlacementDecisionEmpty = "PlacementDecisionEmpty"
)

// Reasons of the ManifestworkApplied condition.
const (
	// ReasonAsExpected: every ManifestWork is written and reports Applied for its current generation.
	ReasonAsExpected = "AsExpected"
	// ReasonWaitingForApply: every ManifestWork is written; some have not yet reported Applied for their
	// current generation.
	ReasonWaitingForApply = "WaitingForApply"
	// ReasonApplyFailed: some ManifestWorks report Applied=False for their current generation.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonManifestWorkConflict: a ManifestWork this PlacementManifestWork does not own has the name it would
	// write; that work is left alone and its cluster gets nothing.
	ReasonManifestWorkConflict = "ManifestWorkConflict"
	// ReasonWriteFailed: the API server refused to create, update or delete some ManifestWorks.
	ReasonWriteFailed = "WriteFailed"
	// ReasonInvalidTemplate: a manifest of the template is not a Kubernetes object; existing ManifestWorks are kept.
	ReasonInvalidTemplate = "InvalidTemplate"
	// ReasonManifestWorkTooLarge: a generated ManifestWork's manifests exceed OCM's size limit; existing
	// ManifestWorks are kept.
	ReasonManifestWorkTooLarge = "ManifestWorkTooLarge"
	// ReasonNoClusters: no cluster is decided, so there is nothing to apply.
	ReasonNoClusters = "NoClusters"
)

// Reasons of the Distributed condition.
const (
	// ReasonDistributed: every entry names one manifest and every split total is placed.
	ReasonDistributed = "Distributed"
	// ReasonStrategyMatchesNoManifest: a distributionStrategy entry names no manifest of the template.
	ReasonStrategyMatchesNoManifest = "StrategyMatchesNoManifest"
	// ReasonStrategyMatchesManyManifests: an entry matches several manifests; set group and kind to tell them apart.
	ReasonStrategyMatchesManyManifests = "StrategyMatchesManyManifests"
	// ReasonInvalidSplitField: a split manifest lacks its field, or the value is not a non-negative integer.
	// Existing ManifestWorks are kept as they were.
	ReasonInvalidSplitField = "InvalidSplitField"
	// ReasonReplicasUnplaced: part of a split total cannot be placed within limitRange.max.
	ReasonReplicasUnplaced = "ReplicasUnplaced"
	// ReasonDependencyNotFound: with spec.propagateDependencies, a ConfigMap, Secret or ServiceAccount a
	// manifest needs is not in the PlacementManifestWork's namespace on the hub (or cannot be delivered).
	// Nothing is written; the ManifestWorks already delivered are kept as they were. (An expression that
	// fails is ReasonInterpreterFailed.)
	ReasonDependencyNotFound = "DependencyNotFound"
	// ReasonInvalidOverride: spec.overrides cannot be used (an expression that does not compile or costs too
	// much, a selector that does not parse, a patch of a split field, an override whose manifests match none of
	// the template). Nothing is written, the ManifestWorks already delivered are kept, and the
	// PlacementManifestWork is Stalled: only the user can fix it.
	ReasonInvalidOverride = "InvalidOverride"
	// ReasonOverrideFailed: an override cannot be applied on some clusters (a path missing in a manifest, an
	// expression that fails for a cluster's labels or claims). Those clusters keep their ManifestWorks as they
	// were (a cluster without one gets none yet); the other clusters are served. Not Stalled: a change of a
	// cluster's labels or claims may fix it.
	ReasonOverrideFailed = "OverrideFailed"
)

// Reasons of the Ready, Reconciling and Stalled conditions.
const (
	// ReasonAllClustersAvailable: every decided cluster is available.
	ReasonAllClustersAvailable = "AllClustersAvailable"
	// ReasonClustersProgressing: some clusters are not yet available and none is degraded.
	ReasonClustersProgressing = "ClustersProgressing"
	// ReasonClustersDegraded: some clusters are degraded.
	ReasonClustersDegraded = "ClustersDegraded"
	// ReasonNotStalled: nothing needs the user's action.
	ReasonNotStalled = "NotStalled"
	// ReasonReady: the PlacementManifestWork is Ready, so it is not reconciling.
	ReasonReady = "Ready"
)

// Reasons a cluster is not available, in status.unhealthyClusters.
const (
	// ReasonClusterUnavailable: the ManagedCluster's Available condition is False or Unknown.
	ReasonClusterUnavailable = "ClusterUnavailable"
	// ReasonWorkNotCreated: the cluster has no ManifestWork yet.
	ReasonWorkNotCreated = "WorkNotCreated"
	// ReasonWorkNotApplied: the agent has not yet reported Applied for the current generation.
	ReasonWorkNotApplied = "WorkNotApplied"
	// ReasonWorkDegraded: the agent reports Degraded=True for the ManifestWork.
	ReasonWorkDegraded = "WorkDegraded"
	// ReasonWorkNotAvailable: the agent has not yet found every resource on the cluster.
	ReasonWorkNotAvailable = "WorkNotAvailable"
	// ReasonWorkDeleting: the ManifestWork is being deleted, so what it carries is on its way out.
	ReasonWorkDeleting = "WorkDeleting"
	// ReasonManifestProgressing: a manifest is not yet healthy (for example replicas not yet ready).
	ReasonManifestProgressing = "ManifestProgressing"
	// ReasonManifestDegraded: a manifest is degraded (for example a failed Job).
	ReasonManifestDegraded = "ManifestDegraded"
)

// Reasons of the RolloutComplete condition.
const (
	// ReasonRolloutSucceeded: every decided cluster carries the current template.
	ReasonRolloutSucceeded = "RolloutSucceeded"
	// ReasonRolloutProgressing: the rollout strategy is still bringing the template to clusters.
	ReasonRolloutProgressing = "RolloutProgressing"
	// ReasonRolloutMaxFailures: the rollout stopped because more clusters failed than maxFailures allows.
	ReasonRolloutMaxFailures = "RolloutMaxFailures"
	// ReasonRolloutTimeout: some clusters did not become available within progressDeadline.
	ReasonRolloutTimeout = "RolloutTimeout"
	// ReasonInvalidRolloutStrategy: the rollout strategy cannot be used (for example a malformed duration).
	ReasonInvalidRolloutStrategy = "InvalidRolloutStrategy"
	// ReasonRolloutPaused: spec.paused holds the current revision back from some clusters; they keep what
	// they carry until it is set to false.
	ReasonRolloutPaused = "RolloutPaused"
	// ReasonRolledBack: the current revision failed under failurePolicy Rollback (status.failedRevision): the
	// clusters that carried it return, or have returned, to the last completed revision, until the spec changes
	// or a retry is asked for.
	ReasonRolledBack = "RolledBack"
	// ReasonRolloutAwaitingApproval: the rollout of the current revision reached a rollout gate
	// (spec.rolloutGates, status.rollout.awaitingApproval) that is not approved for it; the clusters beyond the
	// gate keep what they carry.
	ReasonRolloutAwaitingApproval = "RolloutAwaitingApproval"
)

// Reasons of the Completed condition.
const (
	// ReasonAllClustersCompleted: every finishing manifest completed on every decided cluster, and every cluster
	// is healthy.
	ReasonAllClustersCompleted = "AllClustersCompleted"
	// ReasonClustersFailed: every decided cluster finished, and on some a finishing manifest failed. The run
	// does not start again by itself: change the template to run it again.
	ReasonClustersFailed = "ClustersFailed"
	// ReasonRunning: some decided clusters have not finished yet (or no cluster is decided).
	ReasonRunning = "Running"
)

// Reasons of the PlacementVerified condition that keep the delivered ManifestWorks as they are.
const (
	// ReasonPlacementNotDecided: the Placement exists but OCM's placement controller has not decided it yet (it
	// was just created or re-created, or its decisions still belong to an earlier Placement of the same name).
	// The ManifestWorks already delivered are kept until it is decided.
	ReasonPlacementNotDecided = "PlacementNotDecided"
)

// Reasons a cluster is not available that come from the rollout.
const (
	// ReasonOutdatedTemplate: the cluster runs an earlier template; the rollout strategy has not brought the
	// current one there yet (or writing it failed).
	ReasonOutdatedTemplate = "OutdatedTemplate"
)

// Reasons of the Stalled, Ready and ManifestworkApplied conditions for a spec the manager cannot use.
const (
	// ReasonInvalidSpec: fields of the stored spec cannot be decoded (stored before the CRD refused such values,
	// for example moveStrategy.timeout: 1d). Nothing is written and the delivered ManifestWorks are kept until
	// the user fixes the fields the message names.
	ReasonInvalidSpec = "InvalidSpec"
)

// Reasons of the events the manager records on a PlacementManifestWork, besides a Warning with the reason of a
// condition that enters a failure.
const (
	// EventReasonDegraded (Warning): the first cluster became degraded.
	EventReasonDegraded = "Degraded"
	// EventReasonRecovered (Normal): no cluster is degraded any more.
	EventReasonRecovered = "Recovered"
	// EventReasonReady (Normal): the PlacementManifestWork became Ready.
	EventReasonReady = "Ready"
	// EventReasonCompleted (Normal): a run that finishes completed on every decided cluster.
	EventReasonCompleted = "Completed"
	// EventReasonRunFailed (Warning): a run that finishes ended on every decided cluster, and failed on some.
	EventReasonRunFailed = "RunFailed"
	// EventReasonRolloutPaused (Normal): spec.paused started holding the current revision back from some
	// clusters (RolloutComplete entered RolloutPaused).
	EventReasonRolloutPaused = "RolloutPaused"
	// EventReasonRolloutFailed (Warning): the current revision failed under failurePolicy Rollback
	// (status.failedRevision was set); the rollback starts.
	EventReasonRolloutFailed = "RolloutFailed"
	// EventReasonRolledBack (Normal): no cluster carries the failed revision any more: every decided cluster
	// carries the last completed revision again.
	EventReasonRolledBack = "RolledBack"
	// EventReasonRolloutStarted (Normal): a new revision started rolling out (status.currentRevision changed to
	// a revision that is not the completed one).
	EventReasonRolloutStarted = "RolloutStarted"
	// EventReasonRolloutCompleted (Normal): the current revision became the completed one
	// (status.completedRevision): every decided cluster carries it and is available.
	EventReasonRolloutCompleted = "RolloutCompleted"
	// EventReasonRolloutAwaitingApproval (Normal): the rollout reached a rollout gate that is not approved
	// (RolloutComplete entered RolloutAwaitingApproval).
	EventReasonRolloutAwaitingApproval = "RolloutAwaitingApproval"
	// EventReasonRolloutApproved (Normal): the manager acted on an approval of a rollout gate
	// (status.approvals).
	EventReasonRolloutApproved = "RolloutApproved"
)

// Reasons of a ResourceInterpreter's Ready condition (ConditionReady: True when the manager compiled the
// interpreter and uses it for its kind), and of what its evaluation does to a PlacementManifestWork.
const (
	// ReasonInterpreterAccepted: the interpreter compiled and is in use for its kind.
	ReasonInterpreterAccepted = "Accepted"
	// ReasonInvalidExpression: a CEL expression does not compile, or does not return what its part needs.
	ReasonInvalidExpression = "InvalidExpression"
	// ReasonCostLimitExceeded: a CEL expression's estimated worst-case cost is over the manager's budget (an
	// evaluation that runs over its runtime limit is InterpreterFailed instead).
	ReasonCostLimitExceeded = "CostLimitExceeded"
	// ReasonTargetConflict: another interpreter, older or earlier by name, already describes this kind and
	// version; this one is not used.
	ReasonTargetConflict = "TargetConflict"
	// ReasonInterpreterFailed (on a PlacementManifestWork's clusters and conditions): an interpreter's
	// expression failed at evaluation, or its webhook did not answer, and its failure policy is Fail.
	ReasonInterpreterFailed = "InterpreterFailed"
)
