// Package interpreterwebhook calls ResourceInterpreter webhooks over HTTPS: it builds the endpoint's URL,
// trusts the webhook's caBundle, bounds each call by its timeoutSeconds and the answer's size, checks the
// answer against the question (pkg/interpreter/webhook) and says what went wrong in typed errors that
// ApplyFailurePolicy turns into Fail or Ignore.
//
// It is in internal/ because it does I/O (the network, a context per call), which pkg/ never does; the wire
// format and the pure checks it applies are in pkg/interpreter/webhook, where webhook authors can import them.
package interpreterwebhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

const (
	// DefaultTimeout bounds a call when the webhook sets no timeoutSeconds.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxResponseBytes bounds an answer.
	DefaultMaxResponseBytes = 1 << 20
	// maxErrorBody is how much of a non-2xx answer an error quotes.
	maxErrorBody = 256
)

// ServiceResolver says where to dial a Service's port: host:port. The URL and the TLS server name stay
// <name>.<namespace>.svc, so the serving certificate is checked as in the cluster; a manager running outside
// the cluster (or a test) resolves to a port-forward or a local listener.
type ServiceResolver func(namespace, name string, port int32) (hostPort string, err error)

// Client calls webhooks. The zero value is ready: it dials Services by their cluster DNS name. A Client is
// safe for concurrent use; it keeps one transport per caBundle so connections are reused.
type Client struct {
	// ResolveService, when set, says where to dial <name>.<namespace>.svc.
	ResolveService ServiceResolver
	// MaxResponseBytes bounds an answer; DefaultMaxResponseBytes when 0.
	MaxResponseBytes int64

	mu         sync.Mutex
	transports map[[sha256.Size]byte]*http.Client
}

// Call asks the webhook the request and returns its answer, checked against the request. The request's uid is
// made when empty. Its errors are *Error.
func (c *Client) Call(ctx context.Context, hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error) {
	if hook == nil {
		return nil, &Error{Reason: ReasonMisconfigured, Detail: "no webhook"}
	}
	if req.UID == "" {
		req.UID = string(uuid.NewUUID())
	}
	endpoint, err := Endpoint(hook)
	if err != nil {
		return nil, &Error{Reason: ReasonMisconfigured, Detail: err.Error()}
	}
	// A failure's message is the same for the same failure, call after call: it ends up in the
	// PlacementManifestWork's status, which a message that changes with every call would rewrite every reconcile.
	fail := func(reason ErrorReason, format string, args ...any) error {
		return &Error{URL: endpoint, Operation: req.Operation, Reason: reason, Detail: stable(fmt.Sprintf(format, args...), req.UID)}
	}
	if !webhook.Serves(hook, req.Operation) {
		return nil, fail(ReasonMisconfigured, "does not list operation %s", req.Operation)
	}
	httpClient, err := c.httpClient(hook.CABundle)
	if err != nil {
		return nil, fail(ReasonMisconfigured, "%v", err)
	}
	body, err := json.Marshal(webhook.NewReview(req))
	if err != nil {
		return nil, fail(ReasonMisconfigured, "encoding the request: %v", err)
	}

	timeout := Timeout(hook)
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(callCtx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fail(ReasonMisconfigured, "%v", err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")

	timedOut := func() bool { return errors.Is(context.Cause(callCtx), errTimeout) }
	httpResp, err := httpClient.Do(httpReq)
	if err != nil {
		switch {
		case timedOut():
			return nil, fail(ReasonTimeout, "timed out after %s", timeout)
		case ctx.Err() != nil:
			return nil, fail(ReasonCanceled, "%v", ctx.Err())
		case isTLSError(err):
			return nil, fail(ReasonTLS, "failed TLS verification: %v", unwrapURLError(err))
		default:
			return nil, fail(ReasonUnreachable, "unreachable: %v", unwrapURLError(err))
		}
	}
	defer func() { _ = httpResp.Body.Close() }()

	limit := c.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	answer, err := io.ReadAll(io.LimitReader(httpResp.Body, limit+1))
	if err != nil {
		if timedOut() {
			return nil, fail(ReasonTimeout, "timed out after %s", timeout)
		}
		return nil, fail(ReasonUnreachable, "reading the answer: %v", err)
	}
	if httpResp.StatusCode < 200 || httpResp.StatusCode > 299 {
		return nil, fail(ReasonHTTPError, "answered HTTP %d: %s", httpResp.StatusCode, quote(answer, req.UID))
	}
	if int64(len(answer)) > limit {
		return nil, fail(ReasonGarbage, "answered more than %d bytes", limit)
	}
	var review webhook.Review
	if err := json.Unmarshal(answer, &review); err != nil {
		return nil, fail(ReasonGarbage, "answered garbage: %v: %s", err, quote(answer, req.UID))
	}
	if review.APIVersion != webhook.APIVersion || review.Kind != webhook.Kind {
		return nil, fail(ReasonGarbage, "answered garbage: apiVersion %q kind %q, want %s %s",
			review.APIVersion, review.Kind, webhook.APIVersion, webhook.Kind)
	}
	if review.Response != nil && review.Response.UID == req.UID && !review.Response.Successful {
		return nil, fail(ReasonRejected, "answered unsuccessful: %s", review.Response.Message)
	}
	if err := webhook.Check(req, review.Response); err != nil {
		return nil, fail(ReasonGarbage, "answered garbage: %v", err)
	}
	return review.Response, nil
}

// Timeout is how long a call to the webhook may take: its timeoutSeconds, DefaultTimeout when unset.
func Timeout(hook *workv1alpha1.InterpreterWebhook) time.Duration {
	if hook != nil && hook.TimeoutSeconds != nil && *hook.TimeoutSeconds > 0 {
		return time.Duration(*hook.TimeoutSeconds) * time.Second
	}
	return DefaultTimeout
}

// Health asks for the health of one manifest on one cluster.
func (c *Client) Health(ctx context.Context, hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (health.Verdict, error) {
	req.Operation = workv1alpha1.OperationInterpretHealth
	resp, err := c.Call(ctx, hook, req)
	if err != nil {
		return health.Verdict{}, err
	}
	return resp.Verdict() // Call checked it
}

// Dependencies asks for the hub objects a manifest needs.
func (c *Client) Dependencies(ctx context.Context, hook *workv1alpha1.InterpreterWebhook, req webhook.Request) ([]webhook.Dependency, error) {
	req.Operation = workv1alpha1.OperationInterpretDependency
	resp, err := c.Call(ctx, hook, req)
	if err != nil {
		return nil, err
	}
	return resp.Dependencies, nil
}

// ReviseReplica asks for the patch that sets req.Object's replicas to desired and returns the patched object.
func (c *Client) ReviseReplica(ctx context.Context, hook *workv1alpha1.InterpreterWebhook, req webhook.Request, desired int32) (json.RawMessage, error) {
	req.Operation = workv1alpha1.OperationReviseReplica
	req.DesiredReplicas = &desired
	resp, err := c.Call(ctx, hook, req)
	if err != nil {
		return nil, err
	}
	revised, err := webhook.ApplyPatch(req.Object, resp)
	if err != nil {
		endpoint, _ := Endpoint(hook)
		return nil, &Error{URL: endpoint, Operation: req.Operation, Reason: ReasonGarbage, Detail: "answered garbage: " + err.Error()}
	}
	return revised, nil
}

// AggregateStatus asks for the roll-up of the clusters' reported status.
func (c *Client) AggregateStatus(ctx context.Context, hook *workv1alpha1.InterpreterWebhook, req webhook.Request) ([]workv1alpha1.AggregatedField, error) {
	req.Operation = workv1alpha1.OperationAggregateStatus
	resp, err := c.Call(ctx, hook, req)
	if err != nil {
		return nil, err
	}
	return resp.Status, nil
}

// Endpoint is the URL a webhook is called at: its url, or https://<name>.<namespace>.svc:<port><path> for a
// Service (port 443 and path / when unset).
func Endpoint(hook *workv1alpha1.InterpreterWebhook) (string, error) {
	switch {
	case hook.URL != nil && hook.Service != nil:
		return "", fmt.Errorf("both url and service are set")
	case hook.URL != nil:
		u, err := url.Parse(*hook.URL)
		if err != nil {
			return "", fmt.Errorf("url: %w", err)
		}
		if u.Scheme != "https" || u.Host == "" {
			return "", fmt.Errorf("url %q is not https://<host>[:port]/<path>", *hook.URL)
		}
		return u.String(), nil
	case hook.Service != nil:
		s := hook.Service
		port := int32(443)
		if s.Port != nil {
			port = *s.Port
		}
		path := "/"
		if s.Path != nil && *s.Path != "" {
			path = *s.Path
			if !strings.HasPrefix(path, "/") {
				path = "/" + path
			}
		}
		u := url.URL{Scheme: "https", Host: net.JoinHostPort(s.Name+"."+s.Namespace+".svc", strconv.Itoa(int(port))), Path: path}
		return u.String(), nil
	default:
		return "", fmt.Errorf("neither url nor service is set")
	}
}

// httpClient is the client for one caBundle: system roots when empty. Redirects are not followed.
func (c *Client) httpClient(caBundle []byte) (*http.Client, error) {
	key := sha256.Sum256(caBundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.transports[key]; ok {
		return hc, nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, fmt.Errorf("caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: DefaultTimeout,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, c.resolve(addr))
		},
	}
	hc := &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if c.transports == nil {
		c.transports = map[[sha256.Size]byte]*http.Client{}
	}
	c.transports[key] = hc
	return hc, nil
}

// resolve maps <name>.<namespace>.svc:<port> through ResolveService; any other address is dialed as it is.
func (c *Client) resolve(addr string) string {
	if c.ResolveService == nil {
		return addr
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	parts := strings.Split(host, ".")
	if len(parts) != 3 || parts[2] != "svc" {
		return addr
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		return addr
	}
	resolved, err := c.ResolveService(parts[1], parts[0], int32(port))
	if err != nil || resolved == "" {
		return addr
	}
	return resolved
}

func isTLSError(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record)
}

// unwrapURLError drops url.Error's "Post \"https://...\":" prefix; Error already names the URL.
func unwrapURLError(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

// quote is the start of an answer, for an error message: stable (before it is cut, so that no part of a uid or
// an address is left at the cut).
func quote(body []byte, uid string) string {
	s := strings.TrimSpace(stable(string(body), uid))
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody] + "…"
	}
	return strconv.Quote(s)
}

// What a message drops of what differs from one call to the next although the failure is the same. A
// message keeps what says which failure it is: the webhook's URL and operation (Error), the kind of failure,
// the HTTP status, the address dialed, the error of the system or the peer.
var (
	// localAddress is the local end of a connection that a net error names before the remote one, "read tcp
	// 10.1.0.7:54321->10.0.0.1:443: read: connection reset by peer": its port is the ephemeral one of this call.
	// Also for a DNS query's ("lookup x on 10.96.0.10:53: read udp 10.1.0.7:40121->10.96.0.10:53: i/o timeout").
	localAddress = regexp.MustCompile(`\b((?:tcp|udp)[46]?) [^\s>]+->`)
	// streamID is the number of an HTTP/2 stream in "stream error: stream ID 3; INTERNAL_ERROR; received from
	// peer": every call over a connection is the next stream.
	streamID = regexp.MustCompile(`stream ID \d+; `)
	// lastStreamID is the last stream of a connection that the server closed (GOAWAY).
	lastStreamID = regexp.MustCompile(`LastStreamID=\d+, `)
	// checkedAt is when x509 found a certificate expired or not yet valid, to the second: "current time
	// 2026-11-25T10:45:16Z is after 2026-11-25T09:00:00Z" says "not valid after 2026-11-25T09:00:00Z".
	checkedAt = regexp.MustCompile(`current time \S+ is (after|before) `)
)

// uidPlaceholder stands for the request's uid, which is new on every call, where an answer quotes it.
const uidPlaceholder = "<request uid>"

// stable is a message without what differs call after call for the same failure: the request's uid (which
// the webhook's own message or answer may quote), a connection's local address, an HTTP/2 stream's number, the
// time a certificate was checked.
func stable(message, uid string) string {
	if uid != "" {
		message = strings.ReplaceAll(message, uid, uidPlaceholder)
	}
	message = localAddress.ReplaceAllString(message, "$1 ")
	message = streamID.ReplaceAllString(message, "")
	message = lastStreamID.ReplaceAllString(message, "")
	return checkedAt.ReplaceAllString(message, "not valid $1 ")
}
