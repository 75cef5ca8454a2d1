package guard

import (
	"fmt"
	"net/netip"
)

// special is a range of addresses the agent does not reach unless allowed, with the words a refusal uses.
type special struct {
	prefix netip.Prefix
	class  string
}

func mustPrefixes(pairs ...string) []special {
	out := make([]special, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, special{prefix: netip.MustParsePrefix(pairs[i]), class: pairs[i+1]})
	}
	return out
}

// The ranges that are not the public internet (IANA's special-purpose registries), the first match naming
// the class. Anything else is public.
var specials = mustPrefixes(
	// IPv4
	"0.0.0.0/32", "an unspecified",
	"0.0.0.0/8", `a "this network"`,
	"10.0.0.0/8", "a private",
	"100.64.0.0/10", "a shared (carrier-grade NAT)",
	"127.0.0.0/8", "a loopback",
	"169.254.169.254/32", "a link-local (cloud metadata)",
	"169.254.0.0/16", "a link-local",
	"172.16.0.0/12", "a private",
	"192.0.0.0/24", "a reserved (IETF protocol assignments)",
	"192.0.2.0/24", "a documentation",
	"192.168.0.0/16", "a private",
	"198.18.0.0/15", "a benchmarking",
	"198.51.100.0/24", "a documentation",
	"203.0.113.0/24", "a documentation",
	"224.0.0.0/4", "a multicast",
	"255.255.255.255/32", "a broadcast",
	"240.0.0.0/4", "a reserved",
	// IPv6
	"::/128", "an unspecified",
	"::1/128", "a loopback",
	"::/96", "a reserved (IPv4-compatible)",
	"64:ff9b:1::/48", "a private (local-use NAT64)",
	"100::/64", "a reserved (discard-only)",
	"2001::/32", "a reserved (Teredo)",
	"2001:db8::/32", "a documentation",
	"fc00::/7", "a private (unique local)",
	"fe80::/10", "a link-local",
	"fec0::/10", "a private (site-local)",
	"ff00::/8", "a multicast",
)

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address an IPv6 address carries and stands for: a NAT64 address reaches it
// through the NAT64 gateway, a 6to4 address through its relay.
func embedded(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Classify says which non-public range ip is in ("a loopback", "a link-local (cloud metadata)", ...), or ""
// for a public address. IPv4-mapped IPv6 addresses are their IPv4 address; NAT64 and 6to4 addresses are
// not public when the IPv4 address they carry is not. A zone is ignored.
func Classify(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if v4, ok := embedded(ip); ok {
		if class := Classify(v4); class != "" {
			return fmt.Sprintf("%s carrying %s, %s", ipFamily(ip), v4, class)
		}
		return ""
	}
	for _, s := range specials {
		if s.prefix.Contains(ip) {
			return s.class
		}
	}
	return ""
}

func ipFamily(ip netip.Addr) string {
	if nat64.Contains(ip) {
		return "a NAT64 address"
	}
	return "a 6to4 address"
}

// hostPrefix is the allowlist entry that allows exactly ip.
func hostPrefix(ip netip.Addr) string {
	return netip.PrefixFrom(ip, ip.BitLen()).String()
}
