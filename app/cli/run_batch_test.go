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
	"sync"
	"testing"
)

// `ductor run cancel --filter …` posts the filter as the batch API's
// filter object (attributes typed), `--run-id` the ids; with --wait it
// follows the batch to its end and prints it.
func TestRunBatchCommand(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	polls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "GET" && r.URL.Path == "/api/v1/batches/b1" {
			polls++
			status := map[bool]string{true: "completed", false: "running"}[polls >= 2]
			_, _ = w.Write([]byte(`{"id": "b1", "action": "cancel", "status": "` + status + `", "total": 3, "done": 3, "failed": 0}`))
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		bodies = append(bodies, body)
		if r.URL.Path != "/api/v1/runs/batch" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id": "b1", "action": "cancel", "status": "running", "total": 3, "done": 0, "failed": 0}`))
	}))
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string {
		return map[string]string{"DUCTOR_URL": srv.URL, "DUCTOR_API_KEY": "dk_test"}[k]
	}}
	ctx := context.Background()
	err := Run(ctx, []string{"run", "cancel", "--filter", "status=running", "--filter", "definition=orders",
		"--filter", "attr.region=eu", "--filter", "attr.n=3", "--reason", "freeze", "--wait"}, env)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := bodies[0]["filter"].(map[string]any)
	attrs, _ := f["attributes"].(map[string]any)
	if bodies[0]["action"] != "cancel" || bodies[0]["reason"] != "freeze" || f["status"] != "running" || f["definition"] != "orders" ||
		attrs["region"] != "eu" || attrs["n"] != 3.0 {
		t.Errorf("posted %v", bodies[0])
	}
	if !strings.Contains(out.String(), `"completed"`) || !strings.Contains(errOut.String(), "3 of 3 done") {
		t.Errorf("printed %q and %q", out.String(), errOut.String())
	}
	out.Reset()
	if err := Run(ctx, []string{"run", "retry", "--run-id", "r1,r2", "--run-id", "r3"}, env); err != nil {
		t.Fatal(err)
	}
	if ids, _ := bodies[1]["run_ids"].([]any); bodies[1]["action"] != "retry" || len(ids) != 3 || bodies[1]["filter"] != nil {
		t.Errorf("posted %v", bodies[1])
	}
	for _, args := range [][]string{
		{"run", "cancel", "--filter", "colour=red"},
		{"run", "cancel", "--filter", "status"},
		{"run", "retry", "--filter", "status=failed", "--run-id", "r1"},
	} {
		if err := Run(ctx, args, env); !errors.Is(err, ErrUsage) {
			t.Errorf("%v: %v, want usage", args, err)
		}
	}
}
