package v1alpha1

// Condition types of an AddOnPlacementScoreGenerator. The score agent that consumes the generator sets them.
const (
	// ConditionValid is True when the agent accepted the generator: every probe is allowed (its URL passes the
	// agent's allowlist) and every otherPlugin entry names a plugin the agent has, with options it accepts.
	// While it is False nothing is measured.
	ConditionValid = "Valid"
	// ConditionMeasured is True when the last measurement wrote the AddOnPlacementScore; False when it could
	// not (a probe failed every run, a plugin failed, the write was refused). The scores written before stay
	// until their validUntil passes.
	ConditionMeasured = "Measured"
)

// Reasons of the Valid condition.
const (
	// ReasonAccepted: every probe is allowed and every plugin is known; the generator is measured.
	ReasonAccepted = "Accepted"
	// ReasonProbeRefused: a probe asks for a URL the agent's allowlist refuses (by default, loopback,
	// link-local, private and metadata addresses); the message names the probe and the address. Nothing is
	// measured until the URL changes or the agent allows it.
	ReasonProbeRefused = "ProbeRefused"
	// ReasonInvalidPlugin: an otherPlugin entry names a plugin the agent does not have, or options the plugin
	// refuses; the message names the entry. Nothing is measured until it changes.
	ReasonInvalidPlugin = "InvalidPlugin"
)

// Reasons of the Measured condition.
const (
	// ReasonMeasured: every score was measured and the AddOnPlacementScore written, valid until
	// status.lastMeasuredTime plus spec.validFor.
	ReasonMeasured = "Measured"
	// ReasonMeasureFailed: some score could not be measured (every run of a probe failed or timed out, a
	// plugin returned an error), or the AddOnPlacementScore could not be written; the message names the score
	// and the error. The scores written before stay until their validUntil passes.
	ReasonMeasureFailed = "MeasureFailed"
)
