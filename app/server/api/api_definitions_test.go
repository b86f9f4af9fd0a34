package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

const ordersJSON = `{
  "key": "orders", "name": "Orders",
  "input_schema": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}}},
  "steps": [
    {"ref": "total", "type": "transform", "with": {"expr": "input.amount * 2.0"}},
    {"ref": "done", "type": "transform", "with": {"expr": "steps.total.output"}}
  ],
  "edges": [{"from": "total", "to": "done"}]
}`

// The same definition in YAML, steps in another order, a default spelled out.
const ordersYAML = `
key: orders
name: Orders
input_schema:
  type: object
  required: [amount]
  properties:
    amount: {type: number, exclusiveMinimum: 0}
steps:
  - ref: done
    type: transform
    with: {expr: "steps.total.output"}
  - ref: total
    type: transform
    on_error: fail
    with: {expr: "input.amount * 2.0"}
edges:
  - {from: total, to: done}
`

// send is call with a Content-Type of choice.
func (b *apiBundle) send(t *testing.T, method, path, key, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object", method, path, raw)
	}
	return res.StatusCode, out
}

// Publish JSON, fetch the manifest, publish the same definition as YAML and
// get the same version; a change makes the next version.
func TestDefinitionsAPIRoundTrip(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	want, err := definition.Compile([]byte(ordersJSON), definition.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	code, pub := b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, ordersJSON)
	if code != 201 || pub["key"] != "orders" || pub["version"] != 1.0 || pub["manifest_hash"] != want.Hash {
		t.Fatalf("publish = %d %v, want 201 v1 %s", code, pub, want.Hash)
	}
	code, v := b.call(t, "GET", "/api/v1/definitions/orders/versions/1", b.keyA, "")
	if code != 200 || v["source"] != ordersJSON || v["format"] != "json" || v["manifest_hash"] != want.Hash || v["published"] != true {
		t.Fatalf("version = %d %v", code, v)
	}
	got, _ := json.Marshal(v["manifest"])
	if h, err := definition.Hash(decodeManifest(t, got)); err != nil || h != want.Hash {
		t.Fatalf("fetched manifest hashes to %s, %v; want %s", h, err, want.Hash)
	}
	code, again := b.send(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, "application/yaml", ordersYAML)
	if code != 200 || again["version"] != 1.0 || again["manifest_hash"] != want.Hash {
		t.Fatalf("publishing the YAML = %d %v, want 200 with version 1", code, again)
	}
	changed := strings.Replace(ordersYAML, "input.amount * 2.0", "input.amount * 3.0", 1)
	code, next := b.send(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, "text/yaml", changed)
	if code != 201 || next["version"] != 2.0 {
		t.Fatalf("publishing a change = %d %v, want 201 version 2", code, next)
	}
	_, v2 := b.call(t, "GET", "/api/v1/definitions/orders/versions/2", b.keyA, "")
	if v2["format"] != "yaml" || v2["source"] != changed {
		t.Fatalf("version 2 = %v", v2)
	}
	audit, _ := b.store.AuditList(context.Background(), b.tenantA.ID, 10)
	if len(audit) != 2 || audit[0].Action != store.AuditDefinitionPublish || !strings.HasPrefix(audit[0].Actor, "key:") || audit[0].Target != "orders" {
		t.Fatalf("audit = %+v, want two publishes by the key", audit)
	}
}

func decodeManifest(t *testing.T, raw []byte) *definition.Manifest {
	t.Helper()
	var m definition.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestDefinitionsAPIListAndGet(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	for _, key := range []string{"c-def", "a-def", "b-def"} {
		doc := strings.Replace(ordersJSON, `"orders"`, `"`+key+`"`, 1)
		if code, body := b.call(t, "POST", "/api/v1/definitions/"+key+"/versions", b.keyA, doc); code != 201 {
			t.Fatalf("publish %s = %d %v", key, code, body)
		}
	}
	if code, body := b.call(t, "PUT", "/api/v1/definitions/d-draft", b.keyA, strings.Replace(ordersJSON, `"orders"`, `"d-draft"`, 1)); code != 200 {
		t.Fatalf("draft = %d %v", code, body)
	}
	var keys []string
	path := "/api/v1/definitions?limit=3"
	for range 5 {
		_, page := b.call(t, "GET", path, b.keyA, "")
		for _, d := range page["definitions"].([]any) {
			keys = append(keys, d.(map[string]any)["key"].(string))
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			break
		}
		path = "/api/v1/definitions?limit=3&cursor=" + next
	}
	if strings.Join(keys, ",") != "a-def,b-def,c-def,d-draft" {
		t.Fatalf("listed %v", keys)
	}
	_, list := b.call(t, "GET", "/api/v1/definitions?limit=1", b.keyA, "")
	first := list["definitions"].([]any)[0].(map[string]any)
	if first["name"] != "Orders" || first["latest_version"] != 1.0 || first["has_draft"] != false || first["updated_at"] == nil {
		t.Fatalf("listed definition = %v", first)
	}
	code, d := b.call(t, "GET", "/api/v1/definitions/d-draft", b.keyA, "")
	if code != 200 || d["latest_version"] != nil || d["has_draft"] != true || len(d["versions"].([]any)) != 0 {
		t.Fatalf("draft-only definition = %d %v", code, d)
	}
	if code, _ := b.call(t, "GET", "/api/v1/definitions?cursor=%25%25", b.keyA, ""); code != 400 {
		t.Errorf("bad cursor = %d, want 400", code)
	}
}

func TestDefinitionsAPIScopes(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	_, runsOnly := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsWrite}})
	_, reader := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeDefinitionsRead}})
	cases := []struct {
		key, method, path, body string
		status                  int
	}{
		{runsOnly, "POST", "/api/v1/compile", ordersJSON, 403},
		{runsOnly, "GET", "/api/v1/definitions", "", 403},
		{reader, "POST", "/api/v1/compile", ordersJSON, 200},
		{reader, "GET", "/api/v1/definitions", "", 200},
		{reader, "PUT", "/api/v1/definitions/orders", ordersJSON, 403},
		{reader, "POST", "/api/v1/definitions/orders/versions", ordersJSON, 403},
		{reader, "DELETE", "/api/v1/definitions/orders/versions/1", "", 403},
	}
	for _, tc := range cases {
		if code, body := b.call(t, tc.method, tc.path, tc.key, tc.body); code != tc.status {
			t.Errorf("%s %s = %d %v, want %d", tc.method, tc.path, code, body, tc.status)
		}
	}
}

// Trigger input is checked against the input_schema: 422 with where.
func TestRunStartChecksInputSchema(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	if code, body := b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, ordersJSON); code != 201 {
		t.Fatalf("publish = %d %v", code, body)
	}
	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": -5}}`)
	e, _ := body["error"].(map[string]any)
	details, _ := e["details"].([]any)
	if code != 422 || e["code"] != "unprocessable" || len(details) != 1 || details[0].(map[string]any)["path"] != "input.amount" ||
		!strings.Contains(e["message"].(string), "input_schema") {
		t.Fatalf("bad input = %d %v, want 422 naming input.amount", code, body)
	}
	if code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {}}`); code != 422 {
		t.Fatalf("missing amount = %d %v, want 422", code, body)
	}
	code, body = b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": 5}}`)
	if code != 201 {
		t.Fatalf("good input = %d %v", code, body)
	}
	if run := b.waitStatus(t, body["id"].(string)); run["status"] != "succeeded" || run["output"] == nil {
		t.Fatalf("run = %v", run)
	}
}
