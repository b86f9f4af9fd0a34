package pages_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/static"
)

// Every dashboard response carries the security headers: each GET route
// the server has (a new route joins the table by itself), and the
// answers around them: a redirect, a form post, an error, a static file.
func TestSecurityHeadersOnEveryPage(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, "key: hdr\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\n")
	run := b.start(t, runs.Trigger{Definition: "hdr", Input: map[string]any{}})
	b.waitStatus(t, run, engine.RunSucceeded)
	fill := strings.NewReplacer(":tenant", b.tenant.Slug, ":id", run.String(), ":key", "hdr", ":part", "input", ":node", "a", ":generation", "0", ":attempt", "1", ":n", "1")

	var paths []string
	for _, r := range server.New(server.Deps{API: true, Web: true}).Routes() {
		if r.Method != "GET" || strings.HasPrefix(r.Path, "/api/") || strings.HasSuffix(r.Path, "*") {
			continue
		}
		p := fill.Replace(r.Path)
		if strings.Contains(p, ":") {
			t.Errorf("route %s has a parameter this test cannot fill: give it a value", r.Path)
			continue
		}
		paths = append(paths, p)
	}
	paths = append(paths, static.Path("css/app.css"), "/no/such/page", b.base+"/runs/"+strings.Repeat("0", 8))
	for _, p := range paths {
		wantSecurityHeaders(t, "GET "+p, b.owner.Get(b.srvURL+p).Header)
		wantSecurityHeaders(t, "GET "+p+" signed out", servertest.NewBrowserClient(t).Get(b.srvURL+p).Header)
	}
	post := b.owner.Post(b.srvURL+"/logout", url.Values{"csrf": {b.csrf[b.owner]}}, nil)
	wantSecurityHeaders(t, "POST /logout", post.Header)
	if len(paths) < 15 {
		t.Fatalf("only %d pages checked: %v", len(paths), paths)
	}
}

func wantSecurityHeaders(t *testing.T, what string, h map[string][]string) {
	t.Helper()
	get := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	csp := get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self' 'sha256-", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", what, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: Content-Security-Policy %q allows inline script", what, csp)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY"} {
		if got := get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got, want)
		}
	}
}
