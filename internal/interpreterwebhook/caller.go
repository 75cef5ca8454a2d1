package interpreterwebhook

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// DefaultRememberedAnswers bounds how many answers a Caller keeps.
const DefaultRememberedAnswers = 10000

// Caller is how the manager's interpreters call their webhooks (interpreter.Webhooks). A reconcile asks every
// cluster's health again although little changed, so answers are remembered by question: the webhook, the
// operation, the object and the reported status. The same question gets the same answer without another
// round trip; a changed object or status is a new question.
//
// Failures are remembered briefly, by webhook (its spec) and operation, so that one webhook that does not
// answer cannot hold up every reconcile: within one reconcile (a Session), a webhook that timed out or could not
// be reached is not called again, and each later call fails at once with the same error; across reconciles, a
// timeout is remembered for the webhook's timeout (no longer than a call that waited for it would have taken
// to fail). Other failures (an HTTP error, garbage, a rejection) may depend on the question, and are not
// remembered. A webhook that recovers is asked again by the next reconcile, at most one timeout later.
type Caller struct {
	Client *Client
	// Max bounds the remembered answers; DefaultRememberedAnswers when 0. When full, all are forgotten.
	Max int
	// Now is the clock for remembered timeouts; time.Now when nil.
	Now func() time.Time

	mu      sync.Mutex
	answers map[[sha256.Size]byte]*webhook.Response
	// timedOut are the webhooks (and operations) whose last call timed out, until when that is remembered.
	timedOut map[[sha256.Size]byte]failure
}

// failure is a remembered failed call.
type failure struct {
	err   error
	until time.Time
}

var _ interpreter.Webhooks = (*Caller)(nil)

// Call answers from memory or asks the webhook, within the webhook's timeout (the Client's bound), outside of
// any reconcile: Session is a reconcile's way.
func (c *Caller) Call(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
	return c.call(context.Background(), nil, hook, req)
}

// Session is one reconcile's way to call webhooks: calls end with the reconcile's context, and a webhook
// that timed out or could not be reached in the session is not called again in it.
type Session struct {
	caller *Caller
	ctx    context.Context

	mu     sync.Mutex
	failed map[[sha256.Size]byte]error
}

var _ interpreter.Webhooks = (*Session)(nil)

// Session starts the calls of one reconcile, bound by ctx.
func (c *Caller) Session(ctx context.Context) *Session {
	return &Session{caller: c, ctx: ctx}
}

// Call answers from memory, fails at once with the error of a webhook that already timed out or could not be
// reached in this session (or timed out lately), or asks the webhook.
func (s *Session) Call(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
	return s.caller.call(s.ctx, s, hook, req)
}

func (s *Session) failure(key [sha256.Size]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[key]
}

func (s *Session) remember(key [sha256.Size]byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = map[[sha256.Size]byte]error{}
	}
	s.failed[key] = err
}

// call is Call within session s (none when nil).
func (c *Caller) call(ctx context.Context, s *Session, hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
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
	target, err := webhookOf(hook, req.Operation)
	if err != nil {
		return nil, err
	}
	if s != nil {
		if err := s.failure(target); err != nil {
			return nil, err
		}
	}
	if err := c.recentTimeout(target); err != nil {
		return nil, err
	}
	resp, err := c.Client.Call(ctx, hook, req)
	if err != nil {
		switch ReasonOf(err) {
		case ReasonTimeout:
			c.rememberTimeout(target, err, Timeout(hook))
			if s != nil {
				s.remember(target, err)
			}
		case ReasonUnreachable:
			if s != nil {
				s.remember(target, err)
			}
		}
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

func (c *Caller) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// recentTimeout is the error of the webhook's last call when it timed out less than its timeout ago.
func (c *Caller) recentTimeout(target [sha256.Size]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.timedOut[target]
	if !ok {
		return nil
	}
	if !c.now().Before(f.until) {
		delete(c.timedOut, target)
		return nil
	}
	return f.err
}

// rememberTimeout remembers that the webhook timed out, for as long as its timeout; expired ones are dropped.
func (c *Caller) rememberTimeout(target [sha256.Size]byte, err error, timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.timedOut == nil {
		c.timedOut = map[[sha256.Size]byte]failure{}
	}
	for k, f := range c.timedOut {
		if !now.Before(f.until) {
			delete(c.timedOut, k)
		}
	}
	c.timedOut[target] = failure{err: err, until: now.Add(timeout)}
}

// question identifies a request by what it asks: everything but its uid.
func question(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) ([sha256.Size]byte, error) {
	req.UID = ""
	return digest(struct {
		Hook    *workv1alpha1.InterpreterWebhook
		Request webhook.Request
	}{hook, req})
}

// webhookOf identifies the webhook an operation is asked of: its spec (where, which trust, which timeout) and
// the operation.
func webhookOf(hook *workv1alpha1.InterpreterWebhook, op workv1alpha1.InterpreterOperation) ([sha256.Size]byte, error) {
	return digest(struct {
		Hook      *workv1alpha1.InterpreterWebhook
		Operation workv1alpha1.InterpreterOperation
	}{hook, op})
}

func digest(v any) ([sha256.Size]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}
