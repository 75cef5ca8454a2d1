package interpreterwebhook

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// DefaultRememberedAnswers bounds how many answers a Caller keeps.
const DefaultRememberedAnswers = 10000

// Caller is how the manager's interpreters call their webhooks (interpreter.Webhooks). A reconcile asks every
// cluster's health again although little changed, so answers are remembered by question: the webhook, the
// operation, the object and the reported status. The same question gets the same answer without another
// round trip; a changed object or status is a new question. Failures are not remembered, so a webhook that
// recovers is asked again.
type Caller struct {
	Client *Client
	// Max bounds the remembered answers; DefaultRememberedAnswers when 0. When full, all are forgotten.
	Max int

	mu      sync.Mutex
	answers map[[sha256.Size]byte]*webhook.Response
}

var _ interpreter.Webhooks = (*Caller)(nil)

// Call answers from memory or asks the webhook, within the webhook's timeout (the Client's bound).
func (c *Caller) Call(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
	key, err := question(hook, req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	answer, ok := c.answers[key]
	c.mu.Unlock()
	if ok {
		return answer, nil
	}
	resp, err := c.Client.Call(context.Background(), hook, req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.Max
	if limit <= 0 {
		limit = DefaultRememberedAnswers
	}
	if c.answers == nil || len(c.answers) >= limit {
		c.answers = map[[sha256.Size]byte]*webhook.Response{}
	}
	c.answers[key] = resp
	return resp, nil
}

// question identifies a request by what it asks: everything but its uid.
func question(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) ([sha256.Size]byte, error) {
	req.UID = ""
	b, err := json.Marshal(struct {
		Hook    *workv1alpha1.InterpreterWebhook
		Request webhook.Request
	}{hook, req})
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}
