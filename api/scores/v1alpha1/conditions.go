package v1alpha1

// Condition types of an AddOnPlacementScoreGenerator. The score agent that consumes the generator sets them.
const (
	// ConditionValid is True when the agent accepted the generator: every probe is allowed (its URL passes the
	// agent's allowlist) and every otherPlugin entry names a plugin the agent has, with options it accepts.
	// While it is False nothing is measured.
	ConditionValid = "Valid"
	// ConditionMeasured is True when the last measurement wrote every score to the AddOnPlacementScore; False
	// when some score could not be measured (its plugin failed), the write was refused, or the generator is
	// not Valid. A latency probe whose runs fail is measured: each failed run counts as the probe's timeout,
	// the slowest it can observe, and status.scores[].message says so.
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
	// ReasonInvalid: the generator asks for something the agent will not measure for another cause: a latency
	// entry whose options are outside the agent's bounds, or a validFor not longer than interval plus a
	// measurement's worst case (every latency run timing out, with the waits between runs, as many at once as
	// the agent measures), so that its scores could expire before the next measurement rewrites them; the
	// message says what to change. Nothing is measured until it changes.
	ReasonInvalid = "Invalid"
)

// Reasons of the Measured condition.
const (
	// ReasonMeasured: every score was measured and the AddOnPlacementScore written, valid until
	// status.lastMeasuredTime plus spec.validFor.
	ReasonMeasured = "Measured"
	// ReasonMeasureFailed: some score could not be measured (its plugin returned an error, such as a redirect
	// the agent's allowlist refuses or nodes that cannot be listed), or the AddOnPlacementScore could not be
	// written; the message names the score and the error. A score that could not be measured is left out of
	// the AddOnPlacementScore and the others are written; when none could be, the AddOnPlacementScore is left
	// as it was, its scores counting until their validUntil passes.
	ReasonMeasureFailed = "MeasureFailed"
	// ReasonNotValid: the generator is not Valid (see that condition), so nothing is measured. The scores
	// written before stay until their validUntil passes.
	ReasonNotValid = "NotValid"
)

// The condition the agent sets on the AddOnPlacementScore it writes (OCM's kind, which defines none), as the
// design seed's example shows it: True, with this reason, each time the agent writes the scores.
const (
	// AddOnPlacementScoreConditionUpdated is the AddOnPlacementScore's condition type.
	AddOnPlacementScoreConditionUpdated = "AddOnPlacementScoreUpdated"
	// ReasonAddOnPlacementScoreUpdated: the agent wrote the scores, valid until the score's validUntil.
	ReasonAddOnPlacementScoreUpdated = "AddOnPlacementScoreUpdated"
)
