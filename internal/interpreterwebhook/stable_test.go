package interpreterwebhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// TestCallFailsAlikeTwice calls a webhook that fails twice in the same way and wants the same message both
// times: a failure's message ends up in a PlacementManifestWork's status, and one that differed call after call
// (a request's uid, a connection's local port, an HTTP/2 stream's number, the second a certificate was
// checked) would cost a status write on every reconcile of a PMW whose webhook keeps failing. The message must
// still say which webhook, which operation and what kind of failure. The servers are real sockets.
func TestCallFailsAlikeTwice(t *testing.T) {
	// uuid is how a request's uid (made by the client, new every call) looks.
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	now := time.Now()
	other := webhooktest.NewCertificate(t, "127.0.0.1")
	cases := map[string]struct {
		// serve is the webhook, served over TLS for 127.0.0.1 unless listen is set.
		serve http.HandlerFunc
		// http2 serves HTTP/2, as a Go webhook does by default; HTTP/1.1 otherwise.
		http2 bool
		// cert is the serving certificate when not a valid one for 127.0.0.1.
		cert func(t *testing.T) webhooktest.Certificate
		// listen serves something else than an HTTPS server: the address it listens at.
		listen func(t *testing.T) string
		edit   func(*workv1alpha1.InterpreterWebhook)
		op     workv1alpha1.InterpreterOperation
		// waitASecond makes the second call in another second than the first, for messages that would tell the
		// time to the second.
		waitASecond bool

		wantReason ErrorReason
		wantErr    string
	}{
		"timeout": {
			serve:      hang,
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.TimeoutSeconds = ptr.To[int32](1) },
			wantReason: ReasonTimeout,
			wantErr:    "timed out after 1s",
		},
		"connection refused": {
			listen:     refused,
			wantReason: ReasonUnreachable,
			wantErr:    "unreachable: dial tcp 127.0.0.1:",
		},
		"connection reset during the TLS handshake": {
			listen:     resettingListener,
			wantReason: ReasonUnreachable,
			wantErr:    "unreachable: read tcp 127.0.0.1:",
		},
		"connection reset before the answer": {
			serve:      resetting(false),
			wantReason: ReasonUnreachable,
			wantErr:    "read: connection reset by peer",
		},
		"connection reset in the middle of the answer": {
			serve:      resetting(true),
			wantReason: ReasonUnreachable,
			wantErr:    "reading the answer: read tcp 127.0.0.1:",
		},
		"HTTP/2 stream reset before the answer": {
			serve:      aborting(false),
			http2:      true,
			wantReason: ReasonUnreachable,
			wantErr:    "unreachable: stream error: INTERNAL_ERROR; received from peer",
		},
		"HTTP/2 stream reset in the middle of the answer": {
			serve:      aborting(true),
			http2:      true,
			wantReason: ReasonUnreachable,
			wantErr:    "reading the answer: stream error: INTERNAL_ERROR; received from peer",
		},
		"plain HTTP": {
			listen:     plainHTTP,
			wantReason: ReasonUnreachable,
			wantErr:    "unreachable: http: server gave HTTP response to HTTPS client",
		},
		"TLS, unknown authority": {
			serve:      writing(http.StatusOK, "{}"),
			edit:       func(h *workv1alpha1.InterpreterWebhook) { h.CABundle = other.CA },
			wantReason: ReasonTLS,
			wantErr:    "failed TLS verification: tls: failed to verify certificate: x509: certificate signed by unknown authority",
		},
		"TLS, certificate for another host": {
			serve:      writing(http.StatusOK, "{}"),
			cert:       func(t *testing.T) webhooktest.Certificate { return webhooktest.NewCertificate(t, "127.0.0.2") },
			wantReason: ReasonTLS,
			wantErr:    "x509: certificate is valid for 127.0.0.2, not 127.0.0.1",
		},
		"TLS, expired certificate": {
			serve: writing(http.StatusOK, "{}"),
			cert: func(t *testing.T) webhooktest.Certificate {
				return webhooktest.NewCertificateValid(t, now.Add(-2*time.Hour), now.Add(-time.Hour), "127.0.0.1")
			},
			waitASecond: true,
			wantReason:  ReasonTLS,
			wantErr:     "x509: certificate has expired or is not yet valid: not valid after " + now.Add(-time.Hour).UTC().Format(time.RFC3339),
		},
		"HTTP error": {
			serve:      writing(http.StatusServiceUnavailable, "database store down"),
			wantReason: ReasonHTTPError,
			wantErr:    `answered HTTP 503: "database store down"`,
		},
		"HTTP error quoting the request's uid": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, fmt.Sprintf("review %s: database store down", uidOf(r)), http.StatusInternalServerError)
			},
			wantReason: ReasonHTTPError,
			wantErr:    `answered HTTP 500: "review <request uid>: database store down"`,
		},
		"HTTP error from a proxy quoting its connection": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, fmt.Sprintf("upstream: read tcp 10.1.0.7:%d->10.0.0.9:8443: connection reset by peer", 30000+time.Now().Nanosecond()%30000),
					http.StatusBadGateway)
			},
			wantReason: ReasonHTTPError,
			wantErr:    `answered HTTP 502: "upstream: read tcp 10.0.0.9:8443: connection reset by peer"`,
		},
		"invalid JSON": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				_, _ = fmt.Fprintf(w, `{"apiVersion":%q,"kind":%q,"response":{"uid":%q,"successful":tru`, webhook.APIVersion, webhook.Kind, uidOf(r))
			},
			wantReason: ReasonGarbage,
			wantErr:    `answered garbage: invalid character ' ' in literal true (expecting 'e'): "{\"apiVersion\"`,
		},
		"another kind of review": {
			serve: func(w http.ResponseWriter, r *http.Request) {
				_, _ = fmt.Fprintf(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`, uidOf(r))
			},
			wantReason: ReasonGarbage,
			wantErr:    `answered garbage: apiVersion "admission.k8s.io/v1" kind "AdmissionReview"`,
		},
		"uid of another request": {
			serve:      reviewWithUID(func(n int32, _ string) string { return fmt.Sprintf("other-%d", n) }),
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: response uid is not the request's",
		},
		"no uid": {
			serve:      reviewWithUID(func(int32, string) string { return "" }),
			wantReason: ReasonGarbage,
			wantErr:    "answered garbage: response has no uid, want the request's",
		},
		"an answer for another operation": {
			serve: answering(func(webhook.Request) webhook.Response {
				return webhook.Response{Successful: true, Healthy: ptr.To(true)}
			}),
			op:         workv1alpha1.OperationReviseReplica,
			wantReason: ReasonGarbage,
			wantErr:    "(ReviseReplica) answered garbage: no patch",
		},
		"unsuccessful, quoting the request's uid": {
			serve: answering(func(r webhook.Request) webhook.Response {
				return webhook.Fail("cannot judge %s: database store down", r.UID)
			}),
			wantReason: ReasonRejected,
			wantErr:    "answered unsuccessful: cannot judge <request uid>: database store down",
		},
		"oversized answer": {
			serve:      writing(http.StatusOK, strings.Repeat(" ", DefaultMaxResponseBytes+1)),
			wantReason: ReasonGarbage,
			wantErr:    "answered more than 1048576 bytes",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cert := webhooktest.NewCertificate(t, "127.0.0.1")
			if tc.cert != nil {
				cert = tc.cert(t)
			}
			var address string
			if tc.listen != nil {
				address = tc.listen(t)
			} else {
				address = serveTLS(t, cert, tc.serve, tc.http2)
			}
			hook := &workv1alpha1.InterpreterWebhook{URL: ptr.To("https://" + address + "/interpret"), CABundle: cert.CA, Operations: allOperations}
			if tc.edit != nil {
				tc.edit(hook)
			}
			op := tc.op
			if op == "" {
				op = workv1alpha1.OperationInterpretHealth
			}
			// One client, as the manager has: the second call may reuse the first one's connection.
			c := &Client{}
			call := func() error {
				req := request()
				req.UID = "" // the client makes one, new every call
				req.Operation = op
				if op == workv1alpha1.OperationReviseReplica {
					req.DesiredReplicas = ptr.To[int32](2)
				}
				_, err := c.Call(context.Background(), hook, req)
				if err == nil {
					t.Fatal("the call succeeded")
				}
				return err
			}
			first := call()
			if tc.waitASecond {
				time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
			}
			second := call()

			if first.Error() != second.Error() {
				t.Errorf("the same failure, two messages:\n%s\n%s", first, second)
			}
			if r := ReasonOf(second); r != tc.wantReason {
				t.Errorf("reason %s, want %s (%v)", r, tc.wantReason, second)
			}
			prefix := fmt.Sprintf("interpreter webhook %s (%s) ", *hook.URL, op)
			if !strings.HasPrefix(second.Error(), prefix) {
				t.Errorf("error %q does not start with the webhook and the operation, %q", second, prefix)
			}
			if !strings.Contains(second.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to say %q", second, tc.wantErr)
			}
			if uuid.MatchString(second.Error()) {
				t.Errorf("error %q quotes a request's uid", second)
			}
		})
	}
}

// serveTLS serves the handler over TLS at 127.0.0.1, with HTTP/2 or HTTP/1.1 only, until the test ends; it
// returns the address.
func serveTLS(t *testing.T, cert webhooktest.Certificate, handler http.HandlerFunc, http2 bool) string {
	t.Helper()
	pair, err := tls.X509KeyPair(cert.Cert, cert.Key)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(handler)
	server.EnableHTTP2 = http2
	server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // the resets and the TLS failures are meant
	server.StartTLS()
	t.Cleanup(server.Close)
	return server.Listener.Addr().String()
}

// refused is an address nothing listens at.
func refused(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := l.Addr().String()
	_ = l.Close()
	return address
}

// resettingListener resets every connection once its first bytes (the TLS client hello) arrive.
func resettingListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Read(make([]byte, 16))
			reset(conn)
		}
	}()
	return l.Addr().String()
}

// plainHTTP is the address of a server that speaks HTTP without TLS.
func plainHTTP(t *testing.T) string {
	server := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(server.Close)
	return server.Listener.Addr().String()
}

// reset closes the TCP connection with a reset (RST) rather than an orderly close.
func reset(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// resetting resets the connection (below TLS) before the answer, or after its headers and a few bytes.
// HTTP/1.1 only: an HTTP/2 connection cannot be hijacked.
func resetting(midAnswer bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if midAnswer {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"apiVersion":`))
			w.(http.Flusher).Flush()
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		reset(conn)
	}
}

// aborting aborts the answer (an HTTP/2 RST_STREAM) before it starts, or after its headers and a few bytes.
func aborting(midAnswer bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if midAnswer {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"apiVersion":`))
			w.(http.Flusher).Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// reviewWithUID answers healthy with the uid uid(n, the request's uid) for the n-th request.
func reviewWithUID(uid func(n int32, requested string) string) http.HandlerFunc {
	var calls atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `{"apiVersion":%q,"kind":%q,"response":{"uid":%q,"successful":true,"healthy":true}}`,
			webhook.APIVersion, webhook.Kind, uid(calls.Add(1), uidOf(r)))
	}
}

// uidOf reads the request's uid.
func uidOf(r *http.Request) string {
	var review webhook.Review
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		return ""
	}
	return review.Request.UID
}

// TestStable covers what the servers above do not make: IPv6, a DNS query's connection, a GOAWAY, a
// certificate not yet valid.
func TestStable(t *testing.T) {
	const uid = "f642a50a-763a-4271-a18e-3c81f7bcb192"
	cases := map[string]string{
		"read tcp 10.1.0.7:54321->10.0.0.1:443: read: connection reset by peer":                                               "read tcp 10.0.0.1:443: read: connection reset by peer",
		"write tcp6 [fe80::1%eth0]:54321->[fd00::9]:443: write: broken pipe":                                                  "write tcp6 [fd00::9]:443: write: broken pipe",
		"dial tcp 10.0.0.1:443: connect: connection refused":                                                                  "dial tcp 10.0.0.1:443: connect: connection refused",
		"dial tcp: lookup db.webhooks.svc on 10.96.0.10:53: read udp 10.1.0.7:40121->10.96.0.10:53: i/o timeout":              "dial tcp: lookup db.webhooks.svc on 10.96.0.10:53: read udp 10.96.0.10:53: i/o timeout",
		"stream error: stream ID 7; REFUSED_STREAM":                                                                           "stream error: REFUSED_STREAM",
		`http2: server sent GOAWAY and closed the connection; LastStreamID=9, ErrCode=NO_ERROR, debug=""`:                     `http2: server sent GOAWAY and closed the connection; ErrCode=NO_ERROR, debug=""`,
		"x509: certificate has expired or is not yet valid: current time 2026-11-25T10:45:16Z is before 2026-12-01T00:00:00Z": "x509: certificate has expired or is not yet valid: not valid before 2026-12-01T00:00:00Z",
		"answered unsuccessful: request " + uid + " failed":                                                                   "answered unsuccessful: request <request uid> failed",
	}
	for message, want := range cases {
		if got := stable(message, uid); got != want {
			t.Errorf("stable(%q) = %q, want %q", message, got, want)
		}
		if got := stable(want, uid); got != want {
			t.Errorf("stable(%q) = %q, want it unchanged", want, got)
		}
	}
}
