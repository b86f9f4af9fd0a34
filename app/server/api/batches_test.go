package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server/servertest"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/runs"
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
	for range runs.BatchChunk + 10 {
		ids = append(ids, b.startRun(t, "parked"))
	}
	missing := uuid.New().String()
	ids = append(ids, missing)
	raw, _ := json.Marshal(map[string]any{"action": "cancel", "run_ids": ids})
	code, created := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, string(raw))
	if code != http.StatusAccepted {
		t.Fatalf("create batch: %d %v", code, created)
	}
	servertest.RunBatches(t, b.runs.Runs)
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

// A tenant's running batches have a bounded number of runs left to act
// on: a batch past it answers 429 with Retry-After until the queue
// drains, one larger than the whole bound 422; another tenant's queue is
// its own.
func TestBatchQueueIsBoundedPerTenant(t *testing.T) {
	t.Parallel()
	b := setupAPIConfig(t, func(c *workers.Config) { c.BatchQueueMax = 100 })
	create := func(key string, n int) (int, map[string]any, http.Header) {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = uuid.New().String()
		}
		raw, _ := json.Marshal(map[string]any{"action": "cancel", "run_ids": ids})
		req, _ := http.NewRequest("POST", b.srv.URL+"/api/v1/runs/batch", strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body, res.Header
	}
	if code, body, _ := create(b.keyA, 80); code != http.StatusAccepted {
		t.Fatalf("a batch within the bound: %d %v", code, body)
	}
	code, body, h := create(b.keyA, 30)
	if e, _ := body["error"].(map[string]any); code != http.StatusTooManyRequests || e["code"] != "rate_limited" || h.Get("Retry-After") == "" {
		t.Fatalf("a batch past the queue's bound: %d %v (Retry-After %q), want 429 rate_limited with Retry-After", code, body, h.Get("Retry-After"))
	}
	if code, body, _ := create(b.keyB, 30); code != http.StatusAccepted {
		t.Errorf("another tenant's batch: %d %v", code, body)
	}
	if code, body, _ := create(b.keyB, 101); code != http.StatusUnprocessableEntity {
		t.Errorf("a batch larger than the bound: %d %v, want 422", code, body)
	}
	servertest.RunBatches(t, b.runs.Runs)
	if code, body, _ := create(b.keyA, 30); code != http.StatusAccepted {
		t.Errorf("once the queue drained: %d %v", code, body)
	}
}
