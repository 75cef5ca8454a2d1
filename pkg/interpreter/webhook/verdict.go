package webhook

import (
	"fmt"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// Verdict turns an InterpretHealth answer into a health verdict. State wins over Healthy; Completed and
// Failed are finished Healthy and Degraded. A state that is not Healthy (nor Completed) and comes without a reason gets
// Webhook<State> (WebhookDegraded, ...). The message is cut to 1024 bytes.
func (r *Response) Verdict() (health.Verdict, error) {
	if r.Reason != "" && (len(r.Reason) > maxReason || !reasonPattern.MatchString(r.Reason)) {
		return health.Verdict{}, fmt.Errorf("reason %q is not a CamelCase word of at most %d characters", truncate(r.Reason, maxReason), maxReason)
	}
	state := r.State
	if state == "" {
		if r.Healthy == nil {
			return health.Verdict{}, fmt.Errorf("neither healthy nor state")
		}
		state = StateDegraded
		if *r.Healthy {
			state = StateHealthy
		}
	}
	v := health.Verdict{Reason: r.Reason, Message: truncate(r.Message, maxMessage)}
	switch state {
	case StateHealthy:
		v.State = health.Healthy
	case StateProgressing:
		v.State = health.Progressing
	case StateDegraded:
		v.State = health.Degraded
	case StateCompleted:
		v.State, v.Finished = health.Healthy, true
	case StateFailed:
		v.State, v.Finished = health.Degraded, true
	default:
		return health.Verdict{}, fmt.Errorf("state %q is none of Healthy, Progressing, Degraded, Completed, Failed", state)
	}
	if v.Reason == "" && v.State != health.Healthy {
		v.Reason = "Webhook" + string(state)
	}
	return v, nil
}
