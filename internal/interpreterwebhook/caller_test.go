package interpreterwebhook

import (
	"net/http"
	"sync/atomic"
	"testing"

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
