package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"

	"github.com/ductor/ductor/app/server/servertest"
	"github.com/ductor/ductor/app/store"
)

// An owner sets and rotates a secret on the settings page, which shows
// its metadata and never its value; a viewer sees the list and cannot
// change it; deleting it from the page removes it.
func TestSecretsSettingsPage(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	base := "/t/" + f.a.Slug + "/settings/secrets"
	const value = "dashboard-set-secret-value"
	for i, v := range []string{value, value + "-2"} {
		a := f.request(f.alice, "POST", base, url.Values{"name": {"CHAT_TOKEN"}, "value": {v}, "description": {"the chat API"}}, nil)
		if a.Status != http.StatusSeeOther || a.Location != base+"?saved=CHAT_TOKEN" {
			t.Fatalf("set %d = %d to %q", i, a.Status, a.Location)
		}
	}
	page := f.request(f.alice, "GET", base+"?saved=CHAT_TOKEN", nil, nil)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `data-secret="CHAT_TOKEN"`) || !strings.Contains(page.Body, "the chat API") || strings.Contains(page.Body, value) {
		t.Fatalf("the page = %d: %s", page.Status, page.Body)
	}
	if s, err := f.Store.SecretGet(context.Background(), f.a.ID, "CHAT_TOKEN"); err != nil || s.Version != 2 {
		t.Fatalf("stored = %+v, %v", s, err)
	}
	bad := f.request(f.alice, "POST", base, url.Values{"name": {"no-dash"}, "value": {value}}, nil)
	if bad.Status != http.StatusBadRequest || strings.Contains(bad.Body, value) || !strings.Contains(bad.Body, "must match") {
		t.Errorf("a bad name = %d: %s", bad.Status, bad.Body)
	}
	viewer := f.request(f.victor, "GET", base, nil, nil)
	if viewer.Status != http.StatusOK || !strings.Contains(viewer.Body, "CHAT_TOKEN") || strings.Contains(viewer.Body, `id="set-secret"`) {
		t.Errorf("the viewer's page = %d", viewer.Status)
	}
	if a := f.request(f.victor, "POST", base, url.Values{"name": {"X"}, "value": {"v"}}, nil); a.Status != http.StatusForbidden {
		t.Errorf("a viewer set a secret: %d", a.Status)
	}
	if other := f.request(f.bert, "GET", "/t/"+f.b.Slug+"/settings/secrets", nil, nil); strings.Contains(other.Body, `data-secret="CHAT_TOKEN"`) {
		t.Errorf("another tenant sees the secret")
	}
	if a := f.request(f.alice, "POST", base+"/CHAT_TOKEN/delete", nil, nil); a.Status != http.StatusSeeOther {
		t.Fatalf("delete = %d", a.Status)
	}
	if _, err := f.Store.SecretGet(context.Background(), f.a.ID, "CHAT_TOKEN"); err == nil {
		t.Errorf("the secret is still there")
	}
}

// secretFixtureName is the secret secretFixture sets.
const secretFixtureName = "FIXTURE_SECRET"

// secretFixture stores a secret in the tenant (through the store: no
// audit row, which the isolation test counts).
func secretFixture(t *testing.T, w webBundle, tenant store.Tenant) {
	t.Helper()
	sealed := servertest.TestBox(t).Seal([]byte("fixture-value"), store.TenantSecretAAD(tenant.ID, secretFixtureName))
	if _, err := w.Store.SecretPut(context.Background(), tenant.ID, secretFixtureName, "", sealed, "cli"); err != nil {
		t.Fatal(err)
	}
}

// A run whose http step sends a secret, and whose far end echoes it back,
// shows the value nowhere on its run page or its node's panel: the
// recorded response shows *** in its place.
func TestRunPageNeverShowsASecret(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error": "bad header: ` + r.Header.Get("Authorization") + `"}`))
	}))
	t.Cleanup(far.Close)
	const value = "run-page-secret-value-42"
	sealed := servertest.TestBox(t).Seal([]byte(value), store.TenantSecretAAD(b.tenant.ID, "API_TOKEN"))
	if _, err := b.store.SecretPut(context.Background(), b.tenant.ID, "API_TOKEN", "", sealed, "cli"); err != nil {
		t.Fatal(err)
	}
	b.publish(t, `
key: leaky
steps:
  - {ref: call, type: http, retry: {max_attempts: 1}, with: {url: "`+far.URL+`/x", auth: {bearer: API_TOKEN}}}
`)
	id := b.start(t, runs.Trigger{Definition: "leaky"})
	b.waitStatus(t, id, engine.RunFailed)
	for _, p := range []string{"/runs/" + id.String(), "/runs/" + id.String() + "/nodes/call"} {
		a := b.get(b.owner, p)
		if strings.Contains(a.Body, value) {
			t.Errorf("%s shows the value", p)
		}
	}
	var out string
	if err := b.store.DB().QueryRow(context.Background(), `SELECT output::text FROM run_attempt WHERE run_id = $1`, id).Scan(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "bad header: Bearer ***") {
		t.Errorf("the attempt's recorded response = %s", out)
	}
}

// The editor's test run of a definition whose http step sends a secret,
// to a far end that echoes the request back, shows the value on none of
// the pages and JSON downloads it leads to: the answer to the form, the
// editor, the run page and its live fragment, the run's input and output,
// the node and its attempt.
func TestEditorTestRunNeverShowsASecret(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"auth": r.Header.Get("Authorization"), "key": r.Header.Get("X-Api-Key"), "query": r.URL.RawQuery, "body": string(body)})
	}))
	t.Cleanup(far.Close)
	const value = "editor-test-run-secret-7f3a"
	sealed := servertest.TestBox(t).Seal([]byte(value), store.TenantSecretAAD(b.tenant.ID, "API_TOKEN"))
	if _, err := b.store.SecretPut(context.Background(), b.tenant.ID, "API_TOKEN", "", sealed, "cli"); err != nil {
		t.Fatal(err)
	}
	b.publish(t, `
key: leaky
steps:
  - ref: call
    type: http
    retry: {max_attempts: 1}
    with:
      url_expr: '"`+far.URL+`/x?k=" + secret("API_TOKEN")'
      method: POST
      auth: {bearer: API_TOKEN}
      headers_expr: '{"X-Api-Key": secret("API_TOKEN")}'
      body_expr: '{"token": secret("API_TOKEN"), "note": input.note}'
output_expr: steps.call.output.body
`)
	started := b.post(b.owner, "/definitions/leaky/runs", url.Values{"input": {`{"note": "from the editor"}`}})
	wantRedirect(t, "the test run", started, "/runs/")
	id, err := uuid.Parse(started.Location[strings.LastIndex(started.Location, "/")+1:])
	if err != nil {
		t.Fatalf("the test run led to %q", started.Location)
	}
	run := b.waitStatus(t, id, engine.RunSucceeded)
	if out := fmt.Sprint(run.State.Output); !strings.Contains(out, "Bearer ***") || !strings.Contains(out, "from the editor") {
		t.Fatalf("the far end did not get the request: output %s", out)
	}
	shown := started.Body
	for _, p := range []string{"/definitions/leaky/edit", "/runs/" + id.String(), "/runs/" + id.String() + "/live",
		"/runs/" + id.String() + "/json/input", "/runs/" + id.String() + "/json/output",
		"/runs/" + id.String() + "/json/nodes/call", "/runs/" + id.String() + "/json/nodes/call/attempts/0/1"} {
		a := b.get(b.owner, p)
		if a.Status != http.StatusOK {
			t.Errorf("%s = %d", p, a.Status)
		}
		shown += a.Body
	}
	if strings.Contains(shown, value) {
		t.Errorf("a page of the test run shows the secret's value")
	}
	if !strings.Contains(shown, "***") {
		t.Errorf("no page shows the masked response")
	}
}
