package guard

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Allowlist is what the agent may reach beyond public addresses: address ranges, host names and host
// name suffixes. An allowed destination may be reached on any port.
type Allowlist struct {
	prefixes []netip.Prefix
	hosts    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
	entries  []string
}

// ParseAllowlist reads the --allow flag: a comma-separated list of
//
//   - CIDRs (10.0.0.0/8, fd00::/8) or single addresses (169.254.169.254), which allow every address in
//     them, reached by literal or by any name;
//   - host names (internal.example.com), which allow that name whatever it resolves to;
//   - *.suffix (*.example.com), which allows every name below example.com, not example.com itself.
//
// A name entry trusts DNS for that name: allow ranges when the names' records are not the agent owner's.
func ParseAllowlist(s string) (Allowlist, error) {
	a := Allowlist{hosts: map[string]bool{}}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if err := a.add(e); err != nil {
			return Allowlist{}, fmt.Errorf("--%s entry %q: %w", FlagAllow, e, err)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

func (a *Allowlist) add(e string) error {
	switch {
	case strings.Contains(e, "://"):
		return fmt.Errorf("is a URL; write its host name")
	case strings.Contains(e, "/"):
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("is not a CIDR such as 10.0.0.0/8")
		}
		if p.Addr().Is4In6() {
			return fmt.Errorf("is an IPv4-mapped range; write it as IPv4")
		}
		a.prefixes = append(a.prefixes, p.Masked())
	case isIPLiteral(e):
		ip, err := netip.ParseAddr(e)
		if err != nil || ip.Zone() != "" {
			return fmt.Errorf("is not an IP address")
		}
		ip = ip.Unmap()
		a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
	case strings.HasPrefix(e, "*."):
		name := normalizeHost(e[2:])
		if err := validHostname(name); err != nil {
			return err
		}
		a.suffixes = append(a.suffixes, "."+name)
	default:
		name := normalizeHost(e)
		if err := validHostname(name); err != nil {
			return err
		}
		a.hosts[name] = true
	}
	return nil
}

// String is the list as parsed, for logs.
func (a Allowlist) String() string { return strings.Join(a.entries, ",") }

// AllowsHost says whether a host name is allowed by name.
func (a Allowlist) AllowsHost(host string) bool {
	host = normalizeHost(host)
	if a.hosts[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// AllowsAddr says whether an address is allowed by range. An IPv4-mapped address is its IPv4 address, and a
// NAT64 or 6to4 address is allowed when the IPv4 address it carries is.
func (a Allowlist) AllowsAddr(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	if v4, ok := embedded(ip); ok {
		return a.AllowsAddr(v4)
	}
	return false
}

// ParsePorts reads the --allow-ports flag: the ports the agent may reach on public addresses, comma
// separated. Empty means DefaultPorts.
func ParsePorts(s string) ([]uint16, error) {
	seen := map[uint16]bool{}
	var out []uint16
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		p, err := strconv.ParseUint(e, 10, 16)
		if err != nil || p == 0 {
			return nil, fmt.Errorf("--%s entry %q is not a port (1-65535)", FlagAllowPorts, e)
		}
		if !seen[uint16(p)] {
			seen[uint16(p)] = true
			out = append(out, uint16(p))
		}
	}
	if len(out) == 0 {
		return append([]uint16(nil), DefaultPorts...), nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// normalizeHost makes names compare as DNS does: case-insensitive, with or without the root's dot.
func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isIPLiteral says whether h is meant as an address (digits and dots, or a colon) rather than a name.
func isIPLiteral(h string) bool {
	if strings.Contains(h, ":") {
		return true
	}
	last := h[strings.LastIndex(h, ".")+1:]
	if last == "" {
		return false
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validHostname accepts DNS names: labels of letters, digits, '-' and '_', each 1-63 long, 253 in all.
func validHostname(h string) error {
	if h == "" || len(h) > 253 {
		return fmt.Errorf("is not a host name")
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("is not a host name")
		}
		for _, c := range label {
			if !hostChar(c) {
				return fmt.Errorf("is not a host name")
			}
		}
	}
	return nil
}

func hostChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
