package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// An idempotency key, in the body or in the standard Idempotency-Key
// header, names one request: repeated with the same request it answers
// what the first made; with another input, version or event it is refused
// with 409 idempotency_mismatch naming what the key made; the header and
// the body's key must agree.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publish(t, noopManifest("idem", "only"))
	runs, events := "/api/v1/runs", "/api/v1/events"
	header := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }

	code, first := b.call(t, "POST", runs, b.keyA, `{"definition": "idem", "input": {"n": 1}, "idempotency_key": "r1"}`)
	if code != http.StatusCreated {
		t.Fatalf("start: %d %v", code, first)
	}
	id := first["id"]
	for name, c := range map[string]struct {
		body    string
		headers map[string]string
	}{
		"same body key":       {`{"definition": "idem", "input": {"n": 1}, "idempotency_key": "r1"}`, nil},
		"same key as header":  {`{"definition": "idem", "input": {"n": 1}}`, header("r1")},
		"header and body key": {`{"definition": "idem", "input": {"n": 1}, "idempotency_key": "r1"}`, header("r1")},
	} {
		if code, again := b.callWith(t, "POST", runs, b.keyA, c.body, c.headers); code != http.StatusOK || again["id"] != id {
			t.Errorf("%s: %d %v, want 200 with run %v", name, code, again, id)
		}
	}
	for name, body := range map[string]string{
		"another input":   `{"definition": "idem", "input": {"n": 2}, "idempotency_key": "r1"}`,
		"another version": `{"definition": "idem", "version": 1, "input": {"n": 1}, "idempotency_key": "r1"}`,
	} {
		code, out := b.call(t, "POST", runs, b.keyA, body)
		details, _ := out["error"].(map[string]any)["details"].(map[string]any)
		if code != http.StatusConflict || errorCodeOf(out) != "idempotency_mismatch" || details["run_id"] != id {
			t.Errorf("%s with a used key: %d %v, want 409 idempotency_mismatch naming run %v", name, code, out, id)
		}
	}
	if code, out := b.callWith(t, "POST", runs, b.keyA, `{"definition": "idem", "idempotency_key": "r1"}`, header("r2")); code != http.StatusBadRequest {
		t.Errorf("header and body keys that differ: %d %v, want 400", code, out)
	}
	if code, out := b.callWith(t, "POST", runs, b.keyA, `{"definition": "idem"}`, header(strings.Repeat("k", 256))); code != http.StatusBadRequest {
		t.Errorf("a 256-character key: %d %v, want 400", code, out)
	}

	code, ev := b.callWith(t, "POST", events, b.keyA, `{"name": "paid", "data": {"order": 1}}`, header("e1"))
	if code != http.StatusAccepted {
		t.Fatalf("event: %d %v", code, ev)
	}
	if code, again := b.call(t, "POST", events, b.keyA, `{"name": "paid", "data": {"order": 1}, "idempotency_key": "e1"}`); code != http.StatusAccepted || again["id"] != ev["id"] {
		t.Errorf("repeated event key: %d %v, want the first event %v", code, again, ev["id"])
	}
	code, out := b.callWith(t, "POST", events, b.keyA, `{"name": "paid", "data": {"order": 2}}`, header("e1"))
	details, _ := out["error"].(map[string]any)["details"].(map[string]any)
	if code != http.StatusConflict || errorCodeOf(out) != "idempotency_mismatch" || details["event_id"] != ev["id"] {
		t.Errorf("event key with other data: %d %v, want 409 idempotency_mismatch naming event %v", code, out, ev["id"])
	}
}

// errorCodeOf is the code of an error body call decoded.
func errorCodeOf(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}
