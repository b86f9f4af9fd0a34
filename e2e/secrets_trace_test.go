package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
)

// TestExportedTracesHoldNoSecret: runs whose http step sends a tenant
// secret in its URL, headers and body, to a far end that echoes it back
// (once with a 200, once in a 401's body that fails the step), export
// their run, tick and attempt spans to an OTLP receiver, and no span's
// name, attributes, events, links or status holds the value; nor does the
// log.
func TestExportedTracesHoldNoSecret(t *testing.T) {
	t.Parallel()
	o := startOpsWith(t, map[string]string{"DUCTOR_SECRET_KEY": "an-e2e-secret-key-of-at-least-32-characters"})
	far := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		if r.URL.Path == "/deny" {
			w.WriteHeader(http.StatusUnauthorized)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"auth": r.Header.Get("Authorization"), "query": r.URL.RawQuery, "body": string(body)})
	}))
	t.Cleanup(far.Close)
	const value = "sk_trace_secret_value_5e1d"
	if code, out := o.call(t, "PUT", "/secrets/API_TOKEN", `{"value": "`+value+`"}`, nil); code != http.StatusCreated {
		t.Fatalf("set = %d %v", code, out)
	}
	for _, path := range []string{"ok", "deny"} {
		o.publish(t, fmt.Sprintf(`{"key": "secret-%s", "steps": [{"ref": "call", "type": "http", "retry": {"max_attempts": 1},
  "with": {"url_expr": "\"%s/%s?k=\" + secret(\"API_TOKEN\")", "method": "POST", "auth": {"bearer": "API_TOKEN"},
    "headers_expr": "{\"X-Api-Key\": secret(\"API_TOKEN\")}", "body_expr": "{\"token\": secret(\"API_TOKEN\")}"}}]}`, path, far.URL, path))
	}
	ok := o.runTo(t, `{"definition": "secret-ok"}`, nil, "succeeded")
	denied := o.runTo(t, `{"definition": "secret-deny"}`, nil, "failed")
	if _, run := o.call(t, "GET", "/runs/"+ok, "", nil); !strings.Contains(fmt.Sprint(run["output"]), "Bearer ***") {
		t.Fatalf("the far end did not echo the masked header: %v", run["output"])
	}
	if err := o.Stop(t); err != nil { // flushes the spans
		t.Fatal(err)
	}

	attempts := o.sink.named("attempt call")
	if len(attempts) != 2 || len(o.sink.named("run secret-")) != 2 {
		t.Fatalf("spans: %d attempts, %d runs; want 2 and 2", len(attempts), len(o.sink.named("run secret-")))
	}
	o.sink.mu.Lock()
	defer o.sink.mu.Unlock()
	for _, sp := range o.sink.spans {
		text, err := protojson.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), value) {
			t.Errorf("span %q holds the secret's value: %s", sp.Name, text)
		}
	}
	for _, id := range []string{ok, denied} {
		for _, l := range o.logLines(t, id) {
			if line, _ := json.Marshal(l); strings.Contains(string(line), value) {
				t.Errorf("log line holds the secret's value: %s", line)
			}
		}
	}
	if strings.Contains(o.Stderr.String(), value) || strings.Contains(o.Stdout.String(), value) {
		t.Errorf("the process's output holds the secret's value")
	}
}
