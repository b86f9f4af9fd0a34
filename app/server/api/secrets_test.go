package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// lockedBuffer is a log sink several goroutines write.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// apiGetRaw is a GET's whole body, as text.
func (b *apiBundle) getRaw(t *testing.T, path, key string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.srv.URL+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return string(raw)
}

// A secret set through the API is sent by an http step as its bearer
// header, and its value appears nowhere a run is shown or recorded: not
// in the run, its history, its nodes' outputs and attempts, the server's
// log or /metrics, not even when the far end echoes the header back.
// Rotating it changes the next run's header; deleting it fails the next
// run's step with secret_not_found; another tenant's reference to the
// same name fails the same way; a secrets:read key sees metadata only.
func TestSecretsAreSentAndNeverShown(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	b := setupAPIConfig(t, func(c *workers.Config) { c.Logger = log }, func(d *server.Deps) { d.Logger = log })

	var mu sync.Mutex
	var got []string
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/echo" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "bad credentials: " + r.Header.Get("Authorization") + " / " + r.URL.Query().Get("k")})
			return
		}
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(far.Close)
	lastHeader := func() string { mu.Lock(); defer mu.Unlock(); return got[len(got)-1] }

	const v1, v2 = "sk_live_first_value_0001", "sk_live_second_value_0002"
	if code, body := b.call(t, "PUT", "/api/v1/secrets/API_TOKEN", b.keyA, `{"value": "`+v1+`", "description": "the payments API"}`); code != 201 || body["version"] != 1.0 || body["value"] != nil {
		t.Fatalf("set = %d %v", code, body)
	}
	defYAML := `
key: pay
steps:
  - ref: call
    type: http
    retry: {max_attempts: 1}
    with: {url: "` + far.URL + `/charge", method: POST, auth: {bearer: API_TOKEN}, body: {amount: 1}}
`
	testdb.Definition(t, b.store, b.tenantA.ID, defYAML)
	testdb.Definition(t, b.store, b.tenantA.ID, `
key: echo
steps:
  - ref: call
    type: http
    retry: {max_attempts: 1}
    with:
      url_expr: '"`+far.URL+`/echo?k=" + secret("API_TOKEN")'
      headers_expr: '{"Authorization": "Token " + secret("API_TOKEN")}'
`)
	run := func(key, def string) (string, map[string]any) {
		t.Helper()
		code, body := b.call(t, "POST", "/api/v1/runs", key, `{"definition": "`+def+`", "input": {}}`)
		if code != 201 {
			t.Fatalf("start %s = %d %v", def, code, body)
		}
		id := body["id"].(string)
		return id, testwait.Value(t, 20*time.Second, "run "+id+" ends", func() (map[string]any, bool) {
			_, r := b.call(t, "GET", "/api/v1/runs/"+id, key, "")
			return r, endedStatus(r["status"])
		})
	}
	nodeError := func(r map[string]any) map[string]any {
		nodes, _ := r["nodes"].([]any)
		for _, n := range nodes {
			if e, ok := n.(map[string]any)["error"].(map[string]any); ok {
				return e
			}
		}
		return nil
	}
	shown := func(key, id string) string {
		var all strings.Builder
		for _, p := range []string{"/api/v1/runs/" + id, "/api/v1/runs/" + id + "/history"} {
			all.WriteString(b.getRaw(t, p, key))
		}
		return all.String()
	}

	first, r := run(b.keyA, "pay")
	if r["status"] != "succeeded" || lastHeader() != "Bearer "+v1 {
		t.Fatalf("run = %v, header %q", r["status"], lastHeader())
	}
	echoed, r := run(b.keyA, "echo")
	if e := nodeError(r); r["status"] != "failed" || e["code"] != "http_status" {
		t.Fatalf("the echo run = %v, %v", r["status"], e)
	}
	if lastHeader() != "Token "+v1 {
		t.Errorf("headers_expr sent %q", lastHeader())
	}
	var attempt string
	if err := b.pool.QueryRow(ctx, `SELECT output::text FROM run_attempt WHERE run_id = $1`, echoed).Scan(&attempt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(attempt, "bad credentials: Token *** / ***") {
		t.Errorf("the attempt's recorded response is not masked: %s", attempt)
	}

	if code, body := b.call(t, "PUT", "/api/v1/secrets/API_TOKEN", b.keyA, `{"value": "`+v2+`"}`); code != 200 || body["version"] != 2.0 {
		t.Fatalf("rotate = %d %v", code, body)
	}
	second, r := run(b.keyA, "pay")
	if r["status"] != "succeeded" || lastHeader() != "Bearer "+v2 {
		t.Fatalf("after the rotation: %v, header %q", r["status"], lastHeader())
	}

	// A secrets:read key sees the metadata and never a value.
	_, reader := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeSecretsRead}})
	meta := b.getRaw(t, "/api/v1/secrets/API_TOKEN", reader) + b.getRaw(t, "/api/v1/secrets", reader)
	if !strings.Contains(meta, `"description":"the payments API"`) || !strings.Contains(meta, `"version":2`) || !strings.Contains(meta, `"last_used_at":"`) {
		t.Errorf("metadata = %s", meta)
	}
	if code, _ := b.call(t, "PUT", "/api/v1/secrets/API_TOKEN", reader, `{"value": "x"}`); code != http.StatusForbidden {
		t.Errorf("a secrets:read key set a secret: %d", code)
	}

	if code, body := b.call(t, "DELETE", "/api/v1/secrets/API_TOKEN", b.keyA, ""); code != 200 {
		t.Fatalf("delete = %d %v", code, body)
	}
	gone, r := run(b.keyA, "pay")
	if e := nodeError(r); r["status"] != "failed" || e["code"] != "secret_not_found" || !strings.Contains(fmt.Sprint(e["message"]), "API_TOKEN") {
		t.Errorf("after the delete: %v, %v", r["status"], e)
	}

	// Another tenant's reference to the same name finds nothing.
	c := testdb.Tenant(t, b.store, nil)
	_, keyC := testdb.APIKey(t, b.store, c, nil)
	if code, _ := b.call(t, "PUT", "/api/v1/secrets/OTHER", b.keyA, `{"value": "v"}`); code != 201 {
		t.Fatal("set OTHER")
	}
	testdb.Definition(t, b.store, c.ID, defYAML)
	_, r = run(keyC, "pay")
	if e := nodeError(r); r["status"] != "failed" || e["code"] != "secret_not_found" {
		t.Errorf("another tenant's run: %v, %v", r["status"], e)
	}

	everything := shown(b.keyA, first) + shown(b.keyA, echoed) + shown(b.keyA, second) + shown(b.keyA, gone) +
		meta + b.getRaw(t, "/metrics", "") + logs.String()
	for _, v := range []string{v1, v2} {
		if strings.Contains(everything, v) {
			t.Errorf("the value %s is shown", v)
		}
		if where := rowsHolding(t, b, v); len(where) > 0 {
			t.Errorf("the value %s is stored in %v", v, where)
		}
	}
	if where := rowsHolding(t, b, "${secret:API_TOKEN}"); len(where) == 0 {
		t.Errorf("no stored request holds the reference")
	}
	if !strings.Contains(logs.String(), "level") {
		t.Errorf("the log captured nothing")
	}
}

// rowsHolding names the tables of the test's schema with a row whose
// text holds s: every table, the job queue's included (the stored
// request of each attempt is a job's arguments).
func rowsHolding(t *testing.T, b *apiBundle, s string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := b.pool.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	var out []string
	for _, table := range tables {
		var n int
		q := fmt.Sprintf(`SELECT count(*) FROM %q x WHERE strpos(x::text, $1) > 0`, table)
		if err := b.pool.QueryRow(ctx, q, s).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n > 0 {
			out = append(out, table)
		}
	}
	return out
}

// secretIsolationCases are tenant B's calls on tenant A's secret, and
// what none of B's answers may show.
func secretIsolationCases(t *testing.T, b *apiBundle) (map[string]isolationCase, []string) {
	t.Helper()
	const value, description = "hidden-secret-value-of-a", "hidden-secret-description-of-a"
	if code, body := b.call(t, "PUT", "/api/v1/secrets/HIDDEN", b.keyA, `{"value": "`+value+`", "description": "`+description+`"}`); code != 201 {
		t.Fatalf("set secret: %d %v", code, body)
	}
	return map[string]isolationCase{
		"GET /api/v1/secrets":          {"/api/v1/secrets", "", 200},
		"GET /api/v1/secrets/:name":    {"/api/v1/secrets/HIDDEN", "", 404},
		"DELETE /api/v1/secrets/:name": {"/api/v1/secrets/HIDDEN", "", 404},
		// B's own secret: names are per tenant.
		"PUT /api/v1/secrets/:name": {"/api/v1/secrets/B_OWN", `{"value": "b's own"}`, 201},
	}, []string{value, description}
}

// secret() outside the fields that send one does not compile, and the
// problem names the field's path.
func TestSecretOutsideItsFieldsDoesNotCompile(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	doc := `{"key": "leak", "steps": [{"ref": "leak", "type": "transform", "with": {"expr": "{\"k\": secret(\"API_TOKEN\")}"}}]}`
	code, body := b.call(t, "POST", "/api/v1/compile", b.keyA, doc)
	e, _ := body["error"].(map[string]any)
	details, _ := e["details"].([]any)
	if code != 422 || e["code"] != "invalid_definition" || len(details) != 1 {
		t.Fatalf("compile = %d %v", code, body)
	}
	p := details[0].(map[string]any)
	if p["path"] != "steps[0].with.expr" || !strings.Contains(fmt.Sprint(p["message"]), "secret() is only valid") {
		t.Errorf("problem = %v", p)
	}
	ok := `{"key": "send", "steps": [{"ref": "send", "type": "http", "with": {"url": "https://api.example.com/", "auth": {"bearer": "API_TOKEN"}, "body_expr": "{\"k\": secret(\"API_TOKEN\")}"}}]}`
	if code, body := b.call(t, "POST", "/api/v1/compile", b.keyA, ok); code != 200 {
		t.Errorf("an http step's references = %d %v", code, body)
	}
}

// A secret's placeholder that arrives in data (a run's input copied into
// the body) is sent as the text it is: only the step's own secret()
// calls resolve, so a key that may start runs cannot make a step send a
// secret it was not written to send.
func TestSecretPlaceholderInInputIsNotResolved(t *testing.T) {
	t.Parallel()
	b := setupAPIConfig(t, func(*workers.Config) {}, func(*server.Deps) {})
	bodies := make(chan string, 1)
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		bodies <- string(raw)
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(far.Close)
	const value = "sk_live_never_forwarded_0003"
	if code, body := b.call(t, "PUT", "/api/v1/secrets/API_TOKEN", b.keyA, `{"value": "`+value+`"}`); code != 201 {
		t.Fatalf("set = %d %v", code, body)
	}
	testdb.Definition(t, b.store, b.tenantA.ID, `
key: forward
steps:
  - ref: call
    type: http
    retry: {max_attempts: 1}
    with: {url: "`+far.URL+`/forward", method: POST, body_expr: '{"note": input.note}'}
`)
	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "forward", "input": {"note": "${secret:API_TOKEN}"}}`)
	if code != 201 {
		t.Fatalf("start = %d %v", code, body)
	}
	select {
	case got := <-bodies:
		if strings.Contains(got, value) || !strings.Contains(got, "${secret:API_TOKEN}") {
			t.Errorf("the far end received %s, want the placeholder as text", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the http step sent nothing within 20s")
	}
}

// GET /secrets/{name} names the published definition versions that
// reference the secret (used_by), newest first, and an empty list when
// none does; the list of secrets leaves it out.
func TestSecretMetadataNamesItsUses(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	for _, name := range []string{"CHAT_TOKEN", "IDLE"} {
		if code, body := b.call(t, "PUT", "/api/v1/secrets/"+name, b.keyA, `{"value": "v"}`); code != 201 {
			t.Fatalf("set %s = %d %v", name, code, body)
		}
	}
	const chat = "key: chat\nsteps:\n  - {ref: send, type: http, with: {url: \"https://chat.example/\", auth: {bearer: CHAT_TOKEN}}}\n"
	testdb.Definition(t, b.store, b.tenantA.ID, chat)
	testdb.Definition(t, b.store, b.tenantA.ID, chat+"name: chat two\n")
	other := testdb.Tenant(t, b.store, nil)
	testdb.Definition(t, b.store, other.ID, "key: theirs\nsteps:\n  - {ref: t, type: task, with: {handler: h, secrets: [CHAT_TOKEN]}}\n")

	if got := b.getRaw(t, "/api/v1/secrets/CHAT_TOKEN", b.keyA); !strings.Contains(got, `"used_by":[{"key":"chat","version":2},{"key":"chat","version":1}]`) {
		t.Errorf("CHAT_TOKEN = %s", got)
	}
	if got := b.getRaw(t, "/api/v1/secrets/IDLE", b.keyA); !strings.Contains(got, `"used_by":[]`) {
		t.Errorf("IDLE = %s", got)
	}
	if got := b.getRaw(t, "/api/v1/secrets", b.keyA); strings.Contains(got, "used_by") {
		t.Errorf("the list = %s", got)
	}
}
