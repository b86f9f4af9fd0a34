package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// dashBundle is the dashboard with running workers: a tenant with an
// owner, a viewer and two approvers, each signed in.
type dashBundle struct {
	srvURL string
	store  *store.Store
	runs   *workers.Coordinator
	tenant store.Tenant
	base   string // /t/{slug}
	key    string // an admin API key of the tenant, made on first use

	owner, viewer, approver, approver2 *browser
	csrf                               map[*browser]string
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
	coord := startWorkers(t, pool, log)
	s := store.New(pool)
	srv := httptest.NewServer(New(Deps{Pool: pool, Store: s, Logger: log, API: true, Web: true, Runs: coord, ValidateInput: NewInputValidator()}))
	t.Cleanup(srv.Close)
	b := &dashBundle{srvURL: srv.URL, store: s, runs: coord, tenant: testdb.Tenant(t, s, nil), csrf: map[*browser]string{}}
	b.base = "/t/" + b.tenant.Slug
	for _, m := range []struct {
		br    **browser
		email string
		role  auth.Role
	}{{&b.owner, dOwner, auth.RoleOwner}, {&b.viewer, dViewer, auth.RoleViewer}, {&b.approver, dApprover, auth.RoleApprover}, {&b.approver2, dApprover2, auth.RoleApprover}} {
		if _, err := s.MemberSet(context.Background(), b.tenant.ID, m.email, m.role); err != nil {
			t.Fatal(err)
		}
		*m.br = newBrowserClient(t)
		b.csrf[*m.br] = signInTo(t, s, srv.URL, *m.br, m.email)
	}
	return b
}

// signInTo gives the browser a session as the person and returns its
// CSRF token.
func signInTo(t *testing.T, s *store.Store, base string, br *browser, email string) string {
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
	br.client.Jar.SetCookies(bu, []*http.Cookie{{Name: sessionCookie, Value: token, Path: "/"}})
	return sess.CSRFToken
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

func (b *dashBundle) start(t *testing.T, tr workers.Trigger) uuid.UUID {
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

func (b *dashBundle) get(br *browser, path string) answer { return br.get(b.srvURL + b.base + path) }

// post sends a form with the browser's CSRF token.
func (b *dashBundle) post(br *browser, path string, form url.Values) answer {
	body := url.Values{"csrf": {b.csrf[br]}}
	for k, v := range form {
		body[k] = v
	}
	return br.post(b.srvURL+b.base+path, body, nil)
}

// wantPage fails unless the answer has the status and every snippet.
func wantPage(t *testing.T, what string, a answer, status int, snippets ...string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s = %d, want %d: %.400s", what, a.status, status, a.body)
	}
	for _, s := range snippets {
		if !strings.Contains(a.body, s) {
			t.Errorf("%s: page lacks %q", what, s)
		}
	}
}

// wantRedirect fails unless the answer is a 303 to a path containing to.
func wantRedirect(t *testing.T, what string, a answer, to string) {
	t.Helper()
	if a.status != 303 || !strings.Contains(a.location, to) {
		t.Fatalf("%s = %d to %q, want 303 to …%s: %.400s", what, a.status, a.location, to, a.body)
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
