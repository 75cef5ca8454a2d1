package interpreterwebhook

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/database"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// TestCallerRemembersAnswers: the same question is answered from memory; another object or status, or a
// failure, is asked; a full memory starts afresh.
func TestCallerRemembersAnswers(t *testing.T) {
	cert := webhooktest.NewCertificate(t, "127.0.0.1")
	var calls atomic.Int32
	handler := database.Handler()
	server := webhooktest.NewTLSServer(t, cert, httpCounting(&calls, handler))
	hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To(server.URL), CABundle: cert.CA,
		Operations: []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth}}
	ask := func(phase string) *webhook.Request {
		return &webhook.Request{Operation: workv1alpha1.OperationInterpretHealth,
			Kind: kindOf(database.Group, "v1", database.Kind), Name: "orders",
			Object: []byte(`{"spec":{"replicas":1}}`), Status: webhook.Status{database.FeedbackPhase: phase, database.FeedbackReadyInstances: int64(1)}}
	}
	c := &Caller{Client: &Client{}, Max: 2}
	steps := []struct {
		phase     string
		wantCalls int32
		wantState webhook.State
	}{
		{phase: database.PhaseReady, wantCalls: 1, wantState: webhook.StateHealthy},
		{phase: database.PhaseReady, wantCalls: 1, wantState: webhook.StateHealthy}, // remembered
		{phase: database.PhaseFailed, wantCalls: 2, wantState: webhook.StateDegraded},
		{phase: database.PhaseReady, wantCalls: 2, wantState: webhook.StateHealthy},            // still remembered
		{phase: database.PhaseProvisioning, wantCalls: 3, wantState: webhook.StateProgressing}, // memory full: afresh
		{phase: database.PhaseReady, wantCalls: 4, wantState: webhook.StateHealthy},
	}
	for i, s := range steps {
		resp, err := c.Call(hook, *ask(s.phase))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if resp.State != s.wantState || calls.Load() != s.wantCalls {
			t.Errorf("step %d (%s): state %s after %d calls, want %s after %d", i, s.phase, resp.State, calls.Load(), s.wantState, s.wantCalls)
		}
	}

	server.Close()
	if _, err := c.Call(hook, *ask(database.PhaseProvisioning)); err != nil {
		t.Errorf("a remembered answer needs no webhook: %v", err)
	}
	if _, err := c.Call(hook, *ask("Unknown")); err == nil {
		t.Error("a new question to a closed webhook did not fail")
	}
}

func httpCounting(n *atomic.Int32, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

func kindOf(group, version, kind string) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// TestSessionAsksAFailedWebhookOnce: within a reconcile's session, a webhook that timed out, or could not be
// reached, answers every later call of that operation at once with the same error; a timeout is remembered
// across sessions for the webhook's timeout, an unreachable webhook is asked again by the next session; calls
// end with the session's context.
func TestSessionAsksAFailedWebhookOnce(t *testing.T) {
	ask := func(name string, op workv1alpha1.InterpreterOperation) webhook.Request {
		return webhook.Request{Operation: op, Kind: kindOf(database.Group, "v1", database.Kind), Name: name,
			Object: []byte(`{"spec":{"replicas":1}}`)}
	}
	health, aggregate := workv1alpha1.OperationInterpretHealth, workv1alpha1.OperationAggregateStatus

	t.Run("timeout", func(t *testing.T) {
		cert := webhooktest.NewCertificate(t, "127.0.0.1")
		var calls atomic.Int32
		server := webhooktest.NewTLSServer(t, cert, httpCounting(&calls, http.HandlerFunc(hang)))
		hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To(server.URL), CABundle: cert.CA, TimeoutSeconds: ptr.To[int32](1),
			Operations: []workv1alpha1.InterpreterOperation{health, aggregate}}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		c := &Caller{Client: &Client{}, Now: func() time.Time { return now }}

		s := c.Session(context.Background())
		start := time.Now()
		var first error
		for i := range 20 {
			_, err := s.Call(hook, ask(fmt.Sprintf("db-%d", i), health))
			if ReasonOf(err) != ReasonTimeout {
				t.Fatalf("call %d: error %v, want %s", i, err, ReasonTimeout)
			}
			if first == nil {
				first = err
			} else if err.Error() != first.Error() {
				t.Errorf("call %d: error %q, want the first's %q", i, err, first)
			}
		}
		if elapsed := time.Since(start); calls.Load() != 1 || elapsed > 2*time.Second {
			t.Errorf("20 calls in a session asked the webhook %d times in %s, want once in about 1s", calls.Load(), elapsed.Round(time.Millisecond))
		}
		if _, err := s.Call(hook, ask("db-0", aggregate)); ReasonOf(err) != ReasonTimeout || calls.Load() != 2 {
			t.Errorf("another operation: error %v after %d calls, want %s after 2", err, calls.Load(), ReasonTimeout)
		}

		// The next reconcile, within the timeout: answered from memory; after it: asked again.
		now = now.Add(999 * time.Millisecond)
		if _, err := c.Session(context.Background()).Call(hook, ask("db-new", health)); err == nil || err.Error() != first.Error() || calls.Load() != 2 {
			t.Errorf("within the timeout: error %v after %d calls, want %q after 2", err, calls.Load(), first)
		}
		now = now.Add(time.Millisecond)
		if _, err := c.Session(context.Background()).Call(hook, ask("db-new", health)); ReasonOf(err) != ReasonTimeout || calls.Load() != 3 {
			t.Errorf("after the timeout: error %v after %d calls, want %s after 3", err, calls.Load(), ReasonTimeout)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		// A listener that closes every connection it accepts, counting them.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		var accepted atomic.Int32
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				_ = conn.Close()
			}
		}()
		hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To("https://" + l.Addr().String()), Operations: []workv1alpha1.InterpreterOperation{health}}
		c := &Caller{Client: &Client{}}
		for session := 1; session <= 2; session++ {
			s := c.Session(context.Background())
			for i := range 5 {
				if _, err := s.Call(hook, ask(fmt.Sprintf("db-%d", i), health)); ReasonOf(err) != ReasonUnreachable {
					t.Fatalf("session %d, call %d: error %v, want %s", session, i, err, ReasonUnreachable)
				}
			}
			if n := accepted.Load(); n != int32(session) {
				t.Errorf("after session %d: %d connections, want %d (one per session)", session, n, session)
			}
		}
	})

	t.Run("the session's context", func(t *testing.T) {
		cert := webhooktest.NewCertificate(t, "127.0.0.1")
		server := webhooktest.NewTLSServer(t, cert, http.HandlerFunc(hang))
		hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To(server.URL), CABundle: cert.CA, Operations: []workv1alpha1.InterpreterOperation{health}}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := (&Caller{Client: &Client{}}).Session(ctx).Call(hook, ask("db", health)); ReasonOf(err) != ReasonCanceled {
			t.Errorf("error %v, want %s", err, ReasonCanceled)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("the call outlived its session's context: %s", elapsed.Round(time.Millisecond))
		}
	})
}
