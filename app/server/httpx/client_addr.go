package httpx

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedProxies are the peers whose forwarding headers are believed
// (DUCTOR_TRUSTED_PROXIES). None by default: the address is the
// connection's peer, and the headers, which the client writes, are
// ignored.
type TrustedProxies []netip.Prefix

func (tp TrustedProxies) trusts(a netip.Addr) bool {
	for _, p := range tp {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address a request's failures are counted against:
// an IPv4 address, or an IPv6 address's /64 (one host holds a whole
// /64).
func (tp TrustedProxies) ClientAddr(r *http.Request) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	return bucket(tp.client(peer, r.Header))
}

// client is the request's client: the peer, unless the peer is a trusted
// proxy, and then the rightmost X-Forwarded-For hop that is not a trusted
// proxy (the leftmost when all are), or X-Real-IP when there is no
// X-Forwarded-For. A hop that does not parse ends the walk: the hop to
// its right, a trusted proxy, is the client.
func (tp TrustedProxies) client(peer netip.Addr, h http.Header) netip.Addr {
	if !tp.trusts(peer) {
		return peer
	}
	hops := forwardedHops(h)
	if len(hops) == 0 {
		if a, ok := parseHop(h.Get("X-Real-Ip")); ok {
			return a
		}
		return peer
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return client
		}
		client = a
		if !tp.trusts(a) {
			return a
		}
	}
	return client
}

// forwardedHops lists the X-Forwarded-For hops of every such header, in
// order.
func forwardedHops(h http.Header) []string {
	var hops []string
	for _, v := range h.Values("X-Forwarded-For") {
		for hop := range strings.SplitSeq(v, ",") {
			if hop = strings.TrimSpace(hop); hop != "" {
				hops = append(hops, hop)
			}
		}
	}
	return hops
}

// parseHop reads an address with or without a port (and IPv6 brackets).
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

func bucket(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
