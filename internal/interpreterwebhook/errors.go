package interpreterwebhook

import (
	"errors"
	"fmt"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// ErrorReason is what went wrong with a call, a CamelCase word fit for a condition reason.
type ErrorReason string

const (
	// ReasonMisconfigured: the webhook cannot be called as written (no url or service, a caBundle with no
	// certificate, an operation it does not list).
	ReasonMisconfigured ErrorReason = "WebhookMisconfigured"
	// ReasonUnreachable: no connection, or it broke.
	ReasonUnreachable ErrorReason = "WebhookUnreachable"
	// ReasonTLS: the serving certificate is not signed by the caBundle (or the system roots) or is not for
	// the host.
	ReasonTLS ErrorReason = "WebhookTLSError"
	// ReasonTimeout: no answer within timeoutSeconds.
	ReasonTimeout ErrorReason = "WebhookTimeout"
	// ReasonHTTPError: an HTTP status other than 2xx.
	ReasonHTTPError ErrorReason = "WebhookHTTPError"
	// ReasonGarbage: an answer that is not a review, too large, for another uid, or without what the
	// operation needs.
	ReasonGarbage ErrorReason = "WebhookGarbage"
	// ReasonRejected: the webhook answered successful: false.
	ReasonRejected ErrorReason = "WebhookRejected"
	// ReasonCanceled: the caller's context ended first (the manager is stopping); not the webhook's fault.
	ReasonCanceled ErrorReason = "WebhookCallCanceled"
)

// Error is a failed call.
type Error struct {
	// URL is the endpoint called, empty when there was none.
	URL       string
	Operation workv1alpha1.InterpreterOperation
	Reason    ErrorReason
	// Detail says what went wrong: "timed out after 10s", "answered HTTP 500: ...", "answered garbage: ...".
	Detail string
}

func (e *Error) Error() string {
	switch {
	case e.URL == "":
		return fmt.Sprintf("interpreter webhook: %s", e.Detail)
	case e.Operation == "":
		return fmt.Sprintf("interpreter webhook %s %s", e.URL, e.Detail)
	default:
		return fmt.Sprintf("interpreter webhook %s (%s) %s", e.URL, e.Operation, e.Detail)
	}
}

// ReasonOf is the reason of a call's error, empty for nil and for errors that are not *Error.
func ReasonOf(err error) ErrorReason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

var errTimeout = errors.New("interpreter webhook timeout")

// Decision is what a caller does with a call's outcome.
type Decision int

const (
	// Use the answer: the call succeeded.
	Use Decision = iota
	// Fail the operation: Degraded health, or the PlacementManifestWork not distributed, with the error on
	// its conditions.
	Fail
	// Ignore the webhook: fall back to the declarative parts or the built-in interpretation (and say so on
	// the conditions).
	Ignore
)

func (d Decision) String() string {
	switch d {
	case Use:
		return "Use"
	case Fail:
		return "Fail"
	case Ignore:
		return "Ignore"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// ApplyFailurePolicy says what a call's error means under the webhook's failure policy: Use when there is no
// error, Ignore when the policy is Ignore, Fail otherwise (Fail is the default). A canceled call is Fail
// whatever the policy: the caller is stopping and must not act on a fallback it did not choose.
func ApplyFailurePolicy(err error, hook *workv1alpha1.InterpreterWebhook) Decision {
	switch {
	case err == nil:
		return Use
	case ReasonOf(err) == ReasonCanceled:
		return Fail
	case hook != nil && hook.FailurePolicy == workv1alpha1.FailurePolicyIgnore:
		return Ignore
	default:
		return Fail
	}
}
