package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The values the score agent uses for fields left unset; none is stored in the object.
const (
	// DefaultValidFor is how long a measured score stays valid when spec.validFor is not set.
	DefaultValidFor = 10 * time.Minute
	// DefaultInterval is how often the agent measures again when spec.interval is not set.
	DefaultInterval = time.Minute
	// DefaultRuns is how many times a latency probe runs per measurement when runs is not set.
	DefaultRuns = 1
	// DefaultWaitBetweenRuns is the pause between two runs of a latency probe when waitBetweenRuns is not set.
	DefaultWaitBetweenRuns = time.Duration(0)
	// DefaultProbeTimeout bounds one run of a latency probe when timeout is not set.
	DefaultProbeTimeout = 5 * time.Second
	// DefaultHalfMillis is the latency, in milliseconds, that scores 0 when a probe has no scale.
	DefaultHalfMillis = 100
)

// AddOnPlacementScoreGeneratorSpec says what a score-producing addon measures on the managed cluster whose
// namespace the generator lives in, and how the results become the scores of an AddOnPlacementScore.
// +kubebuilder:validation:XValidation:rule="has(self.latencies) && size(self.latencies) > 0 || has(self.otherPlugin) && size(self.otherPlugin) > 0",message="a generator must measure something: set latencies or otherPlugin"
// +kubebuilder:validation:XValidation:rule="!has(self.latencies) || !has(self.otherPlugin) || !self.latencies.exists(l, self.otherPlugin.exists(p, p.name == l.name))",message="a score name is used both in latencies and in otherPlugin: every score of the AddOnPlacementScore needs its own name"
// +kubebuilder:validation:XValidation:rule="!(has(self.interval) && (size(self.interval) == 0 || !self.interval.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$'))) && !(has(self.validFor) && (size(self.validFor) == 0 || !self.validFor.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$'))) ? duration(has(self.interval) ? self.interval : '1m') < duration(has(self.validFor) ? self.validFor : '10m') : true",message="interval must be shorter than validFor (by default 1m and 10m), or the scores expire before they are measured again",fieldPath=".interval"
type AddOnPlacementScoreGeneratorSpec struct {
	// addOnPlacementSelector names the ManagedClusterAddOn that consumes this generator: only the agent of that
	// addon measures it.
	// +required
	AddOnPlacementSelector AddOnSelector `json:"addOnPlacementSelector"`

	// latencies are HTTP(S) round-trip probes from the managed cluster, one score each. The agent fetches each
	// URL runs times, waitBetweenRuns apart, takes the mean of the runs and maps it to a score with scale. Only
	// http and https URLs without credentials are admitted; the agent refuses, with the Valid condition, a URL
	// its allowlist does not allow, and follows no redirect outside it.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Latencies []LatencyProbe `json:"latencies,omitempty"`

	// otherPlugin are scores computed by other plugins of the agent (for example node-headroom, the free CPU and
	// memory of the cluster's nodes), each with the options that plugin reads.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	OtherPlugin []PluginScore `json:"otherPlugin,omitempty"`

	// validFor is how long a measured score stays valid: the AddOnPlacementScore's validUntil is the time of
	// the measurement plus validFor, after which OCM's placement gives the cluster a score of 0, as if it had
	// none (so a cluster whose agent stopped does not keep its last scores). From 30s to 24h; default 10m,
	// applied by the agent (nothing is stored). The agent refuses (Valid False, Invalid) a validFor not longer
	// than interval plus the longest a measurement can take, since the next measurement starts interval after
	// the last one ended and the scores would expire before it rewrites them.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$') && duration(self) >= duration('30s') && duration(self) <= duration('24h')",message="validFor must be a duration from 30s to 24h, such as 10m or 1h30m (units h, m, s and ms, largest first; days are not supported)"
	ValidFor *metav1.Duration `json:"validFor,omitempty"`

	// interval is how often the agent measures again. From 10s to 1h, and shorter than validFor; default 1m,
	// applied by the agent (nothing is stored).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$') && duration(self) >= duration('10s') && duration(self) <= duration('1h')",message="interval must be a duration from 10s to 1h, such as 30s or 5m (units h, m, s and ms, largest first; days are not supported)"
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// AddOnSelector names a ManagedClusterAddOn.
type AddOnSelector struct {
	// name of the ManagedClusterAddOn (the addon's name, such as latency).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="addOnPlacementSelector.name must be a DNS label: 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit, such as latency"
	Name string `json:"name"`

	// namespace of the ManagedClusterAddOn: the cluster's namespace, where ManagedClusterAddOns live. Unset
	// means this generator's namespace, the only one an agent reads.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="addOnPlacementSelector.namespace must be a DNS label: 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit, such as cluster1"
	Namespace string `json:"namespace,omitempty"`
}

// LatencyProbe measures the HTTP(S) round trip from the managed cluster to a URL and scores it.
type LatencyProbe struct {
	// name is the score's name in the AddOnPlacementScore: what a Placement's prioritizer (scoreCoordinate
	// addOn.scoreName) and a PlacementManifestWork's Score split (score.scoreName) name. OCM's placement joins
	// it into the prioritizer name AddOn/<resourceName>/<scoreName>, so it has no '/'.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="latencies[].name must be a score name: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, such as redhat-com-avgLatency"
	Name string `json:"name"`

	// url is fetched with GET, without credentials and without following redirects outside the agent's
	// allowlist; the time to the response's headers is one run's latency. Only absolute http and https URLs
	// with a host, and no user:password@.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="url must be an absolute http:// or https:// URL with a host, such as https://example.com/healthz"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[A-Za-z][-+.A-Za-z0-9]*://[^/?#]*@')",message="url must not carry credentials (user:password@host): the agent sends none"
	URL string `json:"url"`

	// runs is how many times the URL is fetched per measurement; the score is made from the mean latency of
	// the runs that answered. From 1 to 10; default 1, applied by the agent (nothing is stored).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Runs *int32 `json:"runs,omitempty"`

	// waitBetweenRuns is the pause between two runs. From 0 to 60s; default 0.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$') && duration(self) <= duration('60s')",message="waitBetweenRuns must be a duration from 0 to 60s, such as 10s or 500ms (units h, m, s and ms, largest first; days are not supported)"
	WaitBetweenRuns *metav1.Duration `json:"waitBetweenRuns,omitempty"`

	// timeout bounds one run: a run that has no response by then counts as failed. From 100ms to 30s;
	// default 5s, applied by the agent (nothing is stored).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self != '' && self.matches('^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$') && duration(self) >= duration('100ms') && duration(self) <= duration('30s')",message="timeout must be a duration from 100ms to 30s, such as 2s or 500ms (units h, m, s and ms, largest first; days are not supported)"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// scale maps the mean latency to a score in OCM's range [-100, 100]; unset, halfMillis is 100.
	// +optional
	Scale *LatencyScale `json:"scale,omitempty"`
}

// LatencyScale maps a latency of ms milliseconds to the score round(100 - 200*ms/(ms+halfMillis)): 0 ms scores
// 100, halfMillis scores 0, and slower latencies score towards -100 without reaching it (3*halfMillis scores
// -50, 9*halfMillis -80). The mapping is strictly decreasing, so it keeps the ranking of any two latencies
// (apart from ties made by rounding to whole numbers), and a Placement prioritizes the fastest clusters with a
// positive weight, without the sign tricks that raw milliseconds need. Pick halfMillis near the latency that
// separates good from poor for the URL: the scores are finest around it.
type LatencyScale struct {
	// halfMillis is the latency, in milliseconds, that scores 0. From 1 to 600000 (10 minutes).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600000
	HalfMillis int32 `json:"halfMillis"`
}

// PluginScore is a score computed by a plugin of the agent other than the latency probes.
type PluginScore struct {
	// name is the score's name in the AddOnPlacementScore, as latencies[].name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="otherPlugin[].name must be a score name: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, such as redhat-com-avgLatency"
	Name string `json:"name"`

	// plugin names the agent plugin that computes the score, such as node-headroom. An agent without that
	// plugin reports Valid False with reason InvalidPlugin.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="otherPlugin[].plugin must be a DNS label: 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit, such as node-headroom"
	Plugin string `json:"plugin"`

	// options are passed to the plugin as they are; what they mean is the plugin's to say. At most 32; keys of
	// 1 to 63 letters, digits, '-', '_' or '.', values of at most 1024 characters.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 63 && k.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="otherPlugin[].options keys must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 1024)",message="otherPlugin[].options values must be at most 1024 characters"
	Options map[string]string `json:"options,omitempty"`
}

// AddOnPlacementScoreGeneratorStatus is what the agent last measured and whether it could.
type AddOnPlacementScoreGeneratorStatus struct {
	// observedGeneration is the generation of the spec the agent last acted on.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Valid (the agent accepted the generator: every probe is allowed and every plugin known)
	// and Measured (the last measurement wrote the AddOnPlacementScore).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.lastTransitionTime >= timestamp('0001-01-01T00:00:00Z'))",message="conditions[].lastTransitionTime must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// lastMeasuredTime is when the scores of status.scores were measured (the AddOnPlacementScore's validUntil
	// is this plus spec.validFor).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= timestamp('0001-01-01T00:00:00Z')",message="lastMeasuredTime must be an RFC 3339 time such as 2024-01-01T00:00:00Z"
	LastMeasuredTime *metav1.Time `json:"lastMeasuredTime,omitempty"`

	// scores are the scores of the last measurement, as written to the AddOnPlacementScore, with the raw
	// measurements they were made from.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Scores []MeasuredScore `json:"scores,omitempty"`
}

// MeasuredScore is one measured score.
type MeasuredScore struct {
	// name is the score's name (latencies[].name or otherPlugin[].name).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="scores[].name must be a score name: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, such as redhat-com-avgLatency"
	Name string `json:"name"`

	// value is the score written to the AddOnPlacementScore, in OCM's range.
	// +required
	// +kubebuilder:validation:Minimum=-100
	// +kubebuilder:validation:Maximum=100
	Value int32 `json:"value"`

	// raw is the measurement the score was made from, for people, such as 84ms or 3.2 cores free.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Raw string `json:"raw,omitempty"`

	// message says what went wrong with this score, such as 1 of 3 runs timed out; empty when nothing did.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// AddOnPlacementScoreGenerator tells a score-producing addon what to measure on one managed cluster: it lives
// in that cluster's namespace on the hub, and the addon's agent writes the results to the AddOnPlacementScore
// of the same name in the same namespace, which OCM's Placement (prioritizerPolicy with scoreCoordinate type
// AddOn) and a PlacementManifestWork's Score split read.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=ocm
// +kubebuilder:printcolumn:name="AddOn",type=string,JSONPath=`.spec.addOnPlacementSelector.name`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Measured",type=string,JSONPath=`.status.conditions[?(@.type=="Measured")].status`
// +kubebuilder:printcolumn:name="Last-Measured",type=date,JSONPath=`.status.lastMeasuredTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AddOnPlacementScoreGenerator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AddOnPlacementScoreGeneratorSpec   `json:"spec"`
	Status AddOnPlacementScoreGeneratorStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AddOnPlacementScoreGeneratorList is a list of AddOnPlacementScoreGenerators.
type AddOnPlacementScoreGeneratorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddOnPlacementScoreGenerator `json:"items"`
}
