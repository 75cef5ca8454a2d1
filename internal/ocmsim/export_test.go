package ocmsim

// Internals the external tests check directly.
var (
	Feedback      = feedback
	WildcardMatch = wildcardMatch
)

const (
	ConditionFeedbackSynced = conditionFeedbackSynced
	ReasonNoFeedback        = reasonNoFeedback
)
