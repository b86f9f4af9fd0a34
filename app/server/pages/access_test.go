package pages_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/server/servertest"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// twoTenants is tenant A (owner alice, viewer victor, editor walt, a key)
// and tenant B (owner bert), each person signed in in their own browser.
type twoTenants struct {
	webBundle
	a, b                store.Tenant
	keyA                store.APIKey
	runA                store.Run
	approvalA, caseA    uuid.UUID
	runApprovalA        uuid.UUID // decided from the run's page
	batchA              uuid.UUID
	subA, subDel, delA  uuid.UUID
	alice, victor, bert *servertest.Browser
	csrf                map[*servertest.Browser]string
}

const (
	alice  = "alice@a.example"
	victor = "victor@a.example"
	walt   = "walt@a.example"
	bert   = "bert@b.example"
)

func setupTwoTenants(t *testing.T) twoTenants {
	t.Helper()
	w := setupWeb(t, webOpts{})
	ctx := context.Background()
	f := twoTenants{webBundle: w, csrf: map[*servertest.Browser]string{}}
	f.a = testdb.Tenant(t, w.Store, nil)
	f.b = testdb.Tenant(t, w.Store, nil)
	f.keyA, _ = testdb.APIKey(t, w.Store, f.a, nil)
	f.runA = ordersRun(t, w, f.a)
	publishSpare(t, w, f.a)
	f.approvalA, f.caseA = runPagesFixture(t, w.Store, f.a, f.runA, alice)
	f.runApprovalA = runApprovalFixture(t, w.Store, f.a, f.runA, alice)
	f.batchA = batchFixture(t, w.Store, f.a)
	waitingNodeFixture(t, w.Store, f.a, f.runA)
	triggersFixture(t, w, f.a)
	secretFixture(t, w, f.a)
	f.subA, f.subDel, f.delA = subscriptionsFixture(t, w, f.a)
	for _, m := range []struct {
		tenant store.Tenant
		email  string
		role   auth.Role
	}{{f.a, alice, auth.RoleOwner}, {f.a, victor, auth.RoleViewer}, {f.a, walt, auth.RoleEditor}, {f.b, bert, auth.RoleOwner}} {
		if _, err := w.Store.MemberSet(ctx, m.tenant.ID, m.email, m.role); err != nil {
			t.Fatal(err)
		}
	}
	f.alice, f.victor, f.bert = servertest.NewBrowserClient(t), servertest.NewBrowserClient(t), servertest.NewBrowserClient(t)
	f.csrf[f.alice] = w.signIn(t, f.alice, alice)
	f.csrf[f.victor] = w.signIn(t, f.victor, victor)
	f.csrf[f.bert] = w.signIn(t, f.bert, bert)
	return f
}

// request sends a route's request as the browser, with its CSRF token.
func (f twoTenants) request(br *servertest.Browser, method, path string, form url.Values, headers map[string]string) servertest.Answer {
	if method == http.MethodGet {
		return br.Get(f.Server.URL + path)
	}
	body := url.Values{"csrf": {f.csrf[br]}}
	for k, v := range form {
		body[k] = v
	}
	return br.Post(f.Server.URL+path, body, headers)
}

// batchFixture gives the tenant a running bulk operation (over a run that
// does not exist; nothing works it here), which its owner may stop.
func batchFixture(t *testing.T, s *store.Store, tenant store.Tenant) uuid.UUID {
	t.Helper()
	b, err := s.BatchCreate(context.Background(), store.Batch{TenantID: tenant.ID, ID: uuid.New(), Action: store.BatchCancel, RunIDs: []uuid.UUID{uuid.New()}, Total: 1, Actor: "user:" + alice})
	if err != nil {
		t.Fatal(err)
	}
	return b.ID
}

// ordersDraft is tenant A's definition "orders", saved as a draft.
const ordersDraft = "key: orders\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\n"

var orders = map[string]string{"key": "orders"}

// ordersRun saves and publishes "orders" in the tenant and starts a run.
func ordersRun(t *testing.T, w webBundle, tenant store.Tenant) store.Run {
	t.Helper()
	ctx := context.Background()
	if _, err := w.Store.DefinitionDraftSave(ctx, tenant.ID, "orders", "", store.Draft{Source: ordersDraft, Format: "yaml"}); err != nil {
		t.Fatal(err)
	}
	c, err := definition.Compile([]byte(ordersDraft), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	pub := store.Publication{Manifest: c.Manifest, ManifestHash: c.Hash, Source: ordersDraft, SourceFormat: "yaml"}
	if _, _, err := w.Store.DefinitionPublish(ctx, tenant.ID, pub); err != nil {
		t.Fatal(err)
	}
	run, _, err := w.runs.Start(ctx, runs.Trigger{TenantID: tenant.ID, Definition: "orders", Input: map[string]any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// publishSpare publishes "spare" in the tenant: a definition for the
// routes that change a definition's versions (unpublish), so that they
// leave "orders" to the others.
func publishSpare(t *testing.T, w webBundle, tenant store.Tenant) {
	t.Helper()
	doc := strings.Replace(ordersDraft, "key: orders", "key: spare", 1)
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	pub := store.Publication{Manifest: c.Manifest, ManifestHash: c.Hash, Source: doc, SourceFormat: "yaml"}
	if _, _, err := w.Store.DefinitionPublish(context.Background(), tenant.ID, pub); err != nil {
		t.Fatal(err)
	}
}

// routeCase says how to call a dashboard route on tenant A's objects.
type routeCase struct {
	public bool              // outside any tenant: nothing to isolate
	signed bool              // called by other systems, cross-site by design, with a signature for credential
	params map[string]string // path parameters besides :tenant
	query  string            // ?query of the request, if any
	form   url.Values
}

// routeCases has a case for every dashboard route. A route added without
// one fails TestTenantIsolationCoversEveryRoute.
func (f twoTenants) routeCases() map[string]routeCase {
	runA := map[string]string{"id": f.runA.ID.String()}
	return map[string]routeCase{
		"GET /":                                {public: true},
		"GET /healthz":                         {public: true},
		"GET /readyz":                          {public: true},
		"GET /metrics":                         {public: true},
		"GET /static/*":                        {public: true},
		"GET /favicon.ico":                     {public: true},
		"GET /login":                           {public: true},
		"GET /login/oidc":                      {public: true},
		"GET /auth/callback":                   {public: true},
		"POST /login/dev":                      {public: true},
		"POST /logout":                         {public: true},
		"POST /hooks/:tenant/:id":              {public: true, signed: true},
		"GET /t/:tenant":                       {},
		"GET /t/:tenant/definitions":           {},
		"POST /t/:tenant/definitions":          {form: url.Values{"key": {"stolen"}}},
		"GET /t/:tenant/definitions/:key/edit": {params: orders},
		"GET /t/:tenant/definitions/:key/diff": {params: orders},
		"GET /t/:tenant/definitions/:key/versions/:n/upgrade":    {params: map[string]string{"key": "orders", "n": "1"}},
		"POST /t/:tenant/definitions/:key/versions/:n/upgrade":   {params: map[string]string{"key": "orders", "n": "1"}, form: url.Values{"version": {"1"}}},
		"GET /t/:tenant/definitions/:key/hints":                  {params: orders},
		"POST /t/:tenant/definitions/:key/check":                 {params: orders, form: url.Values{"document": {ordersDraft}}},
		"POST /t/:tenant/definitions/:key/draft":                 {params: orders, form: url.Values{"document": {ordersDraft + "name: stolen\n"}}},
		"POST /t/:tenant/definitions/:key/publish":               {params: orders, form: url.Values{"document": {ordersDraft}}},
		"POST /t/:tenant/definitions/:key/runs":                  {params: orders, form: url.Values{"input": {"{}"}}},
		"POST /t/:tenant/definitions/:key/test":                  {params: orders, form: url.Values{"document": {ordersDraft}, "tests": {"tests: []"}}},
		"POST /t/:tenant/definitions/:key/try":                   {params: orders, form: url.Values{"document": {ordersDraft}, "step": {"a"}, "sample": {"{}"}}},
		"GET /t/:tenant/definitions/:key/try/runs":               {params: orders},
		"GET /t/:tenant/definitions/:key/try/runs/:id":           {params: map[string]string{"key": "orders", "id": f.runA.ID.String()}},
		"POST /t/:tenant/definitions/:key/versions/:n/unpublish": {params: map[string]string{"key": "spare", "n": "1"}},
		"GET /t/:tenant/runs/:id":                                {params: map[string]string{"id": f.runA.ID.String()}},
		"GET /t/:tenant/runs/count":                              {query: "?definition=orders"},
		"GET /t/:tenant/runs/:id/live":                           {params: runA},
		"GET /t/:tenant/runs/:id/events":                         {params: runA},
		"POST /t/:tenant/runs/batch":                             {form: url.Values{"action": {"cancel"}, "run_id": {f.runA.ID.String()}}},
		"GET /t/:tenant/batches/:id":                             {params: map[string]string{"id": f.batchA.String()}},
		"GET /t/:tenant/batches/:id/progress":                    {params: map[string]string{"id": f.batchA.String()}},
		"POST /t/:tenant/batches/:id/stop":                       {params: map[string]string{"id": f.batchA.String()}},
		"GET /t/:tenant/runs/:id/json/:part":                     {params: map[string]string{"id": f.runA.ID.String(), "part": "input"}},
		"GET /t/:tenant/runs/:id/json/nodes/:node":               {params: map[string]string{"id": f.runA.ID.String(), "node": "a"}},
		"GET /t/:tenant/runs/:id/json/nodes/:node/attempts/:generation/:attempt": {
			params: map[string]string{"id": f.runA.ID.String(), "node": "a", "generation": "0", "attempt": "1"}},
		"GET /t/:tenant/runs/:id/json/signals":          {params: runA, query: "?request_id=sig-a"},
		"GET /t/:tenant/inbox/cases/:id/data":           {params: map[string]string{"id": f.caseA.String()}},
		"POST /t/:tenant/runs/:id/cancel":               {params: runA, form: url.Values{"reason": {"stolen"}}},
		"POST /t/:tenant/runs/:id/signal":               {params: runA, form: url.Values{"name": {"stolen"}}},
		"POST /t/:tenant/runs/:id/continue-as-new":      {params: runA},
		"POST /t/:tenant/runs/:id/retry":                {params: runA, form: url.Values{"node": {"a"}}},
		"POST /t/:tenant/runs/:id/retry-children":       {params: runA, form: url.Values{"node": {"a"}}},
		"POST /t/:tenant/runs/:id/cancel-node":          {params: runA, form: url.Values{"node": {"hold"}}},
		"POST /t/:tenant/runs/:id/approvals/:approval":  {params: map[string]string{"id": f.runA.ID.String(), "approval": f.runApprovalA.String()}, form: url.Values{"decision": {"approve"}}},
		"GET /t/:tenant/runs":                           {},
		"GET /t/:tenant/inbox":                          {},
		"POST /t/:tenant/inbox/approvals/:id":           {params: map[string]string{"id": f.approvalA.String()}, form: url.Values{"decision": {"approve"}}},
		"POST /t/:tenant/inbox/cases/:id":               {params: map[string]string{"id": f.caseA.String()}, form: url.Values{"status": {"done"}}},
		"GET /t/:tenant/settings":                       {},
		"POST /t/:tenant/settings/tier":                 {form: url.Values{"tier": {"bulk"}}},
		"POST /t/:tenant/settings/retention":            {form: url.Values{"retention": {"1d"}}},
		"GET /t/:tenant/settings/keys":                  {},
		"POST /t/:tenant/settings/keys":                 {form: url.Values{"name": {"stolen"}, "scope": {"admin"}}},
		"POST /t/:tenant/settings/keys/:id/revoke":      {params: map[string]string{"id": f.keyA.ID.String()}},
		"GET /t/:tenant/settings/members":               {},
		"POST /t/:tenant/settings/members":              {form: url.Values{"email": {"mallory@b.example"}, "role": {"owner"}}},
		"POST /t/:tenant/settings/members/role":         {form: url.Values{"email": {victor}, "role": {"admin"}}},
		"POST /t/:tenant/settings/members/remove":       {form: url.Values{"email": {walt}}},
		"GET /t/:tenant/settings/audit":                 {},
		"GET /t/:tenant/settings/secrets":               {},
		"POST /t/:tenant/settings/secrets":              {form: url.Values{"name": {"STOLEN"}, "value": {"v"}}},
		"POST /t/:tenant/settings/secrets/:name/delete": {params: map[string]string{"name": secretFixtureName}},
		"GET /t/:tenant/schedules":                      {},
		"POST /t/:tenant/schedules":                     {form: url.Values{"id": {"stolen"}, "definition": {"orders"}, "interval": {"1h"}}},
		"GET /t/:tenant/schedules/:id":                  {params: map[string]string{"id": "sched-a"}},
		"POST /t/:tenant/schedules/:id/pause":           {params: map[string]string{"id": "sched-a"}, form: url.Values{"paused": {"true"}}},
		"POST /t/:tenant/schedules/:id/trigger":         {params: map[string]string{"id": "sched-a"}},
		"POST /t/:tenant/schedules/:id/delete":          {params: map[string]string{"id": "sched-del"}},
		"GET /t/:tenant/webhooks":                       {},
		"GET /t/:tenant/webhooks/:id":                   {params: map[string]string{"id": "hook-a"}},
		"POST /t/:tenant/webhooks":                      {form: url.Values{"id": {"stolen"}, "event": {"x"}}},
		"POST /t/:tenant/webhooks/:id/rotate":           {params: map[string]string{"id": "hook-a"}},
		"POST /t/:tenant/webhooks/:id/delete":           {params: map[string]string{"id": "hook-del"}},
		"GET /t/:tenant/subscriptions":                  {},
		"POST /t/:tenant/subscriptions":                 {form: url.Values{"url": {"https://stolen.example"}, "events": {"x"}}},
		"GET /t/:tenant/subscriptions/:id":              {params: map[string]string{"id": f.subA.String()}},
		"POST /t/:tenant/subscriptions/:id/rotate":      {params: map[string]string{"id": f.subA.String()}},
		"POST /t/:tenant/subscriptions/:id/enable":      {params: map[string]string{"id": f.subA.String()}},
		"POST /t/:tenant/subscriptions/:id/delete":      {params: map[string]string{"id": f.subDel.String()}},
		"POST /t/:tenant/subscriptions/:id/deliveries/:delivery/redeliver": {
			params: map[string]string{"id": f.subA.String(), "delivery": f.delA.String()}},
		"GET /t/:tenant/usage": {},
	}
}

// dashboardRoutes lists the registered routes outside the API.
func (f twoTenants) dashboardRoutes() []*echo.Route {
	var out []*echo.Route
	for _, r := range f.app.Routes() {
		if r.Method == echo.RouteNotFound || strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y *echo.Route) int { return strings.Compare(x.Path+x.Method, y.Path+y.Method) })
	return out
}

func (f twoTenants) pathFor(r *echo.Route, tenant string, c routeCase) string {
	p := strings.Replace(r.Path, ":tenant", tenant, 1)
	for k, v := range c.params {
		p = strings.Replace(p, ":"+k, v, 1)
	}
	return p + c.query
}

// Tenant B's owner gets 404 and none of A's data on every tenant route
// with A's slug and A's object ids, and changes nothing; A's owner, on the
// same requests, does not get 404 (so each case really names A's objects).
func TestTenantIsolationCoversEveryRoute(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	cases := f.routeCases()
	var tenantRoutes []*echo.Route
	for _, r := range f.dashboardRoutes() {
		c, ok := cases[r.Method+" "+r.Path]
		switch {
		case !ok:
			t.Errorf("route %s %s has no case in routeCases: add one", r.Method, r.Path)
		case !c.public:
			tenantRoutes = append(tenantRoutes, r)
		}
	}
	for _, r := range tenantRoutes {
		c := cases[r.Method+" "+r.Path]
		a := f.request(f.bert, r.Method, f.pathFor(r, f.a.Slug, c), c.form, nil)
		if a.Status != http.StatusNotFound {
			t.Errorf("B's owner: %s %s = %d, want 404", r.Method, r.Path, a.Status)
		}
		for _, secret := range []string{alice, victor, walt, f.keyA.Prefix, f.a.ID.String()} {
			if strings.Contains(a.Body, secret) {
				t.Errorf("B's owner: %s %s shows A's %q", r.Method, r.Path, secret)
			}
		}
	}
	f.assertTenantAUntouched(t)
	for _, r := range tenantRoutes {
		c := cases[r.Method+" "+r.Path]
		if a := f.request(f.alice, r.Method, f.pathFor(r, f.a.Slug, c), c.form, nil); a.Status >= 400 {
			t.Errorf("A's owner: %s %s = %d: the case does not name A's objects: %s", r.Method, r.Path, a.Status, a.Body)
		}
	}
}

func (f twoTenants) assertTenantAUntouched(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	keys, _ := f.Store.APIKeyList(ctx, f.a.ID)
	members, _ := f.Store.MemberList(ctx, f.a.ID)
	tenant, _ := f.Store.TenantGetByID(ctx, f.a.ID)
	audit, _ := f.Store.AuditList(ctx, f.a.ID, 10)
	if len(keys) != 1 || keys[0].RevokedAt != nil || len(members) != 3 || tenant.Tier != f.a.Tier || len(audit) != 0 {
		t.Errorf("tenant A changed: keys %+v, members %+v, tier %s, audit %+v", keys, members, tenant.Tier, audit)
	}
	defs, _ := f.Store.DefinitionList(ctx, f.a.ID, "", 10)
	runs, _ := f.Store.RunList(ctx, f.a.ID, store.RunFilter{Limit: 10})
	changed := len(defs) != 2 || len(runs) != 1
	for _, d := range defs {
		changed = changed || d.LatestVersion != 1 || d.PublishedVersion != 1 || d.Name != "" || (d.Key != "orders" && d.Key != "spare")
	}
	if changed {
		t.Errorf("tenant A's definitions or runs changed: %+v, %d runs", defs, len(runs))
	}
}

// Every state-changing dashboard route refuses a cross-site request, and
// one without the session's token, even from A's own owner.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	cases := f.routeCases()
	refusals := []struct {
		name    string
		headers map[string]string
		token   string
	}{
		{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, f.csrf[f.alice]},
		{"same-site", map[string]string{"Sec-Fetch-Site": "same-site"}, f.csrf[f.alice]},
		{"foreign origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}, f.csrf[f.alice]},
		{"no token", nil, ""},
		{"another session's token", nil, f.csrf[f.bert]},
	}
	for _, r := range f.dashboardRoutes() {
		if httpx.IsSafeMethod(r.Method) {
			continue
		}
		c := cases[r.Method+" "+r.Path]
		if c.signed {
			continue
		}
		for _, x := range refusals {
			form := url.Values{"csrf": {x.token}}
			for k, v := range c.form {
				form[k] = v
			}
			a := f.alice.Post(f.Server.URL+f.pathFor(r, f.a.Slug, c), form, x.headers)
			if a.Status != http.StatusForbidden {
				t.Errorf("%s %s %s = %d, want 403", x.name, r.Method, r.Path, a.Status)
			}
		}
	}
	f.assertTenantAUntouched(t)
	if f.sessions(t) != 3 {
		t.Errorf("a refused logout ended a session")
	}
}

func TestViewerCannotManageKeys(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug
	if a := f.request(f.victor, "POST", base+"/settings/keys", url.Values{"name": {"x"}, "scope": {"admin"}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer creating a key = %d, want 403", a.Status)
	}
	if a := f.request(f.victor, "POST", base+"/settings/keys/"+f.keyA.ID.String()+"/revoke", nil, nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer revoking a key = %d, want 403", a.Status)
	}
	if a := f.request(f.victor, "GET", base+"/settings/keys", nil, nil); a.Status != http.StatusForbidden {
		t.Errorf("viewer listing keys = %d, want 403", a.Status)
	}
	a := f.request(f.victor, "GET", base+"/settings", nil, nil)
	if a.Status != http.StatusOK || strings.Contains(a.Body, "/settings/keys") {
		t.Errorf("viewer's settings page = %d, offers keys: %v", a.Status, strings.Contains(a.Body, "/settings/keys"))
	}
	f.assertTenantAUntouched(t)
}

// Every route a server registers is in one table: the API's in
// openapi.json, every other in routeCases (which the isolation and
// cross-site tests walk).
func TestEveryRouteIsInARouteTable(t *testing.T) {
	t.Parallel()
	srv := server.New(server.Deps{API: true, Web: true, Logger: slog.New(slog.DiscardHandler)})
	cases := twoTenants{}.routeCases()
	n := 0
	for _, r := range srv.Routes() {
		if r.Method == echo.RouteNotFound {
			continue
		}
		n++
		key := r.Method + " " + r.Path
		if strings.HasPrefix(r.Path, "/api/v1/") {
			continue // TestOpenAPIMatchesTheRoutes holds them to the document
		}
		if _, ok := cases[key]; !ok {
			t.Errorf("route %s has no case in routeCases: add one", key)
		}
	}
	if n < 100 {
		t.Fatalf("found only %d routes", n)
	}
}
