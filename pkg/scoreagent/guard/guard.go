// Package guard keeps the score agent from being a way into the networks its cluster can reach: the agent
// fetches URLs that an API object names, so without a guard whoever may write an
// AddOnPlacementScoreGenerator could make it call the cloud metadata service, the API server or anything on
// the cluster's private network (server-side request forgery).
//
// The policy: http and https only; URLs without credentials; public addresses only, on ports 80 and 443,
// unless an allowlist (the agent's --allow flag) names the range or the host, which may then be reached on
// any port. It is enforced where the connection is made (Guard.DialContext resolves the name, checks every
// address, and dials the checked address itself), so a name that resolves to a public address when the URL
// is validated and to a private one when it is fetched (DNS rebinding) is still refused, and every redirect
// is checked again. Check gives the same verdict early, without DNS, for a validation message.
package guard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The agent's flags that configure the guard, as refusals name them.
const (
	FlagAllow      = "allow"
	FlagAllowPorts = "allow-ports"
)

// DefaultPorts are the ports the agent may reach on public addresses without --allow-ports.
var DefaultPorts = []uint16{80, 443}

// MaxRedirects is how many redirects a request follows; each target is checked as the first URL was.
const MaxRedirects = 3

// MaxResponseHeaderBytes bounds what the agent reads of a response's headers.
const MaxResponseHeaderBytes = 64 << 10

// DefaultDialTimeout bounds one connection attempt when the caller's context does not end sooner.
const DefaultDialTimeout = 30 * time.Second

// Resolver looks names up; *net.Resolver is one, tests use a map.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is the guard's policy.
type Config struct {
	// Allow is what may be reached beyond public addresses, on any port.
	Allow Allowlist
	// Ports are the ports public addresses may be reached on; empty means DefaultPorts.
	Ports []uint16
	// Resolver looks names up at dial time; nil means net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds one connection attempt; zero means DefaultDialTimeout.
	DialTimeout time.Duration
}

// Guard checks URLs and makes connections that keep to its policy.
type Guard struct {
	allow       Allowlist
	ports       []uint16
	resolver    Resolver
	dialTimeout time.Duration
}

// New returns a guard with cfg's policy.
func New(cfg Config) *Guard {
	g := &Guard{allow: cfg.Allow, ports: slices.Clone(cfg.Ports), resolver: cfg.Resolver, dialTimeout: cfg.DialTimeout}
	if len(g.ports) == 0 {
		g.ports = slices.Clone(DefaultPorts)
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dialTimeout <= 0 {
		g.dialTimeout = DefaultDialTimeout
	}
	return g
}

// RefusedError is a URL or connection the policy refuses. Its message says what was refused and, when a
// flag would allow it, which.
type RefusedError struct {
	// Reason is what is refused: "169.254.169.254 is a link-local (cloud metadata) address".
	Reason string
	// Hint is how the agent's owner would allow it, or "".
	Hint string
}

func (e *RefusedError) Error() string {
	if e.Hint == "" {
		return "refused: " + e.Reason
	}
	return "refused: " + e.Reason + "; " + e.Hint
}

func refused(hint, format string, args ...any) *RefusedError {
	return &RefusedError{Reason: fmt.Sprintf(format, args...), Hint: hint}
}

// Check parses and checks a URL as CheckURL does.
func (g *Guard) Check(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return refused("", "%q is not a URL", rawURL)
	}
	return g.CheckURL(u)
}

// CheckURL checks what can be known of a URL without DNS: the scheme, credentials, the port, an address
// written in the URL, and the name localhost. Names are checked again, with what they resolve to, when
// connecting.
func (g *Guard) CheckURL(u *url.URL) error {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return refused("", "scheme %q is not http or https", u.Scheme)
	}
	if u.User != nil {
		// Go's client would send them as basic authentication; the agent sends no credentials.
		return refused("", "the URL carries credentials (user info before @); the agent sends none")
	}
	host := u.Hostname()
	if host == "" {
		return refused("", "the URL %q has no host", u.Redacted())
	}
	port := uint16(80)
	if scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return refused("", "port %q is not a port (1-65535)", p)
		}
		port = uint16(n)
	}
	if isIPLiteral(host) {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return refused("", "host %q looks like an address but is not one written the standard way", host)
		}
		return g.checkAddr(ip, "", port)
	}
	host = normalizeHost(host)
	if err := validHostname(host); err != nil {
		return refused("", "host %q is not a host name", host)
	}
	if g.allow.AllowsHost(host) {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return refused(allowHint(host, netip.Addr{}), "%s names a loopback address", host)
	}
	return g.checkPort(host, port)
}

// checkAddr checks one address the agent would connect to; name is the host name it was resolved from, or
// "" for an address written as such.
func (g *Guard) checkAddr(ip netip.Addr, name string, port uint16) error {
	ip = ip.WithZone("")
	if g.allow.AllowsAddr(ip) {
		return nil
	}
	if class := Classify(ip); class != "" {
		what := ip.String()
		if u := ip.Unmap(); u != ip {
			what = fmt.Sprintf("%s (IPv4-mapped %s)", ip, u)
		}
		if name != "" {
			return refused(allowHint(name, ip), "%s resolves to %s, %s address", name, what, class)
		}
		return refused(allowHint("", ip), "%s is %s address", what, class)
	}
	target := ip.String()
	if name != "" {
		target = name
	}
	return g.checkPort(target, port)
}

func (g *Guard) checkPort(target string, port uint16) error {
	if slices.Contains(g.ports, port) {
		return nil
	}
	ports := make([]string, len(g.ports))
	for i, p := range g.ports {
		ports[i] = strconv.Itoa(int(p))
	}
	list := strings.Join(ports, ",")
	return refused(fmt.Sprintf("allow the port with --%s=%s,%d or the host with --%s=%s", FlagAllowPorts, list, port, FlagAllow, target),
		"port %d of %s is not one of the allowed ports (%s)", port, target, list)
}

func allowHint(name string, ip netip.Addr) string {
	var entries []string
	if ip.IsValid() {
		entries = append(entries, "--"+FlagAllow+"="+hostPrefix(ip.WithZone("").Unmap()))
	}
	if name != "" {
		entries = append(entries, "--"+FlagAllow+"="+name)
	}
	return "allow it with " + strings.Join(entries, " or ")
}

// DialContext connects as a net.Dialer does, after resolving the host and checking every address it
// resolves to: one refused address refuses the name, since which of them a connection would use is not
// the agent's to choose. It then dials the checked addresses themselves, so nothing resolves the name
// again between the check and the connection, and checks each address once more as the socket connects.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	lookup := "ip"
	switch network {
	case "tcp":
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	default:
		return nil, refused("", "network %q is not TCP", network)
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || p == 0 {
		return nil, refused("", "port %q is not a port (1-65535)", portStr)
	}
	port := uint16(p)

	var ips []netip.Addr
	name := ""
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		name = normalizeHost(host)
		if ips, err = g.resolver.LookupNetIP(ctx, lookup, name); err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("%s resolves to no address", name)
		}
	}
	nameAllowed := name != "" && g.allow.AllowsHost(name)
	check := func(ip netip.Addr) error {
		if nameAllowed {
			return nil
		}
		return g.checkAddr(ip, name, port)
	}
	for _, ip := range ips {
		if err := check(ip); err != nil {
			return nil, err
		}
	}

	d := &net.Dialer{
		Timeout: g.dialTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refused("", "connecting to %q, which is not an address", address)
			}
			return check(ap.Addr())
		},
	}
	var errs []error
	for _, ip := range ips {
		// Unmapped: a resolver may answer an IPv4 address in its IPv6 form, which a host without IPv6
		// cannot dial. The zone stays: a link-local address someone allowed needs it.
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// Transport returns an HTTP transport that connects only through DialContext. It uses no proxy, whatever
// the environment says: a proxy would connect on the agent's behalf, and the guard would only see the
// proxy's address. It speaks HTTP/1.1, verifies certificates, and bounds the response headers it reads.
func (g *Guard) Transport() *http.Transport {
	t := &http.Transport{
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		MaxIdleConns:           10,
		IdleConnTimeout:        30 * time.Second,
	}
	g.enforce(t)
	return t
}

func (g *Guard) enforce(t *http.Transport) {
	t.Proxy = nil
	t.OnProxyConnectResponse = nil
	t.DialContext = g.DialContext
	t.DialTLSContext = nil // the TLS connection is then made over DialContext's
	//nolint:staticcheck // Dial and DialTLS are deprecated, but a transport that sets them would use them
	t.Dial, t.DialTLS = nil, nil
	if t.MaxResponseHeaderBytes <= 0 || t.MaxResponseHeaderBytes > MaxResponseHeaderBytes {
		t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
	}
}

// Client returns an HTTP client that keeps to the guard's policy: it connects through a clone of t (nil: a
// new Transport()) with the guard's dialer and no proxy, keeps no cookies, and follows at most MaxRedirects
// redirects, checking each target as CheckURL does before the dialer checks its addresses.
func (g *Guard) Client(t *http.Transport) *http.Client {
	if t == nil {
		t = g.Transport()
	} else {
		t = t.Clone()
		g.enforce(t)
	}
	return &http.Client{
		Transport: t,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			if err := g.CheckURL(req.URL); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
}
