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

// Stopping a running batch keeps the counts of the chunk it had worked
// and acts on none of the runs it had not reached; stopping it again, or
// a finished batch, answers 409 in the error shape, and another tenant's
// key does not find it.
func TestBatchStopLeavesTheRemainingRunsUntouched(t *testing.T) {
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
	raw, _ := json.Marshal(map[string]any{"action": "cancel", "run_ids": ids, "reason": "half"})
	code, created := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, string(raw))
	if code != http.StatusAccepted {
		t.Fatalf("create batch: %d %v", code, created)
	}
	id := created["id"].(string)
	if worked, err := b.runs.Runs.Batches.Once(t.Context()); err != nil || !worked {
		t.Fatalf("work one chunk: %v, %v", worked, err)
	}
	if code, body := b.call(t, "POST", "/api/v1/batches/"+id+"/stop", b.keyB, ""); code != http.StatusNotFound {
		t.Errorf("another tenant stops the batch: %d %v, want 404", code, body)
	}
	code, stopped := b.call(t, "POST", "/api/v1/batches/"+id+"/stop", b.keyA, "")
	if code != http.StatusOK || stopped["status"] != "stopped" || stopped["done"] != float64(runs.BatchChunk) ||
		stopped["failed"] != float64(0) || stopped["total"] != float64(len(ids)) || stopped["finished_at"] == nil {
		t.Fatalf("stop: %d %v, want 200 stopped after one chunk of %d, total %d", code, stopped, runs.BatchChunk, len(ids))
	}
	code, again := b.call(t, "POST", "/api/v1/batches/"+id+"/stop", b.keyA, "")
	if e, _ := again["error"].(map[string]any); code != http.StatusConflict || e["code"] != "conflict" || !strings.Contains(e["message"].(string), "stopped") {
		t.Errorf("stop again: %d %v, want 409 conflict naming its status", code, again)
	}
	if worked, err := b.runs.Runs.Batches.Once(t.Context()); err != nil || worked {
		t.Fatalf("the sweep after the stop: worked %v, %v; want nothing to work", worked, err)
	}
	if _, got := b.call(t, "GET", "/api/v1/batches/"+id, b.keyA, ""); got["status"] != "stopped" || got["done"] != float64(runs.BatchChunk) {
		t.Errorf("the stopped batch reads %v", got)
	}
	for _, r := range ids[:runs.BatchChunk] {
		if run := b.waitStatus(t, r); run["status"] != "cancelled" {
			t.Fatalf("run %s of the worked chunk is %v, want cancelled", r, run["status"])
		}
	}
	for _, r := range ids[runs.BatchChunk:] {
		if _, run := b.call(t, "GET", "/api/v1/runs/"+r, b.keyA, ""); run["status"] != "waiting" {
			t.Errorf("run %s past the stop is %v, want it left waiting", r, run["status"])
		}
	}

	_, other := b.call(t, "POST", "/api/v1/runs/batch", b.keyA, `{"action": "cancel", "run_ids": []}`)
	if code, body := b.call(t, "POST", "/api/v1/batches/"+other["id"].(string)+"/stop", b.keyA, ""); code != http.StatusConflict {
		t.Errorf("stop a completed batch: %d %v, want 409", code, body)
	}
}
