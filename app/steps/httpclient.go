package steps

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// DefaultMaxResponseBytes caps the body an http step reads.
const DefaultMaxResponseBytes = 1 << 20

// maxRedirects is how many redirects an http step follows.
const maxRedirects = 5

// HTTPOptions configures the client of http steps.
type HTTPOptions struct {
	// Allow lists prefixes http steps may reach although the SSRF guard
	// would refuse them (DUCTOR_HTTP_ALLOW). Empty by default.
	Allow []netip.Prefix
	// MaxResponseBytes caps a response body; 0 means
	// DefaultMaxResponseBytes. A bigger body fails as payload_too_large.
	MaxResponseBytes int64
}

// errRedirectPolicy marks a redirect the client refused to follow.
var errRedirectPolicy = errors.New("redirect refused")

// newHTTPClient returns a client whose every connection goes through the
// SSRF guard. It ignores proxy settings from the environment (a proxy
// would connect on our behalf, out of the guard's sight) and sets no
// overall timeout: the attempt's context bounds each request.
func newHTTPClient(allow []netip.Prefix) *http.Client {
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   guard{allow: allow}.control,
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 256 << 10,
	}
	return &http.Client{Transport: transport, CheckRedirect: checkRedirect}
}

// checkRedirect follows at most maxRedirects redirects, to http and https
// URLs only. The guard checks the new connection like any other. A
// redirect to another host, or from https to http, carries only the
// headers in crossHostHeaders: whatever else the step set (an API key, a
// token) was meant for the host it named.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: stopped after %d redirects", errRedirectPolicy, maxRedirects)
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return fmt.Errorf("%w: redirect to scheme %q", errRedirectPolicy, s)
	}
	if leavesOrigin(via[0].URL, req.URL) {
		for name := range req.Header {
			if !crossHostHeaders[http.CanonicalHeaderKey(name)] {
				req.Header.Del(name)
			}
		}
	}
	return nil
}

// crossHostHeaders are the headers a redirect to another host keeps.
var crossHostHeaders = map[string]bool{
	"Accept": true, "Accept-Language": true, "Content-Type": true,
	"User-Agent": true, "Traceparent": true, "Tracestate": true,
}

// leavesOrigin reports whether a redirect from first to next goes to
// another host or port, or from https down to http.
func leavesOrigin(first, next *url.URL) bool {
	return !strings.EqualFold(first.Host, next.Host) || (first.Scheme == "https" && next.Scheme != "https")
}
