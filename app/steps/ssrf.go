package steps

import (
	"fmt"
	"net/netip"
	"syscall"
)

// BlockedError is the SSRF guard refusing a connection: the address being
// dialled is special-purpose (loopback, private, link-local, metadata…)
// and not in the operator's allow-list.
type BlockedError struct {
	Address string // the dialled ip:port
	Reason  string // the range it falls in
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: %s address (allow it with DUCTOR_HTTP_ALLOW)", e.Address, e.Reason)
}

// guard checks every address an http step's client is about to connect
// to. Its control method is a net.Dialer Control hook: it runs after DNS
// resolution and before connect(2), for every connection, so redirects
// and DNS rebinding cannot get past it.
type guard struct {
	allow []netip.Prefix
}

func (g guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Address: address, Reason: "unparsable"}
	}
	if reason := g.check(ap.Addr()); reason != "" {
		return &BlockedError{Address: address, Reason: reason}
	}
	return nil
}

// check returns why a may not be dialled, or "" when it may.
func (g guard) check(a netip.Addr) string {
	a = a.WithZone("")
	for _, p := range g.allow {
		if p.Contains(a) || p.Contains(a.Unmap()) {
			return ""
		}
	}
	return specialPurpose(a)
}

type addrRange struct {
	prefix netip.Prefix
	reason string
}

func ranges(pairs ...string) []addrRange {
	out := make([]addrRange, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, addrRange{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// Special-purpose ranges (IANA registries), most specific first.
var (
	specialV4 = ranges(
		"0.0.0.0/32", "unspecified",
		"0.0.0.0/8", "this-network",
		"10.0.0.0/8", "private",
		"100.64.0.0/10", "shared (CGNAT)",
		"127.0.0.0/8", "loopback",
		"169.254.169.254/32", "cloud metadata",
		"169.254.0.0/16", "link-local",
		"172.16.0.0/12", "private",
		"192.0.0.0/24", "IETF protocol assignment",
		"192.0.2.0/24", "documentation",
		"192.88.99.0/24", "6to4 relay anycast",
		"192.168.0.0/16", "private",
		"198.18.0.0/15", "benchmarking",
		"198.51.100.0/24", "documentation",
		"203.0.113.0/24", "documentation",
		"224.0.0.0/4", "multicast",
		"240.0.0.0/4", "reserved",
	)
	specialV6 = ranges(
		"::/128", "unspecified",
		"::1/128", "loopback",
		"::/96", "IPv4-compatible (deprecated)",
		"::ffff:0:0:0/96", "IPv4-translated",
		"64:ff9b:1::/48", "local-use NAT64",
		"100::/64", "discard-only",
		"100:0:0:1::/64", "dummy prefix",
		"2001::/23", "IETF protocol assignment",
		"2001:db8::/32", "documentation",
		"2002::/16", "6to4",
		"3fff::/20", "documentation",
		"5f00::/16", "segment routing",
		"fc00::/7", "unique local (private)",
		"fe80::/10", "link-local",
		"fec0::/10", "site-local (deprecated)",
		"ff00::/8", "multicast",
	)
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// globalV6 is the only IPv6 space allocated for global unicast;
	// addresses outside it and the ranges above are reserved.
	globalV6 = netip.MustParsePrefix("2000::/3")
)

// specialPurpose names the special-purpose range a falls in, or returns
// "" for a globally routable address. IPv4-mapped IPv6 addresses are
// judged as the IPv4 address they carry; so are NAT64 addresses of the
// well-known prefix, which a NAT64 gateway would translate.
func specialPurpose(a netip.Addr) string {
	if a.Is4In6() {
		return specialPurpose(a.Unmap())
	}
	if nat64.Contains(a) {
		b := a.As16()
		if r := specialPurpose(netip.AddrFrom4([4]byte(b[12:]))); r != "" {
			return "NAT64 " + r
		}
		return ""
	}
	table := specialV6
	if a.Is4() {
		table = specialV4
	}
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if a.Is6() && !globalV6.Contains(a) {
		return "reserved"
	}
	return ""
}
