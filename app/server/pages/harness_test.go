// The dashboard's test harness: webBundle is a dashboard on a fresh
// schema with an OIDC provider and runs that are queued, never worked
// (login, sessions, isolation); dashBundle is the dashboard with running
// workers and a tenant's members signed in (the run, inbox and trigger
// pages). Both serve the whole server (server.New) and drive it through
// servertest.Browser.

package pages_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// webBundle is a dashboard on a fresh schema, with an in-process OIDC
// provider whose misbehaviour the test can switch on.
type webBundle struct {
	servertest.Served
	app  *server.Server
	oidc *mockoidc.MockOIDC
	runs *runs.Service // starts runs; no worker ticks them
	subs *subscriptions.Service
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
	rt, err := workers.New(workers.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler),
		Subscriptions: subscriptions.Config{Secrets: servertest.TestBox(t)}})
	if err != nil {
		t.Fatal(err) // jobs are queued, never worked
	}
	t.Cleanup(rt.Close)
	b.runs, b.subs = rt.Runs, rt.Subscriptions
	b.oidc = startProvider(t, b, o.endSession)
	lp, err := login.New(context.Background(), login.Config{
		Issuer: b.oidc.Issuer(), ClientID: b.oidc.ClientID, ClientSecret: b.oidc.ClientSecret,
		RedirectURL: "http://" + ln.Addr().String() + "/auth/callback",
	})
	if err != nil {
		t.Fatal(err)
	}
	b.app = server.New(server.Deps{
		Pool: pool, Store: s, API: true, Web: true, Login: lp, DevLogin: o.devLogin, Runs: b.runs, Secrets: servertest.TestBox(t),
		Subscriptions: b.subs, Logger: slog.New(slog.DiscardHandler), LiveStreamFor: time.Second,
	})
	srv := httptest.NewUnstartedServer(b.app)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	b.Served = servertest.Served{Server: srv, Store: s, Pool: pool}
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

// signIn gives the browser a session as the person, without OIDC, and
// returns the session's CSRF token.
func (b webBundle) signIn(t *testing.T, br *servertest.Browser, email string) string {
	t.Helper()
	return servertest.SignInTo(t, b.Store, b.Server.URL, br, email)
}

// sessions counts the live sessions in the schema.
func (b webBundle) sessions(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.Pool.QueryRow(context.Background(), "SELECT count(*) FROM web_session").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dashBundle is the dashboard with running workers: a tenant with an
// owner, a viewer and two approvers, each signed in.
type dashBundle struct {
	srvURL string
	store  *store.Store
	runs   *runs.Service
	tenant store.Tenant
	base   string // /t/{slug}
	key    string // an admin API key of the tenant, made on first use

	owner, viewer, approver, approver2 *servertest.Browser
	csrf                               map[*servertest.Browser]string
}

const (
	dOwner     = "olga@t.example"
	dViewer    = "vera@t.example"
	dApprover  = "abe@t.example"
	dApprover2 = "ada@t.example"
)

func setupDashboard(t *testing.T) *dashBundle {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	coord := servertest.StartWorkers(t, pool, log, nil).Runs
	s := store.New(pool)
	srv := httptest.NewServer(server.New(server.Deps{Pool: pool, Store: s, Logger: log, API: true, Web: true, Runs: coord, ValidateInput: httpx.NewInputValidator()}))
	t.Cleanup(srv.Close)
	b := &dashBundle{srvURL: srv.URL, store: s, runs: coord, tenant: testdb.Tenant(t, s, nil), csrf: map[*servertest.Browser]string{}}
	b.base = "/t/" + b.tenant.Slug
	for _, m := range []struct {
		br    **servertest.Browser
		email string
		role  auth.Role
	}{{&b.owner, dOwner, auth.RoleOwner}, {&b.viewer, dViewer, auth.RoleViewer}, {&b.approver, dApprover, auth.RoleApprover}, {&b.approver2, dApprover2, auth.RoleApprover}} {
		if _, err := s.MemberSet(context.Background(), b.tenant.ID, m.email, m.role); err != nil {
			t.Fatal(err)
		}
		*m.br = servertest.NewBrowserClient(t)
		b.csrf[*m.br] = servertest.SignInTo(t, s, srv.URL, *m.br, m.email)
	}
	return b
}

func (b *dashBundle) publish(t *testing.T, doc string) {
	t.Helper()
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	pub := store.Publication{Manifest: c.Manifest, ManifestHash: c.Hash, Source: doc, SourceFormat: "yaml"}
	if _, _, err := b.store.DefinitionPublish(context.Background(), b.tenant.ID, pub); err != nil {
		t.Fatal(err)
	}
}

func (b *dashBundle) start(t *testing.T, tr runs.Trigger) uuid.UUID {
	t.Helper()
	tr.TenantID = b.tenant.ID
	run, _, err := b.runs.Start(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// waitRun polls the run until ok holds for it.
func (b *dashBundle) waitRun(t *testing.T, id uuid.UUID, what string, ok func(store.Run) bool) store.Run {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "run "+id.String()+": "+what, func() (store.Run, bool) {
		r, err := b.store.RunGet(context.Background(), b.tenant.ID, id)
		return r, err == nil && ok(r)
	})
}

func (b *dashBundle) waitStatus(t *testing.T, id uuid.UUID, st engine.RunStatus) store.Run {
	t.Helper()
	return b.waitRun(t, id, string(st), func(r store.Run) bool { return r.Status == st })
}

// waitNode polls until the run's step node is in state.
func (b *dashBundle) waitNode(t *testing.T, id uuid.UUID, ref string, st engine.NodeState) *engine.Node {
	t.Helper()
	return b.waitNodeWhere(t, id, ref, string(st), func(n *engine.Node) bool { return n.State == st })
}

// waitNodeWhere polls until the run's node (a step or a child) is as ok
// says.
func (b *dashBundle) waitNodeWhere(t *testing.T, id uuid.UUID, node, what string, ok func(*engine.Node) bool) *engine.Node {
	t.Helper()
	return testwait.Value(t, 20*time.Second, "run "+id.String()+": node "+node+" has "+what, func() (*engine.Node, bool) {
		nodes, err := b.store.RunNodesByName(context.Background(), b.tenant.ID, id, []string{node})
		if err == nil && len(nodes) == 1 && ok(nodes[0]) {
			return nodes[0], true
		}
		return nil, false
	})
}

func (b *dashBundle) get(br *servertest.Browser, path string) servertest.Answer {
	return br.Get(b.srvURL + b.base + path)
}

// post sends a form with the browser's CSRF token.
func (b *dashBundle) post(br *servertest.Browser, path string, form url.Values) servertest.Answer {
	body := url.Values{"csrf": {b.csrf[br]}}
	for k, v := range form {
		body[k] = v
	}
	return br.Post(b.srvURL+b.base+path, body, nil)
}

// wantPage fails unless the answer has the status and every snippet.
func wantPage(t *testing.T, what string, a servertest.Answer, status int, snippets ...string) {
	t.Helper()
	if a.Status != status {
		t.Fatalf("%s = %d, want %d: %.400s", what, a.Status, status, a.Body)
	}
	for _, s := range snippets {
		if !strings.Contains(a.Body, s) {
			t.Errorf("%s: page lacks %q", what, s)
		}
	}
}

// wantRedirect fails unless the answer is a 303 to a path containing to.
func wantRedirect(t *testing.T, what string, a servertest.Answer, to string) {
	t.Helper()
	if a.Status != 303 || !strings.Contains(a.Location, to) {
		t.Fatalf("%s = %d to %q, want 303 to …%s: %.400s", what, a.Status, a.Location, to, a.Body)
	}
}

// runPagesFixture gives a run what the run and inbox pages act on: a
// failed node "a" to retry, and an approval and a case addressed to the
// person.
func runPagesFixture(t *testing.T, s *store.Store, tenant store.Tenant, run store.Run, email string) (approval, kase uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	failed := &engine.Node{ID: "a", Ref: "a", State: engine.NodeFailed, Attempt: 1, Error: &engine.Error{Code: "task_failed"}}
	if err := s.RunNodesUpsert(ctx, tenant.ID, run.ID, []*engine.Node{failed}); err != nil {
		t.Fatal(err)
	}
	// An attempt of a with an output, and a signal with a payload, to
	// download.
	if _, err := s.DB().Exec(ctx, `INSERT INTO run_attempt (tenant_id, run_id, node, generation, attempt, started_at, finished_at, output)
		VALUES ($1, $2, 'a', 0, 1, now(), now(), '{"secret": "attempt output"}')`, tenant.ID, run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignalAdd(ctx, tenant.ID, run.ID, run.ID, engine.Signal{RequestID: "sig-a", Name: "go", Payload: map[string]any{"secret": "payload"}}); err != nil {
		t.Fatal(err)
	}
	approval, kase = store.ApprovalID(run.ID.String()+":a"), store.CaseID(run.ID.String()+":a")
	if err := s.ApprovalOpen(ctx, store.Approval{TenantID: tenant.ID, ID: approval, RunID: run.ID, Node: "a",
		Title: "secret approval", Approvers: []string{email}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CaseCreate(ctx, store.Case{TenantID: tenant.ID, ID: kase, RunID: run.ID, Node: "a", Title: "secret case",
		Assignees: []string{email}, Fields: map[string]any{"type": "object"}, AwaitingStatus: "done"}); err != nil {
		t.Fatal(err)
	}
	return approval, kase
}

// prettyOutput is the run's output as compact JSON.
func prettyOutput(r store.Run) string {
	b, _ := json.Marshal(r.State.Output)
	return string(b)
}
