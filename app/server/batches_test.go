package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/ductor/ductor/workers"
)

// A batch's errors list holds its failures and nothing else: chunks that
// fail nothing add no entry, and a failure keeps its run id and message.
func TestBatchErrorsHoldOnlyFailures(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.publishYAML(t, `
key: parked
steps:
  - { ref: wait, type: signal, with: { name: never } }
`)
	var ids []string
	for range workers.BatchChunk + 10 {
		ids = append(ids, b.startRun(t, "parked"))
	}
	missing := uuid.New().String()
	ids = append(ids, missing)
	raw, _ := json.Marshal(map[string]any{"action": "cancel", "run_ids": ids})
	code, created := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, string(raw))
	if code != http.StatusAccepted {
		t.Fatalf("create batch: %d %v", code, created)
	}
	runBatches(t, b.runs)
	_, got := b.call(t, "GET", "/api/v1/batches/"+created["id"].(string), b.keyA, "")
	errs, _ := got["errors"].([]any)
	if got["status"] != "completed" || got["failed"] != float64(1) || len(errs) != 1 {
		t.Fatalf("batch %v, want completed with exactly one error", got)
	}
	e := errs[0].(map[string]any)
	if e["run_id"] != missing || !strings.Contains(e["message"].(string), "no such run") {
		t.Errorf("error %v, want the missing run %s and why", e, missing)
	}
}
