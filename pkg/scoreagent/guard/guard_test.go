package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	cases := map[string]string{
		// IPv4
		"8.8.8.8":         "",
		"93.184.216.34":   "",
		"0.0.0.0":         "an unspecified",
		"0.1.2.3":         `a "this network"`,
		"10.1.2.3":        "a private",
		"100.64.0.1":      "a shared (carrier-grade NAT)",
		"100.128.0.1":     "",
		"127.0.0.1":       "a loopback",
		"127.255.255.254": "a loopback",
		"169.254.169.254": "a link-local (cloud metadata)",
		"169.254.1.1":     "a link-local",
		"172.16.0.1":      "a private",
		"172.31.255.255":  "a private",
		"172.32.0.1":      "",
		"192.0.0.8":       "a reserved (IETF protocol assignments)",
		"192.0.2.1":       "a documentation",
		"192.168.1.1":     "a private",
		"198.18.0.1":      "a benchmarking",
		"224.0.0.1":       "a multicast",
		"239.255.255.250": "a multicast",
		"240.0.0.1":       "a reserved",
		"255.255.255.255": "a broadcast",
		// IPv6
		"2606:4700::1111": "",
		"::":              "an unspecified",
		"::1":             "a loopback",
		"::7f00:1":        "a reserved (IPv4-compatible)",
		"fe80::1":         "a link-local",
		"fe80::1%eth0":    "a link-local",
		"fc00::1":         "a private (unique local)",
		"fd00:ec2::254":   "a private (unique local)",
		"fec0::1":         "a private (site-local)",
		"ff02::1":         "a multicast",
		"2001:db8::1":     "a documentation",
		"2001:0:4136::1":  "a reserved (Teredo)",
		"100::1":          "a reserved (discard-only)",
		"64:ff9b:1::1":    "a private (local-use NAT64)",
		// IPv6 that stands for IPv4
		"::ffff:127.0.0.1":       "a loopback",
		"::ffff:169.254.169.254": "a link-local (cloud metadata)",
		"::ffff:8.8.8.8":         "",
		"64:ff9b::a9fe:a9fe":     "a NAT64 address carrying 169.254.169.254, a link-local (cloud metadata)",
		"64:ff9b::808:808":       "",
		"2002:a00:1::1":          "a 6to4 address carrying 10.0.0.1, a private",
		"2002:808:808::1":        "",
	}
	for addr, want := range cases {
		t.Run(addr, func(t *testing.T) {
			if got := Classify(netip.MustParseAddr(addr)); got != want {
				t.Errorf("Classify(%s) = %q, want %q", addr, got, want)
			}
		})
	}
}

func TestParseAllowlist(t *testing.T) {
	cases := map[string]struct {
		flag    string
		addrs   map[string]bool
		hosts   map[string]bool
		wantErr string
	}{
		"empty": {
			addrs: map[string]bool{"127.0.0.1": false},
			hosts: map[string]bool{"example.com": false},
		},
		"ranges and names": {
			flag:  " 10.0.0.0/8 , *.example.com,internal.corp.,169.254.169.254,fd00::/8,",
			addrs: map[string]bool{"10.9.9.9": true, "11.0.0.1": false, "169.254.169.254": true, "169.254.169.253": false, "fd00::1": true, "fc00::1": false, "::ffff:10.0.0.1": true, "64:ff9b::a00:1": true},
			hosts: map[string]bool{"a.example.com": true, "A.B.Example.COM.": true, "example.com": false, "badexample.com": false, "internal.corp": true, "x.internal.corp": false},
		},
		"an unmasked CIDR is masked":  {flag: "10.1.2.3/8", addrs: map[string]bool{"10.200.0.1": true}},
		"a bad CIDR":                  {flag: "10.0.0.0/33", wantErr: `--allow entry "10.0.0.0/33": is not a CIDR such as 10.0.0.0/8`},
		"a mapped range":              {flag: "::ffff:10.0.0.0/104", wantErr: `--allow entry "::ffff:10.0.0.0/104": is an IPv4-mapped range; write it as IPv4`},
		"a short IPv4 address":        {flag: "127.1", wantErr: `--allow entry "127.1": is not an IP address`},
		"a wildcard in the midst":     {flag: "a.*.com", wantErr: `--allow entry "a.*.com": is not a host name`},
		"everything is not a pattern": {flag: "*", wantErr: `--allow entry "*": is not a host name`},
		"a URL is not an entry":       {flag: "https://example.com", wantErr: `--allow entry "https://example.com": is a URL; write its host name`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := ParseAllowlist(tc.flag)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for addr, want := range tc.addrs {
				if got := a.AllowsAddr(netip.MustParseAddr(addr)); got != want {
					t.Errorf("AllowsAddr(%s) = %v, want %v", addr, got, want)
				}
			}
			for host, want := range tc.hosts {
				if got := a.AllowsHost(host); got != want {
					t.Errorf("AllowsHost(%s) = %v, want %v", host, got, want)
				}
			}
		})
	}
}

func TestParsePorts(t *testing.T) {
	cases := map[string]struct {
		flag    string
		want    []uint16
		wantErr string
	}{
		"empty: the defaults":     {want: []uint16{80, 443}},
		"sorted, without repeats": {flag: "8443, 443,80,443", want: []uint16{80, 443, 8443}},
		"zero":                    {flag: "0", wantErr: `--allow-ports entry "0" is not a port (1-65535)`},
		"too big":                 {flag: "65536", wantErr: `--allow-ports entry "65536" is not a port (1-65535)`},
		"a name":                  {flag: "https", wantErr: `--allow-ports entry "https" is not a port (1-65535)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePorts(tc.flag)
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParsePorts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	cases := map[string]struct {
		allow, ports string
		url          string
		want         string
	}{
		"a public name":              {url: "https://redhat.com"},
		"a public name on port 80":   {url: "http://redhat.com/x?y=1"},
		"an upper-case scheme":       {url: "HTTPS://redhat.com"},
		"a public address":           {url: "https://8.8.8.8"},
		"a public IPv6 address":      {url: "https://[2606:4700::1111]/"},
		"a name ending with its dot": {url: "https://redhat.com./"},

		"ftp":              {url: "ftp://redhat.com", want: `refused: scheme "ftp" is not http or https`},
		"file":             {url: "file:///etc/passwd", want: `refused: scheme "file" is not http or https`},
		"no scheme":        {url: "redhat.com", want: `refused: scheme "" is not http or https`},
		"no host":          {url: "https:///x", want: `refused: the URL "https:///x" has no host`},
		"credentials":      {url: "https://user:secret@redhat.com", want: "refused: the URL carries credentials (user info before @); the agent sends none"},
		"a user alone":     {url: "https://user@redhat.com", want: "refused: the URL carries credentials (user info before @); the agent sends none"},
		"not a URL":        {url: "https://[::1", want: `refused: "https://[::1" is not a URL`},
		"a bad host":       {url: "https://red_hat!.com", want: `refused: host "red_hat!.com" is not a host name`},
		"port 0":           {url: "https://redhat.com:0", want: `refused: port "0" is not a port (1-65535)`},
		"another port":     {url: "https://redhat.com:8443", want: "refused: port 8443 of redhat.com is not one of the allowed ports (80,443); allow the port with --allow-ports=80,443,8443 or the host with --allow=redhat.com"},
		"an allowed port":  {ports: "443,8443", url: "https://redhat.com:8443"},
		"a host, any port": {allow: "redhat.com", url: "https://redhat.com:8443"},

		"the metadata address": {url: "http://169.254.169.254/latest/meta-data", want: "refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32"},
		"loopback":             {url: "http://127.0.0.1:8080", want: "refused: 127.0.0.1 is a loopback address; allow it with --allow=127.0.0.1/32"},
		"IPv6 loopback":        {url: "http://[::1]/", want: "refused: ::1 is a loopback address; allow it with --allow=::1/128"},
		"mapped loopback":      {url: "http://[::ffff:127.0.0.1]/", want: "refused: ::ffff:127.0.0.1 (IPv4-mapped 127.0.0.1) is a loopback address; allow it with --allow=127.0.0.1/32"},
		"NAT64 metadata":       {url: "http://[64:ff9b::a9fe:a9fe]/", want: "refused: 64:ff9b::a9fe:a9fe is a NAT64 address carrying 169.254.169.254, a link-local (cloud metadata) address; allow it with --allow=64:ff9b::a9fe:a9fe/128"},
		"link-local IPv6":      {url: "http://[fe80::1%25eth0]/", want: "refused: fe80::1 is a link-local address; allow it with --allow=fe80::1/128"},
		"private":              {url: "https://10.0.0.1", want: "refused: 10.0.0.1 is a private address; allow it with --allow=10.0.0.1/32"},
		"CGNAT":                {url: "https://100.64.1.1", want: "refused: 100.64.1.1 is a shared (carrier-grade NAT) address; allow it with --allow=100.64.1.1/32"},
		"unspecified":          {url: "http://0.0.0.0", want: "refused: 0.0.0.0 is an unspecified address; allow it with --allow=0.0.0.0/32"},
		"a short address":      {url: "http://127.1/", want: `refused: host "127.1" looks like an address but is not one written the standard way`},
		"a decimal address":    {url: "http://2130706433/", want: `refused: host "2130706433" looks like an address but is not one written the standard way`},
		"localhost":            {url: "http://localhost/", want: "refused: localhost names a loopback address; allow it with --allow=localhost"},
		"below localhost":      {url: "http://app.LOCALHOST:8080/", want: "refused: app.localhost names a loopback address; allow it with --allow=app.localhost"},

		"an allowed range, any port": {allow: "127.0.0.0/8", url: "http://127.0.0.1:8080"},
		"the metadata allowed":       {allow: "169.254.169.254", url: "http://169.254.169.254"},
		"mapped, allowed as IPv4":    {allow: "127.0.0.1/32", url: "http://[::ffff:127.0.0.1]:9/"},
		"another address":            {allow: "127.0.0.1/32", url: "http://127.0.0.2", want: "refused: 127.0.0.2 is a loopback address; allow it with --allow=127.0.0.2/32"},
		"a public address, port":     {url: "http://8.8.8.8:53", want: "refused: port 53 of 8.8.8.8 is not one of the allowed ports (80,443); allow the port with --allow-ports=80,443,53 or the host with --allow=8.8.8.8"},
		"a suffix":                   {allow: "*.corp.example", url: "http://db.corp.example:5432"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := newGuard(t, tc.allow, tc.ports, nil)
			if got := errString(g.Check(tc.url)); got != tc.want {
				t.Errorf("Check(%s) =\n  %q\nwant\n  %q", tc.url, got, tc.want)
			}
		})
	}
}

// fakeResolver answers lookups from a map and counts them.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// TestDialRefuses covers what DialContext refuses before connecting anywhere, so it needs no network.
func TestDialRefuses(t *testing.T) {
	resolver := fakeResolver{
		"metadata.internal": {"169.254.169.254"},
		"rebind.example":    {"127.0.0.1"},
		"mixed.example":     {"8.8.8.8", "10.0.0.7"},
		"v6.example":        {"::1"},
		"mapped.example":    {"::ffff:192.168.0.1"},
		"empty.example":     {},
		"public.example":    {"8.8.8.8"},
	}
	cases := map[string]struct {
		allow   string
		network string
		address string
		want    string
	}{
		"a name resolving to the metadata address": {
			address: "metadata.internal:80",
			want:    "refused: metadata.internal resolves to 169.254.169.254, a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32 or --allow=metadata.internal",
		},
		"a public name that resolves to loopback now (rebinding)": {
			address: "rebind.example:443",
			want:    "refused: rebind.example resolves to 127.0.0.1, a loopback address; allow it with --allow=127.0.0.1/32 or --allow=rebind.example",
		},
		"one private address among public ones": {
			address: "mixed.example:443",
			want:    "refused: mixed.example resolves to 10.0.0.7, a private address; allow it with --allow=10.0.0.7/32 or --allow=mixed.example",
		},
		"IPv6 loopback": {
			address: "v6.example:443",
			want:    "refused: v6.example resolves to ::1, a loopback address; allow it with --allow=::1/128 or --allow=v6.example",
		},
		"a mapped private address": {
			address: "mapped.example:443",
			want:    "refused: mapped.example resolves to ::ffff:192.168.0.1 (IPv4-mapped 192.168.0.1), a private address; allow it with --allow=192.168.0.1/32 or --allow=mapped.example",
		},
		"an address literal": {
			address: "169.254.169.254:80",
			want:    "refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32",
		},
		"a public name on another port": {
			address: "public.example:22",
			want:    "refused: port 22 of public.example is not one of the allowed ports (80,443); allow the port with --allow-ports=80,443,22 or the host with --allow=public.example",
		},
		"another allowed range does not help": {
			allow:   "10.0.0.0/8",
			address: "rebind.example:443",
			want:    "refused: rebind.example resolves to 127.0.0.1, a loopback address; allow it with --allow=127.0.0.1/32 or --allow=rebind.example",
		},
		"UDP": {
			network: "udp",
			address: "public.example:53",
			want:    `refused: network "udp" is not TCP`,
		},
		"no address": {
			address: "empty.example:443",
			want:    "empty.example resolves to no address",
		},
		"not found": {
			address: "nowhere.example:443",
			want:    "lookup nowhere.example: no such host",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := newGuard(t, tc.allow, "", resolver)
			network := tc.network
			if network == "" {
				network = "tcp"
			}
			conn, err := g.DialContext(t.Context(), network, tc.address)
			if conn != nil {
				conn.Close()
			}
			if got := errString(err); got != tc.want {
				t.Errorf("DialContext(%s) =\n  %q\nwant\n  %q", tc.address, got, tc.want)
			}
		})
	}
}

func TestClientLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			http.Error(w, "credentials sent", http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "x"})
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	port := mustURL(t, srv.URL).Port()
	resolver := fakeResolver{"probe.test": {"127.0.0.1"}, "mapped.test": {"::ffff:127.0.0.1"}}

	cases := map[string]struct {
		allow string
		url   string
		want  string
	}{
		"refused by default": {
			url:  srv.URL,
			want: fmt.Sprintf("Get %q: refused: 127.0.0.1 is a loopback address; allow it with --allow=127.0.0.1/32", srv.URL),
		},
		"allowed by range": {allow: "127.0.0.1/32", url: srv.URL},
		"a name resolving to it, refused": {
			url:  "http://probe.test:" + port,
			want: fmt.Sprintf("Get %q: refused: probe.test resolves to 127.0.0.1, a loopback address; allow it with --allow=127.0.0.1/32 or --allow=probe.test", "http://probe.test:"+port),
		},
		"a name resolving to it, allowed by range": {allow: "127.0.0.0/8", url: "http://probe.test:" + port},
		"a name allowed by name":                   {allow: "*.test", url: "http://probe.test:" + port},
		"an IPv4 answer in IPv6 form":              {allow: "127.0.0.1/32", url: "http://mapped.test:" + port},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := newGuard(t, tc.allow, "", resolver)
			client := g.Client(nil)
			// Twice: a cookie the first answer sets must not come back.
			for range 2 {
				body, err := get(t, client, tc.url)
				if got := errString(err); got != tc.want {
					t.Fatalf("GET =\n  %q\nwant\n  %q", got, tc.want)
				}
				if err == nil && body != "ok" {
					t.Fatalf("body = %q", body)
				}
			}
		})
	}
}

func TestClientRedirects(t *testing.T) {
	// The target listens on 127.0.0.2: loopback too, but outside an allowlist of 127.0.0.1/32.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "other") }))
	other.Listener.Close()
	other.Listener = ln
	other.Start()
	t.Cleanup(other.Close)

	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	redirect := func(to string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
	}
	mux.HandleFunc("/final", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.Handle("/same", redirect("/final"))
	mux.Handle("/other", redirect(other.URL+"/"))
	mux.Handle("/metadata", redirect("http://169.254.169.254/latest/meta-data"))
	mux.Handle("/file", redirect("file:///etc/passwd"))
	mux.Handle("/credentials", redirect("http://user:secret@"+strings.TrimPrefix(srv.URL, "http://")+"/final"))
	mux.Handle("/loop/3", redirect("/final"))
	mux.Handle("/loop/2", redirect("/loop/3"))
	mux.Handle("/loop/1", redirect("/loop/2"))
	mux.Handle("/loop/0", redirect("/loop/1"))

	cases := map[string]struct {
		allow string
		path  string
		want  string
	}{
		"within the allowlist": {path: "/same"},
		"three redirects":      {path: "/loop/1"},
		"four redirects": {
			path: "/loop/0",
			want: "stopped after 3 redirects",
		},
		"to another address": {
			path: "/other",
			want: fmt.Sprintf("redirect to %s/: refused: 127.0.0.2 is a loopback address; allow it with --allow=127.0.0.2/32", other.URL),
		},
		"to another address, allowed": {allow: "127.0.0.1/32,127.0.0.2/32", path: "/other"},
		"to the metadata address": {
			path: "/metadata",
			want: `redirect to http://169.254.169.254/latest/meta-data: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32`,
		},
		"to a file": {
			path: "/file",
			want: `redirect to file:///etc/passwd: refused: scheme "file" is not http or https`,
		},
		"to a URL with credentials": {
			path: "/credentials",
			want: "redirect to http://user:xxxxx@" + strings.TrimPrefix(srv.URL, "http://") + "/final: refused: the URL carries credentials (user info before @); the agent sends none",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			allow := tc.allow
			if allow == "" {
				allow = "127.0.0.1/32"
			}
			_, err := get(t, newGuard(t, allow, "", nil).Client(nil), srv.URL+tc.path)
			// The cause, without the client's "Get <url>: " (which names a URL with its password).
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			got := strings.ReplaceAll(errString(err), srv.URL, "")
			if got != tc.want {
				t.Errorf("GET =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// A transport the caller configures keeps its TLS settings, and loses any proxy or dialer of its own.
func TestClientTLSAndProxy(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	proxied := false
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = func(*http.Request) (*url.URL, error) { proxied = true; return url.Parse("http://127.0.0.1:1") }
	tr.DialContext = (&net.Dialer{}).DialContext

	if _, err := get(t, newGuard(t, "", "", nil).Client(tr), srv.URL); err == nil || !strings.Contains(err.Error(), "refused: 127.0.0.1 is a loopback address") {
		t.Errorf("GET with the caller's dialer = %v, want a refusal", err)
	}
	body, err := get(t, newGuard(t, "127.0.0.1/32", "", nil).Client(tr), srv.URL)
	if err != nil || body != "ok" {
		t.Errorf("GET over TLS = %q, %v", body, err)
	}
	if proxied {
		t.Error("the caller's proxy was asked")
	}
	if tr.DialContext == nil || tr.Proxy == nil {
		t.Error("Client changed the caller's transport")
	}

	// Without the test server's CA, the certificate is refused: certificates are verified.
	_, err = get(t, newGuard(t, "127.0.0.1/32", "", nil).Client(nil), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("GET without the CA = %v, want a certificate error", err)
	}
}

func TestRefusedError(t *testing.T) {
	err := fmt.Errorf("run 1: %w", newGuard(t, "", "", nil).Check("http://10.0.0.1"))
	var refusedErr *RefusedError
	if !errors.As(err, &refusedErr) {
		t.Fatalf("%v is not a *RefusedError", err)
	}
	want := &RefusedError{Reason: "10.0.0.1 is a private address", Hint: "allow it with --allow=10.0.0.1/32"}
	if diff := cmp.Diff(want, refusedErr); diff != "" {
		t.Errorf("RefusedError (-want +got):\n%s", diff)
	}
}

func newGuard(t *testing.T, allow, ports string, resolver Resolver) *Guard {
	t.Helper()
	a, err := ParseAllowlist(allow)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePorts(ports)
	if err != nil {
		t.Fatal(err)
	}
	if resolver == nil {
		resolver = fakeResolver{}
	}
	return New(Config{Allow: a, Ports: p, Resolver: resolver})
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
