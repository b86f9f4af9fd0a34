package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// webBundle is a dashboard on a fresh schema, with an in-process OIDC
// provider whose misbehaviour the test can switch on.
type webBundle struct {
	testBundle
	app  *Server
	oidc *mockoidc.MockOIDC
	runs *workers.Coordinator // starts runs; no worker ticks them
	// forgeNonce makes the provider put another nonce in the ID token;
	// dropVerifier removes the PKCE verifier from the token request.
	forgeNonce, dropVerifier *atomic.Bool
}

type webOpts struct {
	devLogin   bool
	endSession bool // the provider advertises RP-initiated logout
}

func setupWeb(t *testing.T, o webOpts) webBundle {
	t.Helper()
	pool := testdb.Schema(t)
	s := store.New(pool)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := webBundle{forgeNonce: &atomic.Bool{}, dropVerifier: &atomic.Bool{}}
	if b.runs, err = workers.NewCoordinator(pool, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.runs.Close)
	if _, err = workers.NewClient(pool, workers.Options{C: b.runs, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err) // insert-only: jobs are queued, never worked
	}
	b.oidc = startProvider(t, b, o.endSession)
	lp, err := login.New(context.Background(), login.Config{
		Issuer: b.oidc.Issuer(), ClientID: b.oidc.ClientID, ClientSecret: b.oidc.ClientSecret,
		RedirectURL: "http://" + ln.Addr().String() + "/auth/callback",
	})
	if err != nil {
		t.Fatal(err)
	}
	b.app = New(Deps{
		Pool: pool, Store: s, API: true, Web: true, Login: lp, DevLogin: o.devLogin, Runs: b.runs, Secrets: testBox(t),
		Logger: slog.New(slog.DiscardHandler), LiveStreamFor: time.Second,
	})
	srv := httptest.NewUnstartedServer(b.app)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	b.testBundle = testBundle{srv: srv, store: s, pool: pool}
	return b
}

func startProvider(t *testing.T, b webBundle, endSession bool) *mockoidc.MockOIDC {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			misbehave(b, r)
			if endSession && r.URL.Path == mockoidc.DiscoveryEndpoint {
				withEndSession(w, r, next, m)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return m
}

func misbehave(b webBundle, r *http.Request) {
	switch {
	case r.URL.Path == mockoidc.AuthorizationEndpoint && b.forgeNonce.Load():
		q := r.URL.Query()
		q.Set("nonce", "forged-nonce")
		r.URL.RawQuery = q.Encode()
	case r.URL.Path == mockoidc.TokenEndpoint && b.dropVerifier.Load():
		_ = r.ParseForm()
		r.Form.Del("code_verifier")
		r.PostForm.Del("code_verifier")
	}
}

func withEndSession(w http.ResponseWriter, r *http.Request, next http.Handler, m *mockoidc.MockOIDC) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	var doc map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &doc)
	doc["end_session_endpoint"] = m.Addr() + "/oidc/logout"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// browser is an HTTP client with cookies that follows no redirects, so a
// test sees (and may tamper with) every step of a login.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowserClient(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type answer struct {
	status   int
	location string
	body     string
	header   http.Header
}

func (br *browser) get(u string) answer { return br.do("GET", u, nil, nil) }

// post sends a form as a same-origin browser would, unless headers say
// otherwise.
func (br *browser) post(u string, form url.Values, headers map[string]string) answer {
	h := map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range headers {
		h[k] = v
	}
	return br.do("POST", u, strings.NewReader(form.Encode()), h)
}

func (br *browser) do(method, u string, body io.Reader, headers map[string]string) answer {
	br.t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		br.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := br.client.Do(req)
	if err != nil {
		br.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return answer{status: res.StatusCode, location: res.Header.Get("Location"), body: buf.String(), header: res.Header}
}

// cookie returns the browser's cookie for the server, or "".
func (br *browser) cookie(base, name string) string {
	u, _ := url.Parse(base)
	for _, c := range br.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// signIn gives the browser a session as the person, without OIDC, and
// returns the session's CSRF token.
func (b webBundle) signIn(t *testing.T, br *browser, email string) string {
	t.Helper()
	ctx := context.Background()
	u, err := b.store.UserEnsure(ctx, email, "")
	if err != nil {
		t.Fatal(err)
	}
	token, err := b.store.SessionCreate(ctx, u.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := b.store.SessionGet(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(b.srv.URL)
	br.client.Jar.SetCookies(base, []*http.Cookie{{Name: sessionCookie, Value: token, Path: "/"}})
	return sess.CSRFToken
}

// sessions counts the live sessions in the schema.
func (b webBundle) sessions(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), "SELECT count(*) FROM web_session").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
