package httpx

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"203.0.113.7:5000":           "203.0.113.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[::ffff:203.0.113.7]:1":     "203.0.113.7",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "198.51.100.1")
		if got := TrustedProxies(nil).ClientAddr(r); got != want {
			t.Errorf("clientAddr(%s) with no trusted proxy = %s, want %s", remote, got, want)
		}
	}
	tp := TrustedProxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, c := range []struct{ remote, xff, realIP, want string }{
		{"10.1.1.1:1", "198.51.100.1", "", "198.51.100.1"},
		{"10.1.1.1:1", "203.0.113.5, 198.51.100.1, 10.2.2.2", "", "198.51.100.1"},
		{"10.1.1.1:1", "10.3.3.3, 10.2.2.2", "", "10.3.3.3"},
		{"10.1.1.1:1", "junk, 10.2.2.2", "", "10.2.2.2"},
		{"10.1.1.1:1", "[2001:db8:1:2::9]:443", "", "2001:db8:1:2::/64"},
		{"10.1.1.1:1", "198.51.100.1:8443", "", "198.51.100.1"},
		{"10.1.1.1:1", "", "198.51.100.7", "198.51.100.7"},
		{"10.1.1.1:1", "", "", "10.1.1.1"},
		{"[2001:db8:ffff::1]:1", "198.51.100.1", "", "198.51.100.1"},
		{"192.0.2.1:1", "198.51.100.1", "198.51.100.7", "192.0.2.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.realIP != "" {
			r.Header.Set("X-Real-IP", c.realIP)
		}
		if got := tp.ClientAddr(r); got != c.want {
			t.Errorf("clientAddr(%s, X-Forwarded-For %q, X-Real-IP %q) = %s, want %s", c.remote, c.xff, c.realIP, got, c.want)
		}
	}
}
