package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testwait"
)

// A remote worker's tasks take their step's pool like in-process steps:
// with a pool of one, a second task is handed out only once the first is
// answered (completed or failed), the others waiting held back.
func TestFlowStepPoolHoldsBridgeTasks(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, `
key: vendor-calls
steps:
  - ref: call
    type: task
    for_each: input.items
    concurrency: {key_expr: '"vendor"', limit: 1}
    with: {handler: vendor.call, queue: default}
    retry: {max_attempts: 2, initial_interval: 10ms}
    timeout: 30s
`)
	id := b.startTaskRun(t, "vendor-calls", `{"items": [1, 2, 3]}`)
	for i, queued := range []int{2, 2, 1, 0} { // three items, the first failed once and retried
		task := b.pollOne(t, "default", "vendor.call")
		b.awaitPoolQueued(t, queued)
		_, res := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, `{"queue": "default", "handlers": ["vendor.call"], "wait_ms": 600}`)
		if tasks := res["tasks"].([]any); len(tasks) != 0 {
			t.Fatalf("a second task of a pool of one was handed out: %v", tasks)
		}
		verb, body := "complete", tokenBody(task, `, "output": {}`)
		if i == 0 {
			verb, body = "fail", tokenBody(task, `, "error": {"message": "busy", "retryable": true}`)
		}
		if code, res := b.taskCall(t, task, verb, body); code != 200 {
			t.Fatalf("%s = %d %v", verb, code, res)
		}
	}
	if run := b.waitStatus(t, id); run["status"] != "succeeded" {
		t.Fatalf("run %v, want succeeded", run["status"])
	}
	b.awaitPoolQueued(t, 0)
}

// awaitPoolQueued waits until the vendor pool holds want attempts back.
func (b *apiBundle) awaitPoolQueued(t *testing.T, want int) {
	t.Helper()
	var n int
	if !testwait.Until(context.Background(), 20*time.Second, func() bool {
		var err error
		if n, err = b.store.StepFlowQueued(context.Background(), b.tenantA.ID, "vendor"); err != nil {
			t.Fatal(err)
		}
		return n == want
	}) {
		t.Fatalf("the pool holds %d attempts back, want %d", n, want)
	}
}
