package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The signal and event commands send what the API expects and show its
// refusals.
func TestSignalAndEventCommands(t *testing.T) {
	t.Parallel()
	var got []string
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(raw), `"dup"`) {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error": {"code": "conflict", "message": "already sent"}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id": "ev-1"}`))
	}))
	t.Cleanup(srv.Close)
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Getenv: func(k string) string {
		return map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": "dk_test"}[k]
	}}
	ctx := context.Background()
	if err := Run(ctx, []string{"signal", "run-1", "go", "--payload", `{"n": 1}`, "--request-id", "r1"}, env); err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, []string{"event", "paid", "--data", `{"order": 7}`}, env); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ev-1\n" {
		t.Errorf("event printed %q", out.String())
	}
	err := Run(ctx, []string{"signal", "run-1", "go", "--request-id", "dup"}, env)
	if err == nil || !strings.Contains(err.Error(), "already sent") {
		t.Errorf("duplicate: %v", err)
	}
	if err := Run(ctx, []string{"signal", "run-1", "go"}, env); !errors.Is(err, ErrUsage) {
		t.Errorf("no request id: %v, want usage", err)
	}
	if err := Run(ctx, []string{"event", "x", "--data", "{"}, env); err == nil {
		t.Error("bad JSON data accepted")
	}
	sig, ev := bodies[0], bodies[1]
	if got[0] != "POST /api/v1/runs/run-1/signals Bearer dk_test" || sig["request_id"] != "r1" || sig["name"] != "go" ||
		sig["payload"].(map[string]any)["n"] != 1.0 {
		t.Errorf("signal request %s %v", got[0], sig)
	}
	if got[1] != "POST /api/v1/events Bearer dk_test" || ev["name"] != "paid" || ev["data"].(map[string]any)["order"] != 7.0 {
		t.Errorf("event request %s %v", got[1], ev)
	}
}
