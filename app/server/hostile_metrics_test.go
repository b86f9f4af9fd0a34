package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A bridge worker's error code is validated, and one that passes never
// becomes a metric label unless Ductor knows it: /metrics stays small
// however many codes hostile workers send.
func TestHostileErrorCodesStayOutOfMetrics(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, `
key: flaky
steps:
  - ref: charge
    type: task
    with: {handler: flaky.op, queue: default}
    retry: {max_attempts: 30, initial_interval: 10ms, backoff_coefficient: 1.0, max_interval: 10ms}
    timeout: 30s
`)
	id := b.startTaskRun(t, "flaky", `{}`)
	before := len(b.scrape(t))

	task := b.pollOne(t, "default", "flaky.op")
	for _, code := range []string{strings.Repeat("x", 65), "Card Declined", "bad\ncode", "é", "a/b"} {
		body := tokenBody(task, fmt.Sprintf(`, "error": {"message": "m", "code": %q, "retryable": true}`, code))
		if status, res := b.taskCall(t, task, "fail", body); status != 422 {
			t.Fatalf("fail with code %q = %d %v, want 422", code, status, res)
		}
	}
	for i := range 20 {
		code := fmt.Sprintf("hostile.%d-%s", i, strings.Repeat("z", 50))
		body := tokenBody(task, fmt.Sprintf(`, "error": {"message": "m", "code": %q, "retryable": true}`, code))
		if status, res := b.taskCall(t, task, "fail", body); status != 200 {
			t.Fatalf("fail %d = %d %v", i, status, res)
		}
		task = b.pollOne(t, "default", "flaky.op")
	}
	if status, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {}`)); status != 200 {
		t.Fatalf("complete = %d %v", status, res)
	}
	if run := b.waitStatus(t, id); run["status"] != "succeeded" {
		t.Fatalf("run = %v", run)
	}
	after := b.scrape(t)
	if strings.Contains(after, "hostile") {
		t.Errorf("a worker's error code became a label:\n%s", after)
	}
	if !strings.Contains(after, `outcome="other"`) {
		t.Errorf("unknown codes are not counted as other:\n%s", after)
	}
	if len(after)-before > 8<<10 {
		t.Errorf("/metrics grew from %d to %d bytes", before, len(after))
	}
}

func (b *apiBundle) scrape(t *testing.T) string {
	t.Helper()
	res, err := http.Get(b.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return string(raw)
}
