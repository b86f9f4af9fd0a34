package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

func apiError(body map[string]any) (code string, details []map[string]any) {
	e, _ := body["error"].(map[string]any)
	code, _ = e["code"].(string)
	list, _ := e["details"].([]any)
	for _, d := range list {
		details = append(details, d.(map[string]any))
	}
	return code, details
}

// An invalid document is a 422 listing every problem with its path and step.
func TestCompileAPIListsEveryProblem(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	code, body := b.send(t, "POST", "/api/v1/compile", b.keyA, "application/yaml", ordersYAML)
	want, _ := definition.Compile([]byte(ordersJSON), definition.FormatJSON)
	if code != 200 || body["manifest_hash"] != want.Hash || body["manifest"] == nil {
		t.Fatalf("compile = %d %v", code, body)
	}
	bad := `{"key": "bad", "steps": [
		{"ref": "a", "type": "sleep", "with": {"duration": "1s"}},
		{"ref": "b", "type": "transform", "with": {"expr": "1 +"}}
	], "edges": [{"from": "a", "to": "ghost"}]}`
	code, body = b.call(t, "POST", "/api/v1/compile", b.keyA, bad)
	errCode, details := apiError(body)
	if code != 422 || errCode != "invalid_definition" || len(details) < 3 {
		t.Fatalf("invalid = %d %v, want 422 with every problem", code, body)
	}
	seen := map[string]string{}
	for _, d := range details {
		seen[d["path"].(string)], _ = d["step"].(string)
		if d["message"] == "" {
			t.Errorf("problem without a message: %v", d)
		}
	}
	if seen["steps[0].type"] != "a" || seen["steps[1].with.expr"] != "b" || !hasPrefixKey(seen, "edges[0]") {
		t.Fatalf("problems = %v, want steps[0].type (a), steps[1].with.expr (b) and edges[0]", details)
	}
	if code, body := b.call(t, "POST", "/api/v1/compile", b.keyA, `{"key": `); code != 422 {
		t.Fatalf("malformed JSON = %d %v, want 422", code, body)
	}
}

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// Over 1 MiB is a 413: refused by Content-Length before the body is read,
// and by reading no further than the limit without one.
func TestCompileAPITooLarge(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	big := `{"key": "big", "description": "` + strings.Repeat("x", definition.MaxDocumentBytes) + `", "steps": []}`
	for _, path := range []string{"/api/v1/compile", "/api/v1/definitions/big", "/api/v1/definitions/big/versions"} {
		method := map[bool]string{true: "PUT", false: "POST"}[path == "/api/v1/definitions/big"]
		// Expect: 100-continue (what curl sends for a big body): the
		// client holds the body until the server answers. Without it the
		// server's early 413 and close can reach the client as a TCP reset
		// while it is still writing.
		req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+b.keyA)
		req.Header.Set("Expect", "100-continue")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		res.Body.Close()
		if res.StatusCode != 413 {
			t.Errorf("%s %s of %d bytes = %d, want 413", method, path, len(big), res.StatusCode)
		}
	}
	// Chunked: no Content-Length.
	req, _ := http.NewRequest("POST", b.srv.URL+"/api/v1/compile", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+b.keyA)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 413 {
		t.Errorf("chunked big document = %v, %v; want 413", res, err)
	}
	// A declared length over the limit is answered although no body ever comes.
	conn, err := net.Dial("tcp", b.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "POST /api/v1/compile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
		b.keyA, definition.MaxDocumentBytes+1)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || res.StatusCode != 413 {
		t.Fatalf("declared big document = %v, %v; want 413 before reading", res, err)
	}
}

// A draft is saved only when valid; an empty publish publishes it; the key
// in the URL fills in a missing one and must match a present one.
func TestDefinitionsAPIDraft(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	noKey := strings.Replace(ordersYAML, "key: orders\n", "", 1)
	code, body := b.send(t, "PUT", "/api/v1/definitions/orders", b.keyA, "application/x-yaml", noKey)
	want, _ := definition.Compile([]byte(ordersJSON), definition.FormatJSON)
	if code != 200 || body["manifest_hash"] != want.Hash || body["key"] != "orders" {
		t.Fatalf("save draft = %d %v, want 200 with the manifest hash", code, body)
	}
	invalid := strings.Replace(ordersJSON, "input.amount * 2.0", "input.amount *", 1)
	if code, body := b.call(t, "PUT", "/api/v1/definitions/orders", b.keyA, invalid); code != 422 {
		t.Fatalf("invalid draft = %d %v, want 422", code, body)
	}
	code, body = b.call(t, "PUT", "/api/v1/definitions/other", b.keyA, ordersJSON)
	if errCode, details := apiError(body); code != 422 || errCode != "invalid_definition" || len(details) != 1 || details[0]["path"] != "key" {
		t.Fatalf("mismatched key = %d %v, want 422 at key", code, body)
	}
	_, d := b.call(t, "GET", "/api/v1/definitions/orders", b.keyA, "")
	draft, _ := d["draft"].(map[string]any)
	if draft["manifest_hash"] != want.Hash || draft["format"] != "yaml" || !strings.HasPrefix(draft["source"].(string), "\nkey: \"orders\"\n") {
		t.Fatalf("draft after an invalid save = %v, want the valid one kept", draft)
	}
	code, pub := b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, "")
	if code != 201 || pub["version"] != 1.0 || pub["manifest_hash"] != want.Hash {
		t.Fatalf("publish the draft = %d %v", code, pub)
	}
	if code, _ := b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, ""); code != 200 {
		t.Fatalf("publishing the unchanged draft again = %d, want 200", code)
	}
	_, v := b.call(t, "GET", "/api/v1/definitions/orders/versions/1", b.keyA, "")
	if v["format"] != "yaml" || v["source"] != draft["source"] {
		t.Fatalf("published draft = %v", v)
	}
	if code, _ := b.call(t, "POST", "/api/v1/definitions/nothing/versions", b.keyA, ""); code != 404 {
		t.Fatalf("publishing a missing draft = %d, want 404", code)
	}
	if code, _ := b.call(t, "POST", "/api/v1/definitions/other/versions", b.keyA, ordersJSON); code != 422 {
		t.Fatalf("publishing under another key = %d, want 422", code)
	}
	if _, err := b.store.DefinitionGet(context.Background(), b.tenantA.ID, "other"); err == nil {
		t.Fatal("a refused document created a definition")
	}
}

// Unpublishing keeps its runs going; new runs by key take the newest
// version still published.
func TestDefinitionsAPIUnpublish(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, ordersJSON)
	b.call(t, "POST", "/api/v1/definitions/orders/versions", b.keyA, strings.Replace(ordersJSON, "* 2", "* 3", 1))
	_, onV2 := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": 1}}`)
	code, body := b.call(t, "DELETE", "/api/v1/definitions/orders/versions/2", b.keyA, "")
	if code != 200 || body["published"] != false || body["unpublished_at"] == nil {
		t.Fatalf("unpublish = %d %v", code, body)
	}
	if run := b.waitStatus(t, onV2["id"].(string)); run["status"] != "succeeded" || run["version"] != 2.0 {
		t.Fatalf("the run on version 2 = %v, want it to finish", run)
	}
	_, started := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": 1}}`)
	if run := b.waitStatus(t, started["id"].(string)); run["version"] != 1.0 {
		t.Fatalf("a run by key after unpublishing v2 is on version %v, want 1", run["version"])
	}
	if code, _ := b.call(t, "DELETE", "/api/v1/definitions/orders/versions/2", b.keyA, ""); code != 200 {
		t.Fatalf("unpublishing again = %d, want 200", code)
	}
	for _, path := range []string{"/api/v1/definitions/orders/versions/9", "/api/v1/definitions/orders/versions/x", "/api/v1/definitions/none/versions/1"} {
		if code, _ := b.call(t, "DELETE", path, b.keyA, ""); code != 404 {
			t.Errorf("DELETE %s = %d, want 404", path, code)
		}
	}
	_, d := b.call(t, "GET", "/api/v1/definitions/orders", b.keyA, "")
	versions := d["versions"].([]any)
	if d["latest_version"] != 1.0 || len(versions) != 2 || versions[0].(map[string]any)["published"] != false {
		t.Fatalf("definition = %v", d)
	}
	b.call(t, "DELETE", "/api/v1/definitions/orders/versions/1", b.keyA, "")
	if code, _ := b.call(t, "POST", "/api/v1/runs", b.keyA, `{"definition": "orders", "input": {"amount": 1}}`); code != 404 {
		t.Fatalf("a run by key with nothing published = %d, want 404", code)
	}
	audit, _ := b.store.AuditList(context.Background(), b.tenantA.ID, 10)
	unpublished := 0
	for _, a := range audit {
		if a.Action == store.AuditDefinitionUnpublish {
			unpublished++
		}
	}
	if unpublished != 2 {
		t.Fatalf("%d unpublish audit rows, want 2 (one per version, none for a repeat)", unpublished)
	}
}
