package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterSpec says what the manager knows of one kind of manifest: which integer fields a Split
// divides, which status fields the work agent reports, how to judge health from them, how they roll up across
// clusters, which hub objects a manifest needs, and which fields the managed cluster owns. Every part is
// optional; a part left out falls back to the built-in interpretation of the kind, if there is one.
// +kubebuilder:validation:XValidation:rule="has(self.replicas) || has(self.statusFeedback) || has(self.health) || has(self.aggregation) || has(self.dependencies) || has(self.retain) || has(self.webhook)",message="an interpreter must say something: set at least one of replicas, statusFeedback, health, aggregation, dependencies, retain or webhook"
type ResourceInterpreterSpec struct {
	// target is the kind this interpreter describes.
	Target InterpreterTarget `json:"target"`

	// replicas are the integer fields a Split divides for this kind when its split.fieldPath is not set, as
	// dotted paths such as .spec.replicas. With several (a RayCluster's head and worker groups), each is divided
	// with the same weights; the first is the one the PlacementManifestWork's status and health follow.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^(\.[A-Za-z0-9_-]+)+$`
	// +kubebuilder:validation:items:MaxLength=256
	Replicas []string `json:"replicas,omitempty"`

	// statusFeedback are the status fields the work agent reports for manifests of this kind: they are added to
	// the ManifestWork's manifestConfigs (as JSONPaths feedback rules) and are the variables health and
	// aggregation read. OCM's agent reports scalar values only (integers, strings, booleans).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	StatusFeedback []InterpreterFeedback `json:"statusFeedback,omitempty"`

	// health judges one manifest on one cluster from the manifest as delivered to that cluster and its
	// reported status feedback.
	// +optional
	Health *InterpreterHealth `json:"health,omitempty"`

	// aggregation says how reported status fields roll up across clusters into the PlacementManifestWork's
	// status (status.manifests[].aggregated).
	// +optional
	// +listType=map
	// +listMapKey=feedback
	// +kubebuilder:validation:MaxItems=32
	Aggregation []InterpreterAggregation `json:"aggregation,omitempty"`

	// dependencies names the hub objects a manifest needs (the ConfigMaps, Secrets and ServiceAccounts its pod
	// template references). A PlacementManifestWork with spec.propagateDependencies delivers them beside the
	// manifest; others leave them alone.
	// +optional
	Dependencies *InterpreterDependencies `json:"dependencies,omitempty"`

	// retain are fields that controllers on the managed cluster own (an autoscaler's .spec.replicas): the
	// ManifestWork asks the agent to apply the manifest server-side and to leave these fields as the cluster
	// changed them. Kubernetes JSONPaths such as .spec.replicas.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=256
	Retain []string `json:"retain,omitempty"`

	// webhook asks an HTTPS endpoint for the operations it lists, instead of or beside the declarative parts.
	// +optional
	Webhook *InterpreterWebhook `json:"webhook,omitempty"`
}

// InterpreterTarget names a kind.
type InterpreterTarget struct {
	// group is the API group, empty for the core group.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group,omitempty"`
	// kind is the kind, such as Rollout.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind"`
	// versions limits the interpreter to these versions of the kind; all versions when empty.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	Versions []string `json:"versions,omitempty"`
}

// InterpreterFeedback is one status field the work agent reports.
type InterpreterFeedback struct {
	// name is how health, aggregation and the status call the value: an identifier such as readyReplicas.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`
	// jsonPath is the Kubernetes JSONPath of the field in the object on the managed cluster, such as
	// .status.readyReplicas or .status.conditions[?(@.type=="Ready")].status.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=512
	JSONPath string `json:"jsonPath"`
}

// InterpreterHealth is a CEL expression that judges health.
type InterpreterHealth struct {
	// expression is a CEL expression over
	//   object: the manifest as delivered to the cluster (a split manifest carries the cluster's share),
	//   status: the reported status feedback, by name (a name not reported is absent: use has(status.x)),
	//   share:  the cluster's share of the first replicas field, or -1 when the manifest is not split.
	// It returns either a string, the state (Healthy, Progressing, Degraded or Completed), or a map with
	// state, and optionally reason (CamelCase) and message.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Expression string `json:"expression"`
}

// AggregationOperation is how a reported field rolls up across clusters.
// +kubebuilder:validation:Enum=Sum;Min;Max;Count
type AggregationOperation string

const (
	// AggregationSum adds an integer field across clusters.
	AggregationSum AggregationOperation = "Sum"
	// AggregationMin is the smallest value of an integer field.
	AggregationMin AggregationOperation = "Min"
	// AggregationMax is the largest value of an integer field.
	AggregationMax AggregationOperation = "Max"
	// AggregationCount counts the clusters per reported value of any field ("Healthy on 4, Paused on 1").
	AggregationCount AggregationOperation = "Count"
)

// InterpreterAggregation rolls one reported field up.
type InterpreterAggregation struct {
	// feedback is the name of a statusFeedback entry.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Feedback string `json:"feedback"`
	// operation is Sum, Min, Max (integer fields) or Count (clusters per value).
	Operation AggregationOperation `json:"operation"`
}

// InterpreterDependencies is a CEL expression that names the hub objects a manifest needs.
type InterpreterDependencies struct {
	// expression is a CEL expression over object (the manifest as in the template) that returns a list of maps
	// with kind (ConfigMap, Secret or ServiceAccount) and name. They are read from the PlacementManifestWork's
	// namespace on the hub and delivered into the manifest's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Expression string `json:"expression"`
}

// InterpreterOperation is an operation a webhook answers.
// +kubebuilder:validation:Enum=InterpretHealth;InterpretDependency;ReviseReplica;AggregateStatus
type InterpreterOperation string

const (
	// OperationInterpretHealth asks for the health of one manifest on one cluster.
	OperationInterpretHealth InterpreterOperation = "InterpretHealth"
	// OperationInterpretDependency asks for the hub objects a manifest needs.
	OperationInterpretDependency InterpreterOperation = "InterpretDependency"
	// OperationReviseReplica asks for a JSON patch that sets a manifest's replicas to a cluster's share.
	OperationReviseReplica InterpreterOperation = "ReviseReplica"
	// OperationAggregateStatus asks for the roll-up of the clusters' reported status.
	OperationAggregateStatus InterpreterOperation = "AggregateStatus"
)

// FailurePolicy says what a failed webhook call means.
// +kubebuilder:validation:Enum=Fail;Ignore
type FailurePolicy string

const (
	// FailurePolicyFail makes the affected manifests Degraded (health) or the PlacementManifestWork not
	// distributed (replicas, dependencies), with the error on its conditions.
	FailurePolicyFail FailurePolicy = "Fail"
	// FailurePolicyIgnore falls back to the declarative parts or the built-in interpretation.
	FailurePolicyIgnore FailurePolicy = "Ignore"
)

// InterpreterWebhook is an HTTPS endpoint that answers the interpreter review protocol (docs/interpreters.md).
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.service)",message="set exactly one of url and service"
type InterpreterWebhook struct {
	// url is the endpoint's https:// URL.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https://`
	URL *string `json:"url,omitempty"`
	// service is a Service on the hub that serves the endpoint.
	// +optional
	Service *WebhookService `json:"service,omitempty"`
	// caBundle is the PEM bundle that signs the endpoint's serving certificate; the system roots when empty.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
	// operations are the operations the webhook answers.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	Operations []InterpreterOperation `json:"operations"`
	// timeoutSeconds bounds one call.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// failurePolicy is Fail (the default) or Ignore.
	// +optional
	// +kubebuilder:default=Fail
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// WebhookService names a Service that serves a webhook.
type WebhookService struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// path is the URL path; / when empty.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Path *string `json:"path,omitempty"`
	// port is the Service's port; 443 when empty.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
}

// ResourceInterpreterStatus says whether the manager uses the interpreter.
type ResourceInterpreterStatus struct {
	// observedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready is True when the manager compiled the interpreter and uses it for its kind; False with
	// InvalidExpression, CostLimitExceeded or TargetConflict when it does not, and why.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceInterpreter tells the manager how to split, judge and summarise one kind of manifest, so any
// workload kind is served without writing Go. It replaces the built-in interpretation of its kind.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=rint,categories=ocm
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.spec.target.group`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceInterpreter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ResourceInterpreterSpec   `json:"spec"`
	Status ResourceInterpreterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceInterpreterList is a list of ResourceInterpreters.
type ResourceInterpreterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreter `json:"items"`
}
