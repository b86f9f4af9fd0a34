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
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"

	"github.com/ductor/ductor/app/server/api"
	"github.com/ductor/ductor/app/server/httpx"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/testdb"
)

// apiBase is where the document's paths are mounted (its one server).
const apiBase = "/api/v1"

// loadOpenAPI parses the embedded document and validates it as OpenAPI
// 3.1: structure, references, path parameters, schemas.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIDocument)
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// operations lists the document's operations as "METHOD /api/v1/path".
func operations(doc *openapi3.T) map[string]*openapi3.Operation {
	out := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			out[method+" "+apiBase+path] = op
		}
	}
	return out
}

// apiRouteSet lists the /api/v1 routes a server registers, in the
// document's path syntax ({id} for :id).
func apiRouteSet(routes []*echo.Route) map[string]bool {
	param := regexp.MustCompile(`:(\w+)`)
	out := map[string]bool{}
	for _, r := range routes {
		if r.Method == echo.RouteNotFound || !strings.HasPrefix(r.Path, apiBase+"/") || strings.HasSuffix(r.Path, "*") {
			continue
		}
		out[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	return out
}

func TestOpenAPIDocumentIsOpenAPI31(t *testing.T) {
	t.Parallel()
	var raw struct {
		OpenAPI string `json:"openapi"`
		Servers []struct{ URL string }
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPIDocument, &raw); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(raw.OpenAPI) {
		t.Errorf("openapi = %q, want 3.1.x", raw.OpenAPI)
	}
	if len(raw.Servers) != 1 || raw.Servers[0].URL != apiBase {
		t.Errorf("servers = %+v, want the one %s", raw.Servers, apiBase)
	}
	doc := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("loaded as OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	scheme := doc.Components.SecuritySchemes["apiKey"]
	if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" {
		t.Errorf("security scheme apiKey = %+v, want http bearer", scheme)
	}
	if len(doc.Security) != 1 || doc.Security[0]["apiKey"] == nil {
		t.Errorf("security = %+v, want apiKey for every operation by default", doc.Security)
	}
}

// Each operation answers JSON on success, declares the errors it can
// answer in the error shape, and names its scope.
func TestOpenAPIOperationsDeclareAnswers(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	errorShape := "#/components/schemas/Error"
	for name, op := range operations(doc) {
		ok := false
		for code, resp := range op.Responses.Map() {
			status, err := strconv.Atoi(code)
			if err != nil {
				t.Errorf("%s: response %q is not a status", name, code)
				continue
			}
			mt := resp.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil {
				t.Errorf("%s %d: no application/json answer", name, status)
				continue
			}
			switch {
			case status >= 200 && status < 300:
				ok = true
			case status >= 400:
				s := mt.Schema
				if s.Ref != errorShape && !slices.ContainsFunc(s.Value.AllOf, func(r *openapi3.SchemaRef) bool { return r.Ref == errorShape }) {
					t.Errorf("%s %d: answer is not the error shape %s", name, status, errorShape)
				}
				if _, known := statusOfCode(status); !known {
					t.Errorf("%s: %d is not a status the API answers", name, status)
				}
			}
		}
		if !ok {
			t.Errorf("%s declares no 2xx answer", name)
		}
		public := op.Security != nil && len(*op.Security) == 0
		if name == "GET "+apiBase+"/openapi.json" || name == "GET "+definition.SchemaPath {
			if !public {
				t.Errorf("%s: the document is served without a key: security must be []", name)
			}
			continue
		}
		if public {
			t.Errorf("%s claims to need no API key", name)
		}
		if op.Responses.Status(http.StatusUnauthorized) == nil {
			t.Errorf("%s does not declare 401", name)
		}
		if op.RequestBody != nil && op.Responses.Status(http.StatusRequestEntityTooLarge) == nil {
			t.Errorf("%s takes a body but does not declare 413", name)
		}
		if scope, ok := op.Extensions["x-required-scope"]; ok {
			if !slices.Contains(auth.AllScopes, auth.Scope(scope.(string))) {
				t.Errorf("%s: x-required-scope %v is not a scope", name, scope)
			}
			if op.Responses.Status(http.StatusForbidden) == nil {
				t.Errorf("%s needs a scope but does not declare 403", name)
			}
		} else if name != "GET "+apiBase+"/whoami" {
			t.Errorf("%s has no x-required-scope", name)
		}
	}
}

// statusOfCode reports whether some error code maps to status.
func statusOfCode(status int) (int, bool) {
	for _, s := range httpx.StatusOf {
		if s == status {
			return s, true
		}
	}
	return 0, false
}

// Every /api/v1 route is documented and every documented operation is a
// route, so the two never drift apart.
func TestOpenAPIMatchesTheRoutes(t *testing.T) {
	t.Parallel()
	srv := server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)})
	routes := apiRouteSet(srv.Routes())
	if len(routes) < 10 {
		t.Fatalf("found only %d API routes: %v", len(routes), routes)
	}
	ops := operations(loadOpenAPI(t))
	for r := range routes {
		if ops[r] == nil {
			t.Errorf("route %s is not in openapi.json: document it", r)
		}
	}
	for o := range ops {
		if !routes[o] {
			t.Errorf("openapi.json documents %s, which is no route", o)
		}
	}
}

func TestOpenAPIIsServedWithoutAKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + apiBase + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET openapi.json = %d %s, want 200 application/json", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if string(body) != string(api.OpenAPIDocument) {
		t.Errorf("served document differs from the embedded one")
	}
}

// answerCase is a call on tenant A's objects whose answer must be one the
// document declares, in the declared shape.
type answerCase struct {
	route, path, contentType, body string
}

// rawCall calls the API as key (none when empty) and returns the status,
// the Content-Type and the decoded body.
func (b *apiBundle) rawCall(t *testing.T, method, path, key, contentType, body string) (int, string, any) {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Errorf("%s %s: %d body %q is not JSON", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), out
}

// answerSchemas compiles the document's answer schemas with a JSON
// Schema 2020-12 validator, as OpenAPI 3.1 means them.
type answerSchemas struct {
	doc *openapi3.T
	c   *jsonschema.Compiler
}

func newAnswerSchemas(t *testing.T, doc *openapi3.T) answerSchemas {
	t.Helper()
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(api.OpenAPIDocument))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("openapi.json", raw); err != nil {
		t.Fatal(err)
	}
	return answerSchemas{doc: doc, c: c}
}

// check fails unless the route's operation declares status and body
// matches its schema.
func (a answerSchemas) check(t *testing.T, route string, status int, contentType string, body any) {
	t.Helper()
	method, path, _ := strings.Cut(route, " ")
	path = strings.TrimPrefix(path, apiBase)
	op := a.doc.Paths.Find(path).GetOperation(method)
	resp := op.Responses.Status(status)
	if resp == nil {
		t.Errorf("%s answered %d, which openapi.json does not declare: %v", route, status, body)
		return
	}
	if !strings.HasPrefix(contentType, "application/json") {
		t.Errorf("%s %d: Content-Type %q, want application/json", route, status, contentType)
	}
	pointer := func(parts ...string) string {
		for i, p := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
		}
		return "openapi.json#/" + strings.Join(parts, "/")
	}
	loc := pointer("paths", path, strings.ToLower(method), "responses", strconv.Itoa(status), "content", "application/json", "schema")
	if name, ok := strings.CutPrefix(resp.Ref, "#/components/responses/"); ok {
		loc = pointer("components", "responses", name, "content", "application/json", "schema")
	}
	schema, err := a.c.Compile(loc)
	if err != nil {
		t.Fatalf("%s %d: compile %s: %v", route, status, loc, err)
	}
	if err := schema.Validate(body); err != nil {
		t.Errorf("%s %d: the answer does not match openapi.json: %v\nanswer: %v", route, status, err, body)
	}
}

// Real answers of every operation, successes and errors, have a declared
// status and the documented shape (objects refuse undocumented fields),
// and each operation needs exactly the scope it documents.
func TestOpenAPIDescribesTheAnswers(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	doc := loadOpenAPI(t)
	ops := operations(doc)
	answers := newAnswerSchemas(t, doc)

	if code, body := b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, ordersJSON); code != http.StatusCreated {
		t.Fatalf("publish orders: %d %v", code, body)
	}
	gone := strings.Replace(ordersJSON, `"orders"`, `"gone"`, 1)
	if code, body := b.call(t, "POST", "/api/v1/definitions/gone/versions", b.keyA, gone); code != http.StatusCreated {
		t.Fatalf("publish gone: %d %v", code, body)
	}
	_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": 2}, "subject": "s"}`)
	run := started["id"].(string)
	b.waitStatus(t, run)
	_, hidden := waitingIsolationCases(t, b, run)
	approval, kase := hidden[0], hidden[1]
	badDoc := `{"key": "orders", "steps": [{"ref": "a", "type": "nope"}]}`
	runs := "/api/v1/runs/" + run
	_, batch := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, `{"action": "retry", "run_ids": ["`+run+`"]}`)

	cases := []answerCase{
		{route: "GET /api/v1/openapi.json", path: "/api/v1/openapi.json"},
		{route: "GET /api/v1/schemas/definition.json", path: "/api/v1/schemas/definition.json"},
		{route: "GET /api/v1/whoami", path: "/api/v1/whoami"},
		{route: "GET /api/v1/usage", path: "/api/v1/usage?group_by=definition"},
		{route: "GET /api/v1/usage", path: "/api/v1/usage?from=2026-13-01"},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "orders", "input": {"amount": 1}, "idempotency_key": "k"}`},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "orders", "input": {"amount": 1}, "idempotency_key": "k"}`},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "orders", "input": {"amount": 3}, "idempotency_key": "k"}`},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "orders", "input": {"amount": -1}}`},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "missing"}`},
		{route: "POST /api/v1/runs", path: "/api/v1/runs", body: `{"definition": "orders", "unknown": 1}`},
		{route: "GET /api/v1/runs", path: "/api/v1/runs?limit=1&definition=orders"},
		{route: "GET /api/v1/runs", path: "/api/v1/runs?attr.region=eu&status=succeeded"},
		{route: "GET /api/v1/runs", path: "/api/v1/runs?limit=0"},
		{route: "GET /api/v1/runs", path: "/api/v1/runs?q=s&count=true&definition=ord&definition_match=prefix&from=2020-01-01T00:00"},
		{route: "GET /api/v1/runs", path: "/api/v1/runs?definition_match=fuzzy"},
		{route: "POST /api/v1/runs/batch", path: "/api/v1/runs/batch", body: `{"action": "cancel", "filter": {"status": "running", "q": "zz"}, "reason": "r"}`},
		{route: "POST /api/v1/runs/batch", path: "/api/v1/runs/batch", body: `{"action": "retry", "run_ids": ["` + run + `"]}`},
		{route: "POST /api/v1/runs/batch", path: "/api/v1/runs/batch", body: `{"action": "explode", "run_ids": []}`},
		{route: "POST /api/v1/runs/batch", path: "/api/v1/runs/batch?dry_run=true", body: `{"action": "upgrade", "version": 1, "filter": {"definition": "orders"}}`},
		{route: "GET /api/v1/batches/{id}", path: "/api/v1/batches/" + batch["id"].(string)},
		{route: "GET /api/v1/batches/{id}", path: "/api/v1/batches/" + run},
		{route: "POST /api/v1/batches/{id}/stop", path: "/api/v1/batches/" + batch["id"].(string) + "/stop"},
		{route: "POST /api/v1/batches/{id}/stop", path: "/api/v1/batches/" + batch["id"].(string) + "/stop"},
		{route: "POST /api/v1/batches/{id}/stop", path: "/api/v1/batches/" + run + "/stop"},
		{route: "GET /api/v1/runs/{id}", path: runs},
		{route: "GET /api/v1/runs/{id}", path: "/api/v1/runs/not-an-id"},
		{route: "GET /api/v1/runs/{id}/history", path: runs + "/history?limit=2"},
		{route: "GET /api/v1/runs/{id}/nodes/{node}/children", path: runs + "/nodes/total/children"},
		{route: "GET /api/v1/runs/{id}/nodes/{node}/children", path: runs + "/nodes/ghost/children"},
		{route: "GET /api/v1/runs/{id}/nodes/{node}/children", path: runs + "/nodes/total/children?state=failed&q=k"},
		{route: "GET /api/v1/runs/{id}/nodes/{node}/children", path: runs + "/nodes/total/children?state=sleepy"},
		{route: "POST /api/v1/runs/{id}/nodes/{node}/retry", path: runs + "/nodes/total/retry"},
		{route: "POST /api/v1/runs/{id}/nodes/{node}/retry", path: runs + "/nodes/total/retry?dry_run=true"},
		{route: "POST /api/v1/runs/{id}/upgrade", path: runs + "/upgrade?dry_run=true", body: `{"version": 1}`},
		{route: "POST /api/v1/runs/{id}/upgrade", path: runs + "/upgrade", body: `{"version": 2}`},
		{route: "POST /api/v1/runs/{id}/upgrade", path: runs + "/upgrade", body: `{}`},
		{route: "POST /api/v1/runs/{id}/retry", path: runs + "/retry?dry_run=true", body: `{"node": "total"}`},
		{route: "POST /api/v1/runs/{id}/retry", path: runs + "/retry", body: `{"node": "ghost", "version": 1}`},
		{route: "POST /api/v1/runs/{id}/retry", path: runs + "/retry?dry_run=maybe", body: `{"node": "total"}`},
		{route: "POST /api/v1/runs/{id}/nodes/{node}/cancel", path: runs + "/nodes/total/cancel", body: `{"reason": "r"}`},
		{route: "POST /api/v1/runs/{id}/nodes/{node}/cancel", path: runs + "/nodes/ghost/cancel"},
		{route: "POST /api/v1/runs/{id}/continue-as-new", path: runs + "/continue-as-new", body: `{"request_id": "r1"}`},
		{route: "POST /api/v1/runs/{id}/continue-as-new", path: runs + "/continue-as-new", body: `{}`},
		{route: "POST /api/v1/runs/{id}/cancel", path: runs + "/cancel", body: `{"reason": "done"}`},
		{route: "POST /api/v1/runs/{id}/signals", path: runs + "/signals", body: `{"request_id": "s1", "name": "go"}`},
		{route: "POST /api/v1/events", path: "/api/v1/events", body: `{"name": "go", "data": {"x": 1}, "idempotency_key": "e1"}`},
		{route: "POST /api/v1/events", path: "/api/v1/events", body: `{"name": "go", "data": {"x": 2}, "idempotency_key": "e1"}`},
		{route: "POST /api/v1/events", path: "/api/v1/events", body: `{}`},
		{route: "GET /api/v1/approvals", path: "/api/v1/approvals?status=pending"},
		{route: "GET /api/v1/approvals/{id}", path: "/api/v1/approvals/" + approval},
		{route: "GET /api/v1/approvals/{id}", path: "/api/v1/approvals/" + uuid.NewString()},
		{route: "POST /api/v1/approvals/{id}/decision", path: "/api/v1/approvals/" + approval + "/decision", body: `{"decision": "approve", "comment": "ok"}`},
		{route: "POST /api/v1/approvals/{id}/decision", path: "/api/v1/approvals/" + approval + "/decision", body: `{"decision": "approve"}`},
		{route: "POST /api/v1/approvals/{id}/decision", path: "/api/v1/approvals/" + approval + "/decision", body: `{"decision": "maybe"}`},
		{route: "GET /api/v1/cases", path: "/api/v1/cases"},
		{route: "GET /api/v1/cases", path: "/api/v1/cases?include=data"},
		{route: "GET /api/v1/cases", path: "/api/v1/cases?include=input"},
		{route: "GET /api/v1/cases/{id}", path: "/api/v1/cases/" + kase},
		{route: "GET /api/v1/cases/{id}", path: "/api/v1/cases/" + uuid.NewString()},
		{route: "PATCH /api/v1/cases/{id}", path: "/api/v1/cases/" + kase, body: `{"status": "working", "data": {"note": "n"}}`},
		{route: "POST /api/v1/compile", path: "/api/v1/compile", body: ordersJSON},
		{route: "POST /api/v1/compile", path: "/api/v1/compile", contentType: "application/yaml", body: ordersYAML},
		{route: "POST /api/v1/compile", path: "/api/v1/compile", body: badDoc},
		{route: "GET /api/v1/definitions", path: "/api/v1/definitions?limit=1"},
		{route: "GET /api/v1/definitions", path: "/api/v1/definitions?cursor=%25"},
		{route: "GET /api/v1/definitions/{key}", path: "/api/v1/definitions/orders"},
		{route: "PUT /api/v1/definitions/{key}", path: "/api/v1/definitions/orders", body: strings.Replace(ordersJSON, "* 2.0", "* 3.0", 1)},
		{route: "PUT /api/v1/definitions/{key}", path: "/api/v1/definitions/orders", body: badDoc},
		{route: "GET /api/v1/definitions/{key}", path: "/api/v1/definitions/orders"},
		{route: "POST /api/v1/definitions/{key}/versions", path: "/api/v1/definitions/orders/versions"},
		{route: "POST /api/v1/definitions/{key}/versions", path: "/api/v1/definitions/orders/versions", body: ordersJSON},
		{route: "POST /api/v1/definitions/{key}/versions", path: "/api/v1/definitions/gone/versions"},
		{route: "GET /api/v1/definitions/{key}/versions/{n}", path: "/api/v1/definitions/orders/versions/1"},
		{route: "GET /api/v1/definitions/{key}/versions/{n}", path: "/api/v1/definitions/orders/versions/9"},
		{route: "DELETE /api/v1/definitions/{key}/versions/{n}", path: "/api/v1/definitions/gone/versions/1"},
		{route: "POST /api/v1/tasks/poll", path: "/api/v1/tasks/poll", body: `{"handlers": ["nobody"], "wait_ms": 0}`},
		{route: "POST /api/v1/tasks/poll", path: "/api/v1/tasks/poll", body: `{}`},
		{route: "POST /api/v1/tasks/{id}/complete", path: "/api/v1/tasks/" + run + "/complete", body: `{"token": "t", "output": 1}`},
		{route: "POST /api/v1/tasks/{id}/fail", path: "/api/v1/tasks/" + run + "/fail", body: `{"token": "t", "error": {"message": "m"}}`},
		{route: "POST /api/v1/tasks/{id}/heartbeat", path: "/api/v1/tasks/" + run + "/heartbeat", body: `{"token": "t"}`},
	}
	cases = append(cases, triggerAnswerCases...)
	cases = append(cases, subscriptionAnswerCases(t, b)...)
	covered := map[string]bool{}
	for _, c := range cases {
		op := ops[c.route]
		if op == nil {
			if apiRouteSet(server.New(server.Deps{API: true}).Routes())[c.route] {
				t.Errorf("case %s: not in openapi.json", c.route)
			}
			continue // a route this build does not have
		}
		covered[c.route] = true
		method := strings.SplitN(c.route, " ", 2)[0]
		status, ct, body := b.rawCall(t, method, c.path, b.keyA, c.contentType, c.body)
		answers.check(t, c.route, status, ct, body)
	}
	for route := range ops {
		if !covered[route] {
			t.Errorf("%s has no case in TestOpenAPIDescribesTheAnswers: add one", route)
		}
	}

	// Scopes: without any of the documented ones (and without admin) 403;
	// with only them, neither 401 nor 403. Without a key, 401. An
	// operation that needs more than one names them all in
	// x-required-scopes.
	keys := map[string]string{}
	keyWith := func(scopes []auth.Scope) string {
		name := fmt.Sprint(scopes)
		if k, ok := keys[name]; ok {
			return k
		}
		_, k := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: scopes})
		keys[name] = k
		return k
	}
	allBut := func(scope auth.Scope) []auth.Scope {
		var others []auth.Scope
		for _, s := range auth.AllScopes {
			if s != scope && s != auth.ScopeAdmin {
				others = append(others, s)
			}
		}
		return others
	}
	done := map[string]bool{}
	for _, c := range cases {
		op := ops[c.route]
		if op == nil || done[c.route] || c.route == "GET /api/v1/openapi.json" || c.route == "GET "+definition.SchemaPath {
			continue
		}
		done[c.route] = true
		method := strings.SplitN(c.route, " ", 2)[0]
		status, ct, body := b.rawCall(t, method, c.path, "", c.contentType, c.body)
		if status != http.StatusUnauthorized {
			t.Errorf("%s without a key = %d, want 401", c.route, status)
		}
		answers.check(t, c.route, status, ct, body)
		scope, ok := op.Extensions["x-required-scope"].(string)
		if !ok {
			continue
		}
		required := []auth.Scope{auth.Scope(scope)}
		if all, ok := op.Extensions["x-required-scopes"].([]any); ok {
			required = required[:0]
			for _, s := range all {
				required = append(required, auth.Scope(s.(string)))
			}
		}
		for _, r := range required {
			status, ct, body = b.rawCall(t, method, c.path, keyWith(allBut(r)), c.contentType, c.body)
			if status != http.StatusForbidden || !strings.Contains(fmt.Sprint(body), string(r)) {
				t.Errorf("%s with every scope but %s = %d %v, want 403 naming it", c.route, r, status, body)
			}
			answers.check(t, c.route, status, ct, body)
		}
		if status, _, body = b.rawCall(t, method, c.path, keyWith(required), c.contentType, c.body); status == http.StatusForbidden || status == http.StatusUnauthorized {
			t.Errorf("%s with only scopes %v = %d %v", c.route, required, status, body)
		}
	}
}

// The definition schema is served alone without a key, and inlined in
// the served OpenAPI document as Document, its parts as Document*.
func TestDefinitionSchemaIsServedAndInlined(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + definition.SchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Equal(body, definition.DocumentSchema()) {
		t.Fatalf("GET %s = %d, want the definition schema", definition.SchemaPath, res.StatusCode)
	}
	doc := loadOpenAPI(t)
	d := doc.Components.Schemas["Document"]
	if d == nil || d.Value.Properties["steps"] == nil || d.Value.Properties["steps"].Value.Items.Ref != "#/components/schemas/DocumentStep" {
		t.Fatalf("served Document is not the definition schema: %+v", d)
	}
	for _, name := range []string{"DocumentStep", "DocumentEdge", "DocumentRetry", "DocumentWithEventSet", "DocumentWithHumanLoop"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("served document lacks %s", name)
		}
	}
	if strings.Contains(string(api.OpenAPIDocument), "#/$defs/") {
		t.Error("served document keeps a #/$defs/ reference")
	}
}

// TestServedOpenAPIDocument fetches the document as a client generator
// would and, when OPENAPI_OUT names a file, writes it there (`make
// apiclients` generates and compiles Go and TypeScript clients from it).
func TestServedOpenAPIDocument(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + apiBase + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET openapi.json = %d, %v", res.StatusCode, err)
	}
	if out := os.Getenv("OPENAPI_OUT"); out != "" {
		if err := os.WriteFile(out, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// triggerAnswerCases call the schedules and webhooks operations, in
// order (each case may rely on the ones before).
var triggerAnswerCases = []answerCase{
	{route: "POST /api/v1/schedules", path: "/api/v1/schedules", body: `{"id": "s1", "definition": "orders", "spec": {"cron": "0 8 * * 1-5", "timezone": "Europe/Paris"}, "input": {"amount": 1}}`},
	{route: "POST /api/v1/schedules", path: "/api/v1/schedules", body: `{"id": "s1", "definition": "orders", "spec": {"interval": "1h"}, "input": {"amount": 1}}`},
	{route: "POST /api/v1/schedules", path: "/api/v1/schedules", body: `{"definition": "orders", "spec": {"interval": "1ms"}, "input": {"amount": 1}}`},
	{route: "POST /api/v1/schedules", path: "/api/v1/schedules", body: `{"definition": "missing", "spec": {"interval": "1h"}}`},
	{route: "POST /api/v1/schedules", path: "/api/v1/schedules", body: `{"definition": "orders", "spec": {"interval": "soon"}}`},
	{route: "GET /api/v1/schedules", path: "/api/v1/schedules?limit=1"},
	{route: "GET /api/v1/schedules/{id}", path: "/api/v1/schedules/s1"},
	{route: "GET /api/v1/schedules/{id}", path: "/api/v1/schedules/missing"},
	{route: "PATCH /api/v1/schedules/{id}", path: "/api/v1/schedules/s1", body: `{"paused": true, "note": "n"}`},
	{route: "PATCH /api/v1/schedules/{id}", path: "/api/v1/schedules/s1", body: `{"spec": {"cron": "nope"}}`},
	{route: "POST /api/v1/schedules/{id}/trigger", path: "/api/v1/schedules/s1/trigger", body: `{"overlap": "allow_all"}`},
	{route: "POST /api/v1/schedules/{id}/backfill", path: "/api/v1/schedules/s1/backfill", body: `{"from": "2024-06-03T00:00:00Z", "to": "2024-06-05T00:00:00Z", "overlap": "allow_all"}`},
	{route: "POST /api/v1/schedules/{id}/backfill", path: "/api/v1/schedules/s1/backfill", body: `{"from": "2024-06-05T00:00:00Z", "to": "2024-06-03T00:00:00Z"}`},
	{route: "GET /api/v1/schedules/{id}", path: "/api/v1/schedules/s1"},
	{route: "DELETE /api/v1/schedules/{id}", path: "/api/v1/schedules/s1"},
	{route: "DELETE /api/v1/schedules/{id}", path: "/api/v1/schedules/s1"},
	{route: "POST /api/v1/webhooks", path: "/api/v1/webhooks", body: `{"id": "w1", "event": "shop.order"}`},
	{route: "POST /api/v1/webhooks", path: "/api/v1/webhooks", body: `{"id": "w1", "event": "shop.order"}`},
	{route: "POST /api/v1/webhooks", path: "/api/v1/webhooks", body: `{"id": "bad id", "event": "x", "scheme": "github"}`},
	{route: "GET /api/v1/webhooks", path: "/api/v1/webhooks"},
	{route: "GET /api/v1/webhooks/{id}", path: "/api/v1/webhooks/w1"},
	{route: "GET /api/v1/webhooks/{id}", path: "/api/v1/webhooks/missing"},
	{route: "GET /api/v1/webhooks/{id}/deliveries", path: "/api/v1/webhooks/w1/deliveries"},
	{route: "GET /api/v1/webhooks/{id}/deliveries", path: "/api/v1/webhooks/w1/deliveries?result=refused&limit=5"},
	{route: "GET /api/v1/webhooks/{id}/deliveries", path: "/api/v1/webhooks/w1/deliveries?result=maybe"},
	{route: "GET /api/v1/webhooks/{id}/deliveries", path: "/api/v1/webhooks/missing/deliveries"},
	{route: "POST /api/v1/webhooks/{id}/rotate", path: "/api/v1/webhooks/w1/rotate"},
	{route: "POST /api/v1/webhooks/{id}/rotate", path: "/api/v1/webhooks/missing/rotate"},
	{route: "DELETE /api/v1/webhooks/{id}", path: "/api/v1/webhooks/w1"},
	{route: "DELETE /api/v1/webhooks/{id}", path: "/api/v1/webhooks/w1"},
	{route: "PUT /api/v1/secrets/{name}", path: "/api/v1/secrets/API_TOKEN", body: `{"value": "t0ken", "description": "the chat API"}`},
	{route: "PUT /api/v1/secrets/{name}", path: "/api/v1/secrets/API_TOKEN", body: `{"value": "t0ken2"}`},
	{route: "PUT /api/v1/secrets/{name}", path: "/api/v1/secrets/bad-name", body: `{"value": "x"}`},
	{route: "PUT /api/v1/secrets/{name}", path: "/api/v1/secrets/BIG", body: `{"value": "` + strings.Repeat("x", 64<<10+1) + `"}`},
	{route: "GET /api/v1/secrets", path: "/api/v1/secrets"},
	{route: "GET /api/v1/secrets/{name}", path: "/api/v1/secrets/API_TOKEN"},
	{route: "GET /api/v1/secrets/{name}", path: "/api/v1/secrets/MISSING"},
	{route: "DELETE /api/v1/secrets/{name}", path: "/api/v1/secrets/API_TOKEN"},
	{route: "DELETE /api/v1/secrets/{name}", path: "/api/v1/secrets/API_TOKEN"},
}
