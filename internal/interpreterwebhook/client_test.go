package interpreterwebhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

var allOperations = []workv1alpha1.InterpreterOperation{
	workv1alpha1.OperationInterpretHealth, workv1alpha1.OperationInterpretDependency,
	workv1alpha1.OperationReviseReplica, workv1alpha1.OperationAggregateStatus,
}

const object = `{"apiVersion":"example.open-cluster-management.io/v1","kind":"Database","metadata":{"name":"orders","namespace":"shop"},"spec":{"replicas":5}}`

func request() webhook.Request {
	return webhook.Request{
		UID:       "3f1c",
		Kind:      metav1.GroupVersionKind{Group: "example.open-cluster-management.io", Version: "v1", Kind: "Database"},
		Name:      "orders",
		Namespace: "shop",
		Object:    json.RawMessage(object),
	}
}

// answering serves the protocol with answer.
func answering(answer func(webhook.Request) webhook.Response) http.HandlerFunc {
	return webhook.Handler(answer).ServeHTTP
}

// writing answers every request with body and status.
func writing(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = fmt.Fprint(w, body)
	}
}

func TestCall(t *testing.T) {
	other := webhooktest.NewCertificate(t, "127.0.0.1")
	cases := map[string]struct {
		serve http.HandlerFunc
		// edit changes the webhook that points at the server.
		edit func(*workv1alpha1.InterpreterWebhook)
		// maxBytes is the client's MaxResponseBytes.
		maxBytes int64
		do       func(context.Context, *Client, *workv1alpha1.InterpreterWebhook) (any, error)

		want       any
		wantReason ErrorReason
		wantErr    string
	}{
		"health": {
			serve: answering(func(r webhook.Request) webhook.Response {
				if r.Cluster != "east" || r.Status["phase"] != "Failed" {
					return webhook.Fail("unexpected request %+v", r)
				}
				return webhook.Response{Successful: true, State: webhook.StateDegraded, Reason: "DatabaseFailed", Message: "phase Failed"}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				req := request()
				req.Cluster = "east"
				req.Status = webhook.Status{"phase": "Failed"}
				return c.Health(ctx, hook, req)
			},
			want: health.Verdict{State: health.Degraded, Reason: "DatabaseFailed", Message: "phase Failed"},
		},
		"health, healthy only": {
			serve: answering(func(webhook.Request) webhook.Response {
				return webhook.Response{Successful: true, Healthy: ptr.To(true)}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				return c.Health(ctx, hook, request())
			},
			want: health.Verdict{State: health.Healthy},
		},
		"dependencies": {
			serve: answering(func(webhook.Request) webhook.Response {
				return webhook.Response{Successful: true, Dependencies: []webhook.Dependency{{Kind: "Secret", Name: "orders-credentials"}}}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				return c.Dependencies(ctx, hook, request())
			},
			want: []webhook.Dependency{{Kind: "Secret", Name: "orders-credentials"}},
		},
		"revise replica": {
			serve: answering(func(r webhook.Request) webhook.Response {
				patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/replicas","value":%d}]`, *r.DesiredReplicas)
				return webhook.Response{Successful: true, Patch: webhook.Patch(patch), PatchType: webhook.PatchTypeJSONPatch}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				revised, err := c.ReviseReplica(ctx, hook, request(), 2)
				return string(revised), err
			},
			want: strings.Replace(object, `"replicas":5`, `"replicas":2`, 1),
		},
		"revise replica, base64 patch": {
			serve: writing(http.StatusOK, `{"apiVersion":"interpreter.work.open-cluster-management.io/v1alpha1","kind":"InterpreterReview",
				"response":{"uid":"3f1c","successful":true,"patchType":"JSONPatch",
				"patch":"W3sib3AiOiJyZXBsYWNlIiwicGF0aCI6Ii9zcGVjL3JlcGxpY2FzIiwidmFsdWUiOjJ9XQ=="}}`),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				revised, err := c.ReviseReplica(ctx, hook, request(), 2)
				return string(revised), err
			},
			want: strings.Replace(object, `"replicas":5`, `"replicas":2`, 1),
		},
		"revise replica, a patch that renames the object": {
			serve: answering(func(webhook.Request) webhook.Response {
				return webhook.Response{Successful: true, PatchType: webhook.PatchTypeJSONPatch,
					Patch: webhook.Patch(`[{"op":"replace","path":"/metadata/name","value":"other"}]`)}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				return c.ReviseReplica(ctx, hook, request(), 2)
			},
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: patch changes the object's identity",
		},
		"aggregate status": {
			serve: answering(func(r webhook.Request) webhook.Response {
				var sum int64
				for _, c := range r.ClusterStatuses {
					n, _ := c.Status.Int("readyInstances")
					sum += n
				}
				return webhook.Response{Successful: true, Status: []workv1alpha1.AggregatedField{
					{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: &sum, Clusters: int32(len(r.ClusterStatuses))},
				}}
			}),
			do: func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
				req := request()
				req.ClusterStatuses = []webhook.ClusterStatus{
					{Cluster: "east", Status: webhook.Status{"readyInstances": int64(3)}},
					{Cluster: "west", Status: webhook.Status{"readyInstances": int64(2)}},
				}
				return c.AggregateStatus(ctx, hook, req)
			},
			want: []workv1alpha1.AggregatedField{
				{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: ptr.To[int64](5), Clusters: 2},
			},
		},
		"timeout": {
			serve:      hang,
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.TimeoutSeconds = ptr.To[int32](1) },
			wantReason: ReasonTimeout,
			wantErr:    "(InterpretHealth) timed out after 1s",
		},
		"HTTP error": {
			serve:      writing(http.StatusInternalServerError, "database exploded"),
			wantReason: ReasonHTTPError,
			wantErr:    `answered HTTP 500: "database exploded"`,
		},
		"redirect is not followed": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://example.com/", http.StatusFound)
			},
			wantReason: ReasonHTTPError,
			wantErr:    "answered HTTP 302",
		},
		"garbage body": {
			serve:      writing(http.StatusOK, "<html>hello</html>"),
			wantReason: ReasonGarbage,
			wantErr:    `answered garbage: invalid character '<' looking for beginning of value: "<html>hello</html>"`,
		},
		"wrong envelope": {
			serve:      writing(http.StatusOK, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"3f1c"}}`),
			wantReason: ReasonGarbage,
			wantErr:    `answered garbage: apiVersion "admission.k8s.io/v1" kind "AdmissionReview"`,
		},
		"no response": {
			serve:      writing(http.StatusOK, `{"apiVersion":"interpreter.work.open-cluster-management.io/v1alpha1","kind":"InterpreterReview"}`),
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: no response in the review",
		},
		"uid mismatch": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				webhook.Handler(func(webhook.Request) webhook.Response {
					return webhook.Response{Successful: true, Healthy: ptr.To(true)}
				}).ServeHTTP(&uidRewriter{ResponseWriter: w}, r)
			},
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: response uid is not the request's",
		},
		"unsuccessful": {
			serve:      answering(func(webhook.Request) webhook.Response { return webhook.Fail("no such database") }),
			wantReason: ReasonRejected,
			wantErr:    "answered unsuccessful: no such database",
		},
		"health without an answer": {
			serve:      answering(func(webhook.Request) webhook.Response { return webhook.Response{Successful: true} }),
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: neither healthy nor state",
		},
		"wrong caBundle": {
			serve:      writing(http.StatusOK, "{}"),
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.CABundle = other.CA },
			wantReason: ReasonTLS,
			wantErr:    "failed TLS verification: tls: failed to verify certificate: x509: certificate signed by unknown authority",
		},
		"no caBundle: the system roots do not know a test authority": {
			serve:      writing(http.StatusOK, "{}"),
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.CABundle = nil },
			wantReason: ReasonTLS,
			wantErr:    "failed TLS verification",
		},
		"caBundle without a certificate": {
			serve:      writing(http.StatusOK, "{}"),
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.CABundle = []byte("not PEM") },
			wantReason: ReasonMisconfigured,
			wantErr:    "caBundle holds no PEM certificate",
		},
		"oversized body": {
			serve:      writing(http.StatusOK, strings.Repeat(" ", 2048)),
			maxBytes:   1024,
			wantReason: ReasonGarbage,
			wantErr:    "answered more than 1024 bytes",
		},
		"operation not listed": {
			serve: writing(http.StatusOK, "{}"),
			edit: func(h *workv1alpha1.InterpreterWebhook) {
				h.Operations = []workv1alpha1.InterpreterOperation{workv1alpha1.OperationAggregateStatus}
			},
			wantReason: ReasonMisconfigured,
			wantErr:    "does not list operation InterpretHealth",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cert := webhooktest.NewCertificate(t, "127.0.0.1")
			server := webhooktest.NewTLSServer(t, cert, tc.serve)
			hook := &workv1alpha1.InterpreterWebhook{
				URL:        ptr.To(server.URL + "/interpret"),
				CABundle:   cert.CA,
				Operations: allOperations,
			}
			if tc.edit != nil {
				tc.edit(hook)
			}
			do := tc.do
			if do == nil {
				do = func(ctx context.Context, c *Client, hook *workv1alpha1.InterpreterWebhook) (any, error) {
					return c.Health(ctx, hook, request())
				}
			}
			c := &Client{MaxResponseBytes: tc.maxBytes}
			got, err := do(context.Background(), c, hook)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, got %v; want %q", got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
				}
				if r := ReasonOf(err); r != tc.wantReason {
					t.Errorf("reason %s, want %s", r, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// hang answers nothing until the client goes away, or 5 seconds. It reads the request first: the server notices
// a closed connection only once the body is read.
func hang(_ http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// uidRewriter changes the uid of the answer the handler writes.
type uidRewriter struct{ http.ResponseWriter }

func (u *uidRewriter) Write(b []byte) (int, error) {
	return u.ResponseWriter.Write([]byte(strings.Replace(string(b), `"uid":"3f1c"`, `"uid":"someone-else"`, 1)))
}

func TestCallService(t *testing.T) {
	cert := webhooktest.NewCertificate(t, "db-interpreter.webhooks.svc")
	var gotPath string
	server := webhooktest.NewTLSServer(t, cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		answering(func(webhook.Request) webhook.Response {
			return webhook.Response{Successful: true, State: webhook.StateCompleted}
		})(w, r)
	}))
	hook := &workv1alpha1.InterpreterWebhook{
		Service:    &workv1alpha1.WebhookService{Namespace: "webhooks", Name: "db-interpreter", Path: ptr.To("/databases"), Port: ptr.To[int32](8443)},
		CABundle:   cert.CA,
		Operations: allOperations,
	}
	var resolved string
	c := &Client{ResolveService: func(namespace, name string, port int32) (string, error) {
		resolved = fmt.Sprintf("%s/%s:%d", namespace, name, port)
		return server.Listener.Addr().String(), nil
	}}
	got, err := c.Health(context.Background(), hook, request())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(health.Verdict{State: health.Healthy, Finished: true}, got); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
	if resolved != "webhooks/db-interpreter:8443" || gotPath != "/databases" {
		t.Errorf("resolved %q path %q, want webhooks/db-interpreter:8443 /databases", resolved, gotPath)
	}
}

func TestCallCanceled(t *testing.T) {
	server := httptest.NewTLSServer(http.HandlerFunc(hang))
	defer server.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To(server.URL), CABundle: ca, Operations: allOperations,
		FailurePolicy: workv1alpha1.FailurePolicyIgnore}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := (&Client{}).Call(ctx, hook, webhook.Request{Operation: workv1alpha1.OperationInterpretHealth})
	if ReasonOf(err) != ReasonCanceled {
		t.Fatalf("error %v, want %s", err, ReasonCanceled)
	}
	if d := ApplyFailurePolicy(err, hook); d != Fail {
		t.Errorf("decision %s for a canceled call, want Fail", d)
	}
}

func TestEndpoint(t *testing.T) {
	cases := map[string]struct {
		hook    workv1alpha1.InterpreterWebhook
		want    string
		wantErr string
	}{
		"url":                  {hook: workv1alpha1.InterpreterWebhook{URL: ptr.To("https://db.example.com/interpret")}, want: "https://db.example.com/interpret"},
		"service, defaults":    {hook: workv1alpha1.InterpreterWebhook{Service: &workv1alpha1.WebhookService{Namespace: "ns", Name: "svc"}}, want: "https://svc.ns.svc:443/"},
		"service, all set":     {hook: workv1alpha1.InterpreterWebhook{Service: &workv1alpha1.WebhookService{Namespace: "ns", Name: "svc", Port: ptr.To[int32](8443), Path: ptr.To("db")}}, want: "https://svc.ns.svc:8443/db"},
		"http url":             {hook: workv1alpha1.InterpreterWebhook{URL: ptr.To("http://db.example.com/")}, wantErr: "is not https://"},
		"neither":              {wantErr: "neither url nor service"},
		"both url and service": {hook: workv1alpha1.InterpreterWebhook{URL: ptr.To("https://a/"), Service: &workv1alpha1.WebhookService{Namespace: "ns", Name: "svc"}}, wantErr: "both"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Endpoint(&tc.hook)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Endpoint = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestApplyFailurePolicy(t *testing.T) {
	timeout := &Error{Reason: ReasonTimeout}
	cases := map[string]struct {
		err    error
		policy workv1alpha1.FailurePolicy
		want   Decision
	}{
		"no error":                     {want: Use},
		"no error, Ignore":             {policy: workv1alpha1.FailurePolicyIgnore, want: Use},
		"error, default policy":        {err: timeout, want: Fail},
		"error, Fail":                  {err: timeout, policy: workv1alpha1.FailurePolicyFail, want: Fail},
		"error, Ignore":                {err: timeout, policy: workv1alpha1.FailurePolicyIgnore, want: Ignore},
		"wrapped error, Ignore":        {err: fmt.Errorf("health: %w", timeout), policy: workv1alpha1.FailurePolicyIgnore, want: Ignore},
		"canceled, Ignore is not used": {err: &Error{Reason: ReasonCanceled}, policy: workv1alpha1.FailurePolicyIgnore, want: Fail},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hook := &workv1alpha1.InterpreterWebhook{FailurePolicy: tc.policy}
			if got := ApplyFailurePolicy(tc.err, hook); got != tc.want {
				t.Errorf("ApplyFailurePolicy = %s, want %s", got, tc.want)
			}
		})
	}
}
