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

// `ductor node cancel` posts the reason to the node's cancel route, the
// node id escaped, and shows the API's refusal.
func TestNodeCancelCommand(t *testing.T) {
	t.Parallel()
	var paths []string
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "done") {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error": {"code": "conflict", "message": "node \"done\" is succeeded"}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status": "accepted"}`))
	}))
	t.Cleanup(srv.Close)
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Getenv: func(k string) string {
		return map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": "dk_test"}[k]
	}}
	ctx := context.Background()
	if err := Run(ctx, []string{"node", "cancel", "run-1", "resize[7]", "--reason", "stuck"}, env); err != nil {
		t.Fatal(err)
	}
	if paths[0] != "POST /api/v1/runs/run-1/nodes/resize%5B7%5D/cancel" || bodies[0]["reason"] != "stuck" {
		t.Errorf("request %s %v", paths[0], bodies[0])
	}
	if !strings.Contains(out.String(), `"accepted"`) {
		t.Errorf("printed %q", out.String())
	}
	if err := Run(ctx, []string{"node", "cancel", "run-1", "done"}, env); err == nil || !strings.Contains(err.Error(), "is succeeded") {
		t.Errorf("refusal: %v", err)
	}
	for _, args := range [][]string{{"node"}, {"node", "cancel", "run-1"}, {"node", "stop", "run-1", "a"}} {
		if err := Run(ctx, args, env); !errors.Is(err, ErrUsage) {
			t.Errorf("%v: %v, want usage", args, err)
		}
	}
}
