package steps_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/version"
)

var loopbackAllowed = &setupOpts{allow: []string{"127.0.0.1/32"}}

// httpReq builds the request for an http attempt with params.
func httpReq(params map[string]any) steps.Request {
	return steps.Request{TenantID: "t1", RunID: "r1", Node: "call", Ref: "call", Type: "http",
		Attempt: 1, IdempotencyKey: "r1:call", Params: params}
}

// server starts a loopback server and counts the requests it gets.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func outputMap(t *testing.T, out any) map[string]any {
	t.Helper()
	m, ok := out.(map[string]any)
	if !ok {
		t.Fatalf("output is %T, want a map", out)
	}
	return m
}

func TestHTTPJSONRoundTrip(t *testing.T) {
	t.Parallel()
	type seen struct{ method, path, ctype, ua, key, custom, body string }
	got := make(chan seen, 1)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), r.Header.Get("User-Agent"),
			r.Header.Get("Idempotency-Key"), r.Header.Get("X-Custom"), string(body)}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id": 12345678901234567, "ok": true}`)
	})
	out, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{
		"url": srv.URL + "/orders?x=1", "method": "post",
		"headers": map[string]any{"X-Custom": "yes", "Idempotency-Key": "forged"},
		"body":    map[string]any{"amount": 5},
	}))
	wantOutput(t, outputMap(t, out)["body"], err, `{"id":12345678901234567,"ok":true}`)
	m := outputMap(t, out)
	if m["status"] != int64(201) {
		t.Errorf("status = %#v, want 201", m["status"])
	}
	headers := outputMap(t, m["headers"])
	if headers["x-multi"] != "a, b" || headers["content-type"] != "application/json; charset=utf-8" {
		t.Errorf("headers = %v", headers)
	}
	want := seen{"POST", "/orders?x=1", "application/json", version.UserAgent(), "r1:call", "yes", `{"amount":5}`}
	if s := <-got; s != want {
		t.Errorf("server saw %+v, want %+v", s, want)
	}
}

func TestHTTPTextBodies(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.Header.Get("Content-Type") + " " + string(body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, `{"looks": "like json"}`)
	})
	out, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{
		"url": srv.URL, "method": "PUT", "body": "raw text",
		"headers": map[string]any{"Content-Type": "text/csv", "User-Agent": "custom"},
	}))
	wantOutput(t, outputMap(t, out)["body"], err, `"{\"looks\": \"like json\"}"`)
	if s := <-got; s != "PUT text/csv raw text" {
		t.Errorf("server saw %q", s)
	}
}

func TestHTTPInvalidJSONFallsBackToText(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		fmt.Fprint(w, `{"broken"`)
	})
	out, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL}))
	wantOutput(t, outputMap(t, out)["body"], err, `"{\"broken\""`)
}

func TestHTTPStatusMapping(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		expect    any
		code      string // "" means success
		retryable bool
	}{
		{status: 200},
		{status: 204},
		{status: 299},
		{status: 500, code: steps.CodeHTTPStatus, retryable: true},
		{status: 503, code: steps.CodeHTTPStatus, retryable: true},
		{status: 408, code: steps.CodeHTTPStatus, retryable: true},
		{status: 429, code: steps.CodeHTTPStatus, retryable: true},
		{status: 400, code: steps.CodeHTTPStatus},
		{status: 404, code: steps.CodeHTTPStatus},
		{status: 302, code: steps.CodeHTTPStatus}, // a redirect without Location is not followed
		{status: 404, expect: 404},
		{status: 409, expect: []any{json.Number("200"), float64(409)}},
		{status: 200, expect: 201, code: steps.CodeHTTPStatus},
		{status: 503, expect: []any{200, 404}, code: steps.CodeHTTPStatus, retryable: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d expect %v", tt.status, tt.expect), func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, "why")
			})
			out, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL, "expect_status": tt.expect}))
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Execute: %+v", *err)
				}
				return
			}
			wantError(t, err, tt.code, tt.retryable, fmt.Sprint(tt.status))
			if status := outputMap(t, out)["status"]; status != int64(tt.status) {
				t.Errorf("output status = %v, want the response's", status)
			}
		})
	}
}

func TestHTTPStatusMessageHidesTheQuery(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) })
	_, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL + "/x?token=secret"}))
	wantError(t, err, steps.CodeHTTPStatus, false, "403", "/x")
	if strings.Contains(err.Message, "secret") {
		t.Errorf("message leaks the query: %s", err.Message)
	}
}

func TestHTTPResponseCap(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusBadGateway)
		}
		fmt.Fprint(w, strings.Repeat("x", 64))
	})
	b := setup(t, &setupOpts{allow: []string{"127.0.0.1/32"}, maxBody: 32})
	_, err := b.run(t, httpReq(map[string]any{"url": srv.URL}))
	wantError(t, err, steps.CodePayloadTooLarge, false, "32-byte")
	// An unexpected status wins over the size: the attempt can be retried.
	out, err := b.run(t, httpReq(map[string]any{"url": srv.URL + "/fail"}))
	wantError(t, err, steps.CodeHTTPStatus, true, "502")
	if body := outputMap(t, out)["body"]; body != "" {
		t.Errorf("body = %v, want dropped", body)
	}
}

func TestHTTPInvalidParams(t *testing.T) {
	t.Parallel()
	tests := map[string]map[string]any{
		"no url":        {},
		"url not text":  {"url": 5},
		"scheme":        {"url": "ftp://example.com/x"},
		"file scheme":   {"url": "file:///etc/passwd"},
		"no host":       {"url": "http:///path"},
		"unparsable":    {"url": "http://[::1"},
		"method":        {"url": "http://example.com", "method": "GET /"},
		"method type":   {"url": "http://example.com", "method": 1},
		"headers type":  {"url": "http://example.com", "headers": "x"},
		"header value":  {"url": "http://example.com", "headers": map[string]any{"X": 1}},
		"header inject": {"url": "http://example.com", "headers": map[string]any{"X": "a\r\nHost: evil"}},
		"header name":   {"url": "http://example.com", "headers": map[string]any{"Bad Name": "a"}},
		"expect":        {"url": "http://example.com", "expect_status": 42},
		"expect list":   {"url": "http://example.com", "expect_status": []any{200, "ok"}},
		"expect empty":  {"url": "http://example.com", "expect_status": []any{}},
		"body":          {"url": "http://example.com", "body": map[string]any{"c": make(chan int)}},
	}
	b := setup(t, nil)
	for name, params := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := b.run(t, httpReq(params))
			wantError(t, err, steps.CodeInvalidStep, false)
		})
	}
}

func TestHTTPTransportErrorIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": url}))
	wantError(t, err, steps.CodeHTTPError, true, "refused")
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	req := httpReq(map[string]any{"url": srv.URL})
	req.Timeout = 50 * time.Millisecond
	_, err := setup(t, loopbackAllowed).run(t, req)
	wantError(t, err, steps.CodeTimeout, true, "50ms")
}

func TestHTTPFollowsRedirects(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.URL.Path); n < 5 {
			http.Redirect(w, r, r.URL.Path+"a", http.StatusFound)
			return
		}
		fmt.Fprint(w, r.URL.Path+" "+r.Header.Get("Idempotency-Key"))
	})
	out, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL + "/"}))
	wantOutput(t, outputMap(t, out)["body"], err, `"/aaaa r1:call"`)
	if n := hits.Load(); n != 5 {
		t.Errorf("server got %d requests, want 5", n)
	}
}

func TestHTTPStopsAfterFiveRedirects(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	_, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL}))
	wantError(t, err, steps.CodeHTTPError, false, "5 redirects")
	if n := hits.Load(); n != 6 {
		t.Errorf("server got %d requests, want 6 (the first and 5 redirects)", n)
	}
}

func TestHTTPRefusesRedirectToOtherSchemes(t *testing.T) {
	t.Parallel()
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
	})
	_, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": srv.URL}))
	wantError(t, err, steps.CodeHTTPError, false, "ftp")
}

// The SSRF guard refuses in the dialer's Control hook, before connect(2):
// these tests send no traffic to the addresses they name.
func TestHTTPSSRFGuard(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(http.ResponseWriter, *http.Request) {})
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	tests := []struct {
		name, url, address string
	}{
		{"loopback", srv.URL, "127.0.0.1:" + port},
		{"localhost", "http://localhost:" + port, ":" + port},
		{"private", "http://10.0.0.1/", "10.0.0.1:80"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "169.254.169.254:80"},
		{"ipv6 loopback", "http://[::1]:" + port + "/", "[::1]:" + port},
		{"ipv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/", "127.0.0.1:" + port},
		{"ipv4-mapped metadata", "http://[::ffff:169.254.169.254]/", "169.254.169.254:80"},
		{"unspecified", "http://0.0.0.0:" + port + "/", "0.0.0.0:" + port},
		{"https private", "https://192.168.0.1/", "192.168.0.1:443"},
	}
	b := setup(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := b.run(t, httpReq(map[string]any{"url": tt.url}))
			wantError(t, err, steps.CodeSSRFBlocked, false, tt.address, "refusing")
		})
	}
	t.Cleanup(func() {
		if n := hits.Load(); n != 0 {
			t.Errorf("the loopback server got %d requests", n)
		}
	})
}

func TestHTTPSSRFGuardChecksRedirects(t *testing.T) {
	t.Parallel()
	target, targetHits := server(t, func(http.ResponseWriter, *http.Request) {})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
	})
	loopback2 := strings.Replace(target.URL, "127.0.0.1", "127.0.0.2", 1)
	tests := map[string]struct{ to, address string }{
		"metadata":      {"http://169.254.169.254/latest/meta-data/", "169.254.169.254:80"},
		"private":       {"http://10.1.2.3:8080/", "10.1.2.3:8080"},
		"loopback":      {loopback2, "127.0.0.2"},
		"ipv4-mapped":   {"http://[::ffff:10.0.0.1]/", "10.0.0.1:80"},
		"ipv6 loopback": {"http://[::1]/", "[::1]:80"},
	}
	b := setup(t, loopbackAllowed)
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := httpReq(map[string]any{"url": srv.URL + "/?to=" + tt.to, "method": "POST", "body": "x"})
			_, err := b.run(t, req)
			wantError(t, err, steps.CodeSSRFBlocked, false, tt.address)
		})
	}
	t.Cleanup(func() {
		if n := targetHits.Load(); n != 0 {
			t.Errorf("the redirect target got %d requests", n)
		}
	})
}

func TestHTTPAllowListIsExact(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hi") })
	_, err := setup(t, &setupOpts{allow: []string{"127.0.0.2/32"}}).run(t, httpReq(map[string]any{"url": srv.URL}))
	wantError(t, err, steps.CodeSSRFBlocked, false, "127.0.0.1")
	out, err := setup(t, &setupOpts{allow: []string{"127.0.0.0/8"}}).run(t, httpReq(map[string]any{"url": srv.URL}))
	wantOutput(t, outputMap(t, out)["body"], err, `"hi"`)
	if n := hits.Load(); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestHTTPIgnoresProxyEnvironment(t *testing.T) {
	// Not parallel: it sets the environment.
	proxy, proxyHits := server(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "proxied") })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	_, err := setup(t, loopbackAllowed).run(t, httpReq(map[string]any{"url": "http://10.9.8.7/"}))
	wantError(t, err, steps.CodeSSRFBlocked, false, "10.9.8.7")
	if n := proxyHits.Load(); n != 0 {
		t.Errorf("the proxy got %d requests", n)
	}
}

// A redirect to another host carries none of the step's own headers but a
// few harmless ones; one on the same host carries them all.
func TestHTTPRedirectToAnotherHostDropsHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 2)
	other, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		fmt.Fprint(w, "ok")
	})
	first, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/here" {
			got <- r.Header.Clone()
			return
		}
		http.Redirect(w, r, other.URL+"/there", http.StatusTemporaryRedirect)
	})
	headers := map[string]any{"X-Api-Key": "secret", "Authorization": "Bearer t", "Cookie": "c=1", "Accept": "application/json", "X-Custom": "v"}
	b := setup(t, loopbackAllowed)
	for _, c := range []struct {
		path string
		kept []string
		gone []string
	}{
		{"/away", []string{"Accept", "Content-Type", "User-Agent"}, []string{"X-Api-Key", "Authorization", "Cookie", "X-Custom", "Idempotency-Key", "Referer"}},
		{"/same", []string{"Accept", "X-Api-Key", "Authorization", "X-Custom", "Idempotency-Key"}, nil},
	} {
		_, err := b.run(t, httpReq(map[string]any{"url": first.URL + c.path, "method": "POST", "headers": headers, "body": map[string]any{"a": 1}}))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		h := <-got
		for _, name := range c.kept {
			if h.Get(name) == "" {
				t.Errorf("%s: header %s was dropped (%v)", c.path, name, h)
			}
		}
		for _, name := range c.gone {
			if v := h.Get(name); v != "" {
				t.Errorf("%s: header %s = %q reached the other host", c.path, name, v)
			}
		}
	}
}
