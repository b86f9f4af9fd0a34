package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/server/api"
	"github.com/ductor/ductor/app/testdb"
)

func TestRunsAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("two", "first", "second"))

	code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "two", "input": {"x": 1}, "subject": "order-1", "search_attributes": {"customer": "c7"}, "idempotency_key": "k1"}`)
	if code != 201 || body["status"] != "pending" {
		t.Fatalf("start = %d %v", code, body)
	}
	id := body["id"].(string)
	code, again := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "two", "input": {"x": 1}, "subject": "order-1", "search_attributes": {"customer": "c7"}, "idempotency_key": "k1"}`)
	if code != 200 || again["id"] != id {
		t.Fatalf("repeated idempotency key = %d %v, want 200 with %s", code, again, id)
	}
	run := b.waitStatus(t, id)
	nodes, _ := run["nodes"].([]any)
	if run["status"] != "succeeded" || len(nodes) != 2 || run["subject"] != "order-1" {
		t.Fatalf("run = %v", run)
	}
	first := nodes[0].(map[string]any)
	if first["node"] != "first" || first["type"] != "task" || first["state"] != "succeeded" || first["attempt"] != 1.0 {
		t.Fatalf("first node = %v", first)
	}
	code, hist := b.call(t, "GET", "/api/v1/runs/"+id+"/history", b.keyA, "")
	if ts, _ := hist["transitions"].([]any); code != 200 || float64(len(ts)) != run["transition_count"] {
		t.Fatalf("history = %d, %d entries for %v transitions", code, len(ts), run["transition_count"])
	}
	for query, want := range map[string]int{
		"?status=succeeded": 1, "?status=failed": 0, "?definition=two": 1, "?subject=order-1": 1,
		"?attr.customer=c7": 1, "?attr.customer=c8": 0,
	} {
		_, list := b.call(t, "GET", "/api/v1/runs"+query, b.keyA, "")
		if got, _ := list["runs"].([]any); len(got) != want {
			t.Errorf("list %s: %d runs, want %d", query, len(got), want)
		}
	}
}

func TestRunsAPIPagination(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("one", "only"))
	for range 5 {
		if code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "one"}`); code != 201 {
			t.Fatalf("start = %d %v", code, body)
		}
	}
	seen := map[string]bool{}
	path := "/api/v1/runs?limit=2"
	for pages := 0; ; pages++ {
		_, page := b.call(t, "GET", path, b.keyA, "")
		for _, r := range page["runs"].([]any) {
			seen[r.(map[string]any)["id"].(string)] = true
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		path = "/api/v1/runs?limit=2&cursor=" + next
	}
	if len(seen) != 5 {
		t.Fatalf("paged through %d distinct runs, want 5", len(seen))
	}
}

func TestRunsAPIErrors(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("one", "only"))
	_, reader := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsRead}})
	cases := []struct {
		method, path, key, body string
		status                  int
		code                    apperr.Code
	}{
		{"POST", "/api/v1/runs", b.keyA, `{"definition": "nope"}`, 404, apperr.NotFound},
		{"POST", "/api/v1/runs", b.keyA, `{}`, 400, apperr.Invalid},
		{"POST", "/api/v1/runs", b.keyA, `{"definition": "one", "bogus": 1}`, 400, apperr.Invalid},
		{"POST", "/api/v1/runs", b.keyA, `{"definition": `, 400, apperr.Invalid},
		{"POST", "/api/v1/runs", reader, `{"definition": "one"}`, 403, apperr.Forbidden},
		{"GET", "/api/v1/runs/not-a-uuid", b.keyA, ``, 404, apperr.NotFound},
		{"GET", "/api/v1/runs/" + uuid.NewString(), b.keyA, ``, 404, apperr.NotFound},
		{"GET", "/api/v1/runs?limit=0", b.keyA, ``, 400, apperr.Invalid},
		{"GET", "/api/v1/runs?cursor=zzz", b.keyA, ``, 400, apperr.Invalid},
	}
	for _, tc := range cases {
		code, body := b.call(t, tc.method, tc.path, tc.key, tc.body)
		errObj, _ := body["error"].(map[string]any)
		if code != tc.status || errObj["code"] != string(tc.code) {
			t.Errorf("%s %s %s = %d %v, want %d %s", tc.method, tc.path, tc.body, code, body, tc.status, tc.code)
		}
	}
	_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "one"}`)
	id := started["id"].(string)
	b.waitStatus(t, id)
	if code, _ := b.call(t, "POST", "/api/v1/runs/"+id+"/nodes/only/retry", b.keyA, ``); code != 409 {
		t.Errorf("retrying a succeeded node = %d, want 409", code)
	}
	if code, _ := b.call(t, "POST", "/api/v1/runs/"+id+"/nodes/ghost/retry", b.keyA, ``); code != 404 {
		t.Errorf("retrying a missing node = %d, want 404", code)
	}
}

// Tenant B's key on tenant A's objects gets 404 and none of A's data, on
// every API route. A new route without a case here fails the test.
func TestAPITenantIsolation(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("secret", "only"))
	_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "secret"}`)
	id := started["id"].(string)
	b.waitStatus(t, id)
	secrets := []string{id, b.tenantA.ID.String()}
	private := strings.Replace(ordersJSON, `"orders"`, `"private"`, 1)
	_, pub := b.call(t, "POST", "/api/v1/definitions/private/versions", b.keyA, private)
	_, draft := b.call(t, "PUT", "/api/v1/definitions/private", b.keyA, strings.Replace(private, "* 2.0", "* 7.0", 1))
	secrets = append(secrets, pub["manifest_hash"].(string), draft["manifest_hash"].(string))
	bDraft := `{"key": "secret", "steps": [{"ref": "b", "type": "transform", "with": {"expr": "0"}}]}`
	_, batch := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, `{"action": "cancel", "run_ids": ["`+id+`"], "reason": "secret reason"}`)
	secrets = append(secrets, batch["id"].(string), "secret reason")

	cases := map[string]struct {
		path, body string
		status     int
	}{
		"GET /api/v1/openapi.json":                  {"/api/v1/openapi.json", "", 200}, // documentation, no tenant data
		"GET /api/v1/schemas/definition.json":       {"/api/v1/schemas/definition.json", "", 200},
		"GET /api/v1/whoami":                        {"/api/v1/whoami", "", 200},
		"GET /api/v1/usage":                         {"/api/v1/usage", "", 200},
		"POST /api/v1/runs":                         {"/api/v1/runs", `{"definition": "secret"}`, 404},
		"GET /api/v1/runs":                          {"/api/v1/runs", "", 200},
		"GET /api/v1/runs/:id":                      {"/api/v1/runs/" + id, "", 404},
		"GET /api/v1/runs/:id/nodes/:node/children": {"/api/v1/runs/" + id + "/nodes/only/children", "", 404},
		// B's own batch, naming A's run, which it will not find.
		"POST /api/v1/runs/batch":                  {"/api/v1/runs/batch", `{"action": "cancel", "run_ids": ["` + id + `"]}`, 202},
		"GET /api/v1/batches/:id":                  {"/api/v1/batches/" + batch["id"].(string), "", 404},
		"POST /api/v1/batches/:id/stop":            {"/api/v1/batches/" + batch["id"].(string) + "/stop", "", 404},
		"GET /api/v1/runs/:id/history":             {"/api/v1/runs/" + id + "/history", "", 404},
		"POST /api/v1/runs/:id/continue-as-new":    {"/api/v1/runs/" + id + "/continue-as-new", `{"request_id": "x"}`, 404},
		"POST /api/v1/runs/:id/cancel":             {"/api/v1/runs/" + id + "/cancel", "", 404},
		"POST /api/v1/runs/:id/nodes/:node/retry":  {"/api/v1/runs/" + id + "/nodes/only/retry", "", 404},
		"POST /api/v1/runs/:id/nodes/:node/cancel": {"/api/v1/runs/" + id + "/nodes/only/cancel", "", 404},
		"POST /api/v1/runs/:id/upgrade":            {"/api/v1/runs/" + id + "/upgrade", `{"version": 1}`, 404},
		"POST /api/v1/runs/:id/retry":              {"/api/v1/runs/" + id + "/retry", `{"node": "only"}`, 404},
		"POST /api/v1/compile":                     {"/api/v1/compile", bDraft, 200},
		"GET /api/v1/definitions":                  {"/api/v1/definitions", "", 200},
		"GET /api/v1/definitions/:key":             {"/api/v1/definitions/private", "", 404},
		// B's own draft under a key A also uses; A's stays untouched.
		"PUT /api/v1/definitions/:key":                {"/api/v1/definitions/secret", bDraft, 200},
		"POST /api/v1/definitions/:key/versions":      {"/api/v1/definitions/private/versions", "", 404},
		"GET /api/v1/definitions/:key/versions/:n":    {"/api/v1/definitions/private/versions/1", "", 404},
		"DELETE /api/v1/definitions/:key/versions/:n": {"/api/v1/definitions/private/versions/1", "", 404},
	}
	waiting, hidden := waitingIsolationCases(t, b, id)
	maps.Copy(cases, waiting)
	secrets = append(secrets, hidden...)
	tasks, tokens := taskIsolationCases(t, b)
	maps.Copy(cases, tasks)
	secrets = append(secrets, tokens...)
	triggers, names := triggerIsolationCases(t, b)
	maps.Copy(cases, triggers)
	secrets = append(secrets, names...)
	vault, hiddenSecrets := secretIsolationCases(t, b)
	maps.Copy(cases, vault)
	secrets = append(secrets, hiddenSecrets...)
	subs, urls := subscriptionIsolationCases(t, b)
	maps.Copy(cases, subs)
	secrets = append(secrets, urls...)
	for _, route := range b.echoRoutes {
		tc, ok := cases[route]
		if !ok {
			t.Errorf("route %s has no tenant-isolation case", route)
			continue
		}
		method := strings.SplitN(route, " ", 2)[0]
		code, body := b.call(t, method, tc.path, b.keyB, tc.body)
		if code != tc.status {
			t.Errorf("%s as tenant B = %d %v, want %d", route, code, body, tc.status)
		}
		raw, _ := json.Marshal(body)
		for _, secret := range secrets {
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s as tenant B leaks tenant A's data: %s", route, raw)
			}
		}
	}
	if _, d := b.call(t, "GET", "/api/v1/definitions/private", b.keyA, ""); d["latest_version"] != 1.0 ||
		d["draft"].(map[string]any)["manifest_hash"] != draft["manifest_hash"] {
		t.Errorf("tenant B changed tenant A's definition: %v", d)
	}
	if d, err := b.store.DefinitionGet(context.Background(), b.tenantA.ID, "secret"); err != nil || d.Draft != nil {
		t.Errorf("tenant A's secret = %+v, %v; want it without tenant B's draft", d, err)
	}
}

func TestScatterChildrenAPI(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	c, err := definition.Compile([]byte(`
key: wide
limits: {max_inline_children: 500}
steps:
  - ref: fan
    type: scatter
    with: {items_expr: input.items, max_inline_children: 500, do: {type: transform, with: {expr: item}}}
`), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	b.publish(t, c.Manifest)
	items := make([]int, 120)
	raw, _ := json.Marshal(map[string]any{"definition": "wide", "input": map[string]any{"items": items}})
	_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, string(raw))
	id := started["id"].(string)
	if run := b.waitStatus(t, id); run["status"] != "succeeded" {
		t.Fatalf("run = %v", run)
	}
	seen, pages := 0, 0
	path := "/api/v1/runs/" + id + "/nodes/fan/children?limit=50"
	for {
		code, page := b.call(t, "GET", path, b.keyA, "")
		if code != 200 {
			t.Fatalf("children page = %d %v", code, page)
		}
		counts := page["counts"].(map[string]any)
		if counts["succeeded"] != 120.0 {
			t.Fatalf("counts = %v", counts)
		}
		kids := page["children"].([]any)
		for i, k := range kids {
			if k.(map[string]any)["index"] != float64(seen+i) {
				t.Fatalf("child %d has index %v", seen+i, k.(map[string]any)["index"])
			}
		}
		seen += len(kids)
		pages++
		next, ok := page["next_after"].(float64)
		if !ok {
			break
		}
		path = fmt.Sprintf("/api/v1/runs/%s/nodes/fan/children?limit=50&after=%d", id, int(next))
	}
	if seen != 120 || pages != 3 {
		t.Fatalf("paged %d children in %d pages, want 120 in 3", seen, pages)
	}
}

// TestScatterChildrenAPIFilters: ?state= keeps the children in one state
// and ?q= those whose key contains the text; the counts stay the whole
// scatter's.
func TestScatterChildrenAPIFilters(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: sieve
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: lists.range(30)
      key_expr: '"n" + string(item)'
      do: {type: transform, with: {expr: 'item % 7 == 3 ? 1 / (item - item) : item'}}
`)
	id := b.startRun(t, "sieve")
	b.waitStatus(t, id)
	children := func(query string) ([]string, map[string]any) {
		t.Helper()
		code, page := b.call(t, "GET", "/api/v1/runs/"+id+"/nodes/fan/children?"+query, b.keyA, "")
		if code != 200 {
			t.Fatalf("children?%s = %d %v", query, code, page)
		}
		var keys []string
		for _, k := range page["children"].([]any) {
			keys = append(keys, fmt.Sprint(k.(map[string]any)["key"]))
		}
		return keys, page["counts"].(map[string]any)
	}
	failed, counts := children("state=failed")
	if strings.Join(failed, " ") != "n3 n10 n17 n24" || counts["failed"] != 4.0 || counts["succeeded"] != 26.0 {
		t.Errorf("state=failed: %v, counts %v", failed, counts)
	}
	if got, _ := children("state=failed&q=1"); strings.Join(got, " ") != "n10 n17" {
		t.Errorf("state=failed&q=1: %v", got)
	}
	if got, _ := children("q=n2"); len(got) != 11 || got[0] != "n2" || got[1] != "n20" {
		t.Errorf("q=n2: %v", got)
	}
	if got, _ := children("state=succeeded&q=n2&limit=3"); strings.Join(got, " ") != "n2 n20 n21" {
		t.Errorf("state=succeeded&q=n2&limit=3: %v", got)
	}
	if code, out := b.call(t, "GET", "/api/v1/runs/"+id+"/nodes/fan/children?state=sleepy", b.keyA, ""); code != 400 {
		t.Errorf("state=sleepy = %d %v", code, out)
	}
}

// The API's run list returns summaries: input and output only on
// request, and then only up to a size.
func TestRunListReturnsSummaries(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("one", "only"))
	big := strings.Repeat("x", api.MaxIncludedBytes)
	for _, input := range []string{`{"small": 1}`, `{"big": "` + big + `"}`} {
		if code, body := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "one", "input": `+input+`}`); code != 201 {
			t.Fatalf("start = %d %v", code, body)
		}
	}
	_, list := b.call(t, "GET", "/api/v1/runs", b.keyA, "")
	for _, r := range list["runs"].([]any) {
		if _, ok := r.(map[string]any)["input"]; ok {
			t.Errorf("a run summary carries its input unasked: %v", r)
		}
	}
	_, list = b.call(t, "GET", "/api/v1/runs?include=input,output", b.keyA, "")
	var small, cut int
	for _, r := range list["runs"].([]any) {
		r := r.(map[string]any)
		if in, ok := r["input"].(map[string]any); ok && in["small"] == 1.0 {
			small++
		}
		if tr, _ := r["truncated"].([]any); len(tr) == 1 && tr[0] == "input" && r["input"] == nil {
			cut++
		}
	}
	if small != 1 || cut != 1 {
		t.Fatalf("with include: %d small inputs and %d cut, want one each: %v", small, cut, list)
	}
	if code, _ := b.call(t, "GET", "/api/v1/runs?include=secrets", b.keyA, ""); code != 400 {
		t.Errorf("include=secrets = %d, want 400", code)
	}
}
