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
	v, ok := health.VerdictOf(string(state))
	if !ok {
		return health.Verdict{}, fmt.Errorf("state %q is none of Healthy, Progressing, Degraded, Completed, Failed", state)
	}
	v.Reason, v.Message = r.Reason, truncate(r.Message, maxMessage)
	if v.Reason == "" && v.State != health.Healthy {
		v.Reason = "Webhook" + string(state)
	}
	return v, nil
}
