package steps

import (
	"net/http"
	"net/netip"
)

// NewGuardedClient returns an HTTP client behind the same SSRF guard as
// http steps (allow as in HTTPOptions.Allow), for other outbound
// requests Ductor makes on a tenant's behalf, such as webhook
// subscriptions. It follows no redirect: a 3xx is the answer.
func NewGuardedClient(allow []netip.Prefix) *http.Client {
	c := newHTTPClient(allow)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}
