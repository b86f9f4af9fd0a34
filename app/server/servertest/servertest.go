// Package servertest holds the fixtures the server's tests share, on
// both sides: workers running on a test database, a secrets box, a
// browser that keeps cookies and signs in, and hostile documents. Only
// tests import it. It does not import package server, so that the
// assembly's own tests can use it too.
package servertest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/tenantsecrets"
	"github.com/ductor/ductor/workers"
)

// StartWorkers runs a coordinator with a River client working every queue
// on pool until the test ends.
func StartWorkers(t *testing.T, pool *pgxpool.Pool, log *slog.Logger, config func(*workers.Config)) *workers.Runtime {
	t.Helper()
	exec := steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{Allow: LoopbackAllow},
		steps.WithSecrets(tenantsecrets.New(tenantsecrets.Config{Store: store.New(pool), Box: TestBox(t)})))
	cfg := workers.Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles, Subscriptions: subscriptions.Config{Secrets: TestBox(t)}}
	if config != nil {
		config(&cfg)
	}
	coord, err := workers.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{Coordinator: true, Steps: true, Logger: log, Runtime: coord,
		Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	beatCtx, stopBeat := context.WithCancel(context.Background())
	beat := make(chan struct{})
	go func() { defer close(beat); workers.HeartbeatSteps(beatCtx, pool, log) }()
	t.Cleanup(func() {
		stopBeat()
		<-beat
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stopCtx)
	})
	return coord
}

// LoopbackAllow lets the test runtime's http steps reach servers on
// loopback (httptest), which the SSRF guard refuses otherwise.
var LoopbackAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// TestBox is a secrets box with a fixed test key.
func TestBox(t *testing.T) *secrets.Box {
	t.Helper()
	box, err := secrets.NewBox("test-secret-key-of-at-least-32-characters")
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// ClientFrom is an HTTP client whose connections come from a loopback
// address of its own (127.0.0.0/8 is all loopback), so a test can play
// several senders.
func ClientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}
}

// RunBatches works every running batch to its end, as the sweep does.
func RunBatches(t *testing.T, c *runs.Service) {
	t.Helper()
	for range 1000 {
		worked, err := c.Batches.Once(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			return
		}
	}
	t.Fatal("batches did not finish")
}

// AliasBomb is under 500 bytes and stands for a hundred thousand values.
func AliasBomb() string {
	bomb := "key: bomb\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = n
	}
	return bomb + "steps:\n  - {ref: s, type: task, with: {handler: builtin.noop, x: *e}}\n"
}

// Browser is an HTTP client with cookies that follows no redirects, so a
// test sees (and may tamper with) every step of a login.
type Browser struct {
	t      *testing.T
	client *http.Client
}

// NewBrowserClient is a Browser with an empty cookie jar.
func NewBrowserClient(t *testing.T) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{t: t, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Answer is what a Browser got back.
type Answer struct {
	Status   int
	Location string
	Body     string
	Header   http.Header
}

// Get fetches u.
func (br *Browser) Get(u string) Answer { return br.do("GET", u, nil, nil) }

// Post sends a form as a same-origin browser would, unless headers say
// otherwise.
func (br *Browser) Post(u string, form url.Values, headers map[string]string) Answer {
	h := map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range headers {
		h[k] = v
	}
	return br.do("POST", u, strings.NewReader(form.Encode()), h)
}

func (br *Browser) do(method, u string, body io.Reader, headers map[string]string) Answer {
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
	return Answer{Status: res.StatusCode, Location: res.Header.Get("Location"), Body: buf.String(), Header: res.Header}
}

// Cookie returns the browser's cookie for the server, or "".
func (br *Browser) Cookie(base, name string) string {
	u, _ := url.Parse(base)
	for _, c := range br.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// SignInTo gives the browser a session as the person and returns its
// CSRF token.
func SignInTo(t *testing.T, s *store.Store, base string, br *Browser, email string) string {
	t.Helper()
	ctx := context.Background()
	u, err := s.UserEnsure(ctx, email, "")
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.SessionCreate(ctx, u.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.SessionGet(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	bu, _ := url.Parse(base)
	br.client.Jar.SetCookies(bu, []*http.Cookie{{Name: httpx.SessionCookie, Value: token, Path: "/"}})
	return sess.CSRFToken
}

// WantNULProblems checks that an answer is a 422 with a NUL problem at
// each of paths.
func WantNULProblems(t *testing.T, what string, code int, details []any, paths []string) {
	t.Helper()
	if code != http.StatusUnprocessableEntity {
		t.Errorf("%s = %d, want 422", what, code)
		return
	}
	got := map[string]bool{}
	for _, d := range details {
		m, _ := d.(map[string]any)
		if p, _ := m["path"].(string); strings.Contains(m["message"].(string), "NUL") {
			got[p] = true
		}
	}
	for _, p := range paths {
		if !got[p] {
			t.Errorf("%s: no NUL problem at %s in %v", what, p, details)
		}
	}
}

// NULJSON holds a NUL in fields of every kind: the name, the
// description, a label, a step ref, an expression, a with-value, a
// trigger's event and a key.
const NULJSON = `{"key": "nul", "name": "n\u0000", "description": "d\u0000", "labels": {"team": "x\u0000"},
  "triggers": [{"event": "e\u0000"}],
  "steps": [{"ref": "a\u0000", "type": "transform", "with": {"expr": "'\u0000'"}},
            {"ref": "b", "type": "task", "with": {"handler": "builtin.noop", "q\u0000": 1}}]}`

// NULPaths are where NULJSON holds its NULs.
var NULPaths = []string{"name", "description", "labels.team", "triggers[0].event", "steps[0].ref", "steps[0].with.expr", "steps[1].with"}

// NULYAML holds a NUL in YAML escapes.
const NULYAML = "key: nul\nname: \"n\\0\"\nsteps:\n  - {ref: a, type: transform, with: {expr: \"'\\0'\"}}\n"

// Served is a server under test, with its store and pool.
type Served struct {
	Server *httptest.Server
	Store  *store.Store
	Pool   *pgxpool.Pool
}

// Do sends a request, with the API key when key is not empty, and
// returns the status and body.
func (b Served) Do(t *testing.T, method, path, key string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, b.Server.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, out
}
