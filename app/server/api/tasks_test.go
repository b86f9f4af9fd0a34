package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/server"

	"github.com/ductor/ductor/app/server/api"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// remoteDoc has one task step for a bridge worker, then an echo of its
// output.
const remoteDoc = `
key: %s
steps:
  - ref: charge
    type: task
    with: {handler: %s, queue: %s}
    retry: {max_attempts: %d, initial_interval: 10ms}
    timeout: 30s
`

func (b *apiBundle) publishDoc(t *testing.T, doc string) {
	t.Helper()
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	b.publish(t, c.Manifest)
}

func (b *apiBundle) startTaskRun(t *testing.T, key, input string) string {
	t.Helper()
	code, run := b.call(t, "POST", "/api/v1/runs", b.keyA, fmt.Sprintf(`{"definition": %q, "input": %s}`, key, input))
	if code != 201 {
		t.Fatalf("start %s = %d %v", key, code, run)
	}
	return run["id"].(string)
}

// pollOne long-polls as tenant A until one task arrives.
func (b *apiBundle) pollOne(t *testing.T, queue, handler string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"queue": %q, "handlers": [%q], "worker_id": "w1", "wait_ms": 10000}`, queue, handler)
	code, res := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, body)
	if code != 200 {
		t.Fatalf("poll = %d %v", code, res)
	}
	tasks := res["tasks"].([]any)
	if len(tasks) != 1 {
		t.Fatalf("poll = %v, want one task", res)
	}
	return tasks[0].(map[string]any)
}

func (b *apiBundle) taskCall(t *testing.T, task map[string]any, verb, body string) (int, map[string]any) {
	t.Helper()
	return b.call(t, "POST", "/api/v1/tasks/"+task["id"].(string)+"/"+verb, b.keyA, body)
}

func tokenBody(task map[string]any, rest string) string {
	return fmt.Sprintf(`{"token": %q%s}`, task["token"], rest)
}

func TestTaskPollAndComplete(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "pay", "payments.charge", "default", 1))
	id := b.startTaskRun(t, "pay", `{"amount": 5}`)

	task := b.pollOne(t, "default", "payments.charge")
	if task["handler"] != "payments.charge" || task["attempt"] != 1.0 || task["idempotency_key"] != id+":charge" ||
		task["token"] == "" || task["deadline"] == nil {
		t.Errorf("task = %v", task)
	}
	if in, _ := json.Marshal(task["input"]); string(in) != `{"amount":5}` {
		t.Errorf("input = %s, want the run's input", in)
	}
	if _, res := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, `{"handlers": ["payments.charge"]}`); len(res["tasks"].([]any)) != 0 {
		t.Errorf("a claimed task was claimed again: %v", res)
	}
	if code, res := b.taskCall(t, task, "complete", `{"token": "wrong", "output": {}}`); code != 409 {
		t.Errorf("complete with a wrong token = %d %v, want 409", code, res)
	}
	if code, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {"charged": 5}`)); code != 200 {
		t.Fatalf("complete = %d %v", code, res)
	}
	run := b.waitStatus(t, id)
	if out, _ := json.Marshal(run["output"]); run["status"] != "succeeded" || !strings.Contains(string(out), `"charged":5`) {
		t.Errorf("run = %v %s, want succeeded with the task's output", run["status"], out)
	}
	if code, _ := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {}`)); code != 404 {
		t.Errorf("a second complete = %d, want 404: the task is done", code)
	}
}

func TestTaskOnAnotherQueueIsRemote(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "gpu", "builtin.echo", "gpu", 1))
	id := b.startTaskRun(t, "gpu", `{"x": 1}`)
	task := b.pollOne(t, "gpu", "builtin.echo")
	if code, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {"remote": true}`)); code != 200 {
		t.Fatalf("complete = %d %v", code, res)
	}
	if out, _ := json.Marshal(b.waitStatus(t, id)["output"]); !strings.Contains(string(out), `"remote":true`) {
		t.Errorf("output = %s, want the bridge worker's, not the local echo", out)
	}
}

func TestTaskFail(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "flaky", "flaky.op", "default", 3))
	id := b.startTaskRun(t, "flaky", `{}`)

	first := b.pollOne(t, "default", "flaky.op")
	if code, res := b.taskCall(t, first, "fail", tokenBody(first, `, "error": {"message": "try again", "retryable": true}`)); code != 200 {
		t.Fatalf("fail = %d %v", code, res)
	}
	second := b.pollOne(t, "default", "flaky.op")
	if second["attempt"] != 2.0 || second["idempotency_key"] != first["idempotency_key"] {
		t.Errorf("retry = %v, want attempt 2 with the same idempotency key", second)
	}
	if code, res := b.taskCall(t, second, "fail", tokenBody(second, `, "error": {"message": "card declined", "retryable": false}`)); code != 200 {
		t.Fatalf("fail = %d %v", code, res)
	}
	run := b.waitStatus(t, id)
	if e, _ := json.Marshal(run["error"]); run["status"] != "failed" || !strings.Contains(string(e), "card declined") {
		t.Errorf("run = %v %s, want failed by the non-retryable error", run["status"], e)
	}
}

func TestTaskHeartbeatExtendsLease(t *testing.T) {
	t.Parallel()
	b := setupTasksConfig(t, func(c *workers.Config) { c.TaskLease = store.BridgeLease{Lease: 5 * time.Second, Grace: time.Second} })
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "beat", "slow.op", "default", 1))
	id := b.startTaskRun(t, "beat", `{}`)
	task := b.pollOne(t, "default", "slow.op")
	claimed := b.attemptLease(t, id)

	code, res := b.taskCall(t, task, "heartbeat", tokenBody(task, ""))
	if code != 200 {
		t.Fatalf("heartbeat = %d %v", code, res)
	}
	until, err := time.Parse(time.RFC3339Nano, res["lease_until"].(string))
	if err != nil || !until.After(claimed) {
		t.Errorf("heartbeat lease = %v (%v), want after the claim's %v", until, err, claimed)
	}
	if got := b.attemptLease(t, id); !got.Equal(until) {
		t.Errorf("attempt lease = %v, want the task's %v", got, until)
	}
	if code, _ := b.taskCall(t, task, "heartbeat", `{"token": "wrong"}`); code != 409 {
		t.Errorf("heartbeat with a wrong token = %d, want 409", code)
	}
}

// attemptLease is the lease of the run's only attempt.
func (b *apiBundle) attemptLease(t *testing.T, runID string) time.Time {
	t.Helper()
	attempts, err := b.store.RunAttempts(context.Background(), b.tenantA.ID, uuid.MustParse(runID))
	if err != nil || len(attempts) == 0 || attempts[len(attempts)-1].LeaseUntil == nil {
		t.Fatalf("attempts = %+v, %v; want a leased one", attempts, err)
	}
	return *attempts[len(attempts)-1].LeaseUntil
}

func TestTaskLeaseExpiryRetries(t *testing.T) {
	t.Parallel()
	// Two seconds: the first lease runs out while the test waits for it,
	// and the second attempt is answered well inside its own, even on a
	// loaded machine.
	b := setupTasksConfig(t, func(c *workers.Config) { c.TaskLease = store.BridgeLease{Lease: 2 * time.Second, Grace: time.Second} })
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "lost", "lost.op", "default", 2))
	id := b.startTaskRun(t, "lost", `{}`)
	first := b.pollOne(t, "default", "lost.op")

	second := b.pollOne(t, "default", "lost.op") // after the first lease runs out
	if second["attempt"] != 2.0 {
		t.Fatalf("after the lease ran out = %v, want attempt 2", second)
	}
	if code, _ := b.taskCall(t, first, "complete", tokenBody(first, `, "output": {}`)); code != 409 {
		t.Errorf("complete of the lost attempt = %d, want 409", code)
	}
	if code, res := b.taskCall(t, second, "complete", tokenBody(second, `, "output": {"n": 2}`)); code != 200 {
		t.Fatalf("complete = %d %v", code, res)
	}
	run := b.waitStatus(t, id)
	if run["status"] != "succeeded" {
		t.Errorf("run = %v", run)
	}
	attempts, err := b.store.RunAttempts(context.Background(), b.tenantA.ID, uuid.MustParse(id))
	if err != nil || len(attempts) != 2 || attempts[0].Error == nil || attempts[0].Error.Code != "worker_lost" {
		t.Errorf("attempts = %+v, %v; want the first lost", attempts, err)
	}
}

func TestTaskPayloadCap(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "big", "big.op", "default", 1))
	b.startTaskRun(t, "big", `{}`)
	task := b.pollOne(t, "default", "big.op")
	huge := `"` + strings.Repeat("x", api.MaxTaskPayloadBytes) + `"`
	code, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": `+huge))
	if e, _ := res["error"].(map[string]any); code != 200 || res["status"] != "failed" || e["code"] != "payload_too_large" {
		t.Errorf("complete with a 1 MiB output = %d %v, want 200 failed payload_too_large", code, res)
	}
	bigger := strings.Repeat(" ", api.MaxTaskBodyBytes+1)
	if code, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {}`+bigger)); code != 413 {
		t.Errorf("complete with a body over the limit = %d %v, want 413", code, res)
	}
}

func TestTaskPollWaitsAndReturnsEarly(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "later", "later.op", "default", 1))
	got := make(chan map[string]any, 1)
	go func() {
		_, res := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, `{"handlers": ["later.op"], "wait_ms": 30000}`)
		got <- res
	}()
	start := time.Now()
	b.startTaskRun(t, "later", `{}`)
	select {
	case res := <-got:
		if len(res["tasks"].([]any)) != 1 {
			t.Errorf("poll = %v, want the task that arrived", res)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not return when a task arrived")
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("poll returned after %v", waited)
	}
	code, res := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, `{"handlers": ["later.op"], "wait_ms": 50}`)
	if code != 200 || len(res["tasks"].([]any)) != 0 {
		t.Errorf("empty poll = %d %v, want 200 with no tasks", code, res)
	}
	if code, _ := b.call(t, "POST", "/api/v1/tasks/poll", b.keyA, `{"queue": "default"}`); code != 400 {
		t.Errorf("poll without handlers = %d, want 400", code)
	}
}

// taskIsolationCases are the task routes as tenant B, against a task
// tenant A's worker holds; the task's token is what must not leak.
func taskIsolationCases(t *testing.T, b *apiBundle) (map[string]struct {
	path, body string
	status     int
}, []string) {
	t.Helper()
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "isolated", "iso.op", "default", 1))
	b.startTaskRun(t, "isolated", `{}`)
	task := b.pollOne(t, "default", "iso.op")
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "waiting", "iso.op", "default", 1))
	b.startTaskRun(t, "waiting", `{"secret": "unclaimed-input"}`)
	path := "/api/v1/tasks/" + task["id"].(string)
	tok := tokenBody(task, "")
	return map[string]struct {
		path, body string
		status     int
	}{
		"POST /api/v1/tasks/poll":          {"/api/v1/tasks/poll", `{"handlers": ["iso.op"]}`, 200},
		"POST /api/v1/tasks/:id/complete":  {path + "/complete", tokenBody(task, `, "output": {}`), 404},
		"POST /api/v1/tasks/:id/fail":      {path + "/fail", tokenBody(task, `, "error": {"message": "x"}`), 404},
		"POST /api/v1/tasks/:id/heartbeat": {path + "/heartbeat", tok, 404},
	}, []string{task["token"].(string), "unclaimed-input"}
}

func TestTaskOfACancelledRunStopsItsWorker(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "stop", "stop.op", "default", 1))
	id := b.startTaskRun(t, "stop", `{}`)
	task := b.pollOne(t, "default", "stop.op")
	if code, res := b.call(t, "POST", "/api/v1/runs/"+id+"/cancel", b.keyA, ""); code != 202 {
		t.Fatalf("cancel = %d %v", code, res)
	}
	if run := b.waitStatus(t, id); run["status"] != "cancelled" {
		t.Fatalf("run = %v", run["status"])
	}
	if code, _ := b.taskCall(t, task, "heartbeat", tokenBody(task, "")); code != 404 && code != 409 {
		t.Errorf("heartbeat of a cancelled task = %d, want 404 or 409 so its worker stops", code)
	}
}

func TestTaskRoutesNeedTheTasksScope(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	_, key := testdb.APIKey(t, b.store, b.tenantA, &testdb.APIKeyOpts{Scopes: []auth.Scope{auth.ScopeRunsWrite}})
	if code, _ := b.call(t, "POST", "/api/v1/tasks/poll", key, `{"handlers": ["x"]}`); code != 403 {
		t.Errorf("poll without tasks:work = %d, want 403", code)
	}
}

func TestServeEndsLongPollsWhenStopping(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	srv := server.New(server.Deps{Store: b.store, Logger: slog.New(slog.DiscardHandler), API: true, Runs: b.runs.Runs})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	polled := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/v1/tasks/poll",
			strings.NewReader(`{"handlers": ["nobody"], "wait_ms": 30000}`))
		req.Header.Set("Authorization", "Bearer "+b.keyA)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			polled <- 0
			return
		}
		res.Body.Close()
		polled <- res.StatusCode
	}()
	// Stop once the poll is waiting: the server has it in flight.
	testwait.Until(context.Background(), 10*time.Second, func() bool { return b.runs.Runs.Tasks.Waiting(b.tenantA.ID) > 0 })
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want a clean shutdown", err)
		}
	case <-time.After(9 * time.Second):
		t.Fatal("Serve waited for the long poll")
	}
	if code := <-polled; code != 200 {
		t.Errorf("the poll = %d, want 200 with no tasks", code)
	}
}

// A bridge worker's output that cannot be stored fails the step as
// invalid_output (not retried) rather than waiting for the lease to run
// out and passing for a lost worker.
func TestTaskOutputWithNUL(t *testing.T) {
	t.Parallel()
	b := setupTasks(t)
	b.publishDoc(t, fmt.Sprintf(remoteDoc, "nul", "nul.op", "default", 3))
	id := b.startTaskRun(t, "nul", `{}`)
	task := b.pollOne(t, "default", "nul.op")
	code, res := b.taskCall(t, task, "complete", tokenBody(task, `, "output": {"name": "a\u0000b"}`))
	if e, _ := res["error"].(map[string]any); code != 200 || res["status"] != "failed" || e["code"] != "invalid_output" {
		t.Fatalf("complete with a NUL = %d %v, want 200 failed invalid_output", code, res)
	}
	run := b.waitStatus(t, id)
	nodes := run["nodes"].([]any)
	n := nodes[0].(map[string]any)
	e, _ := n["error"].(map[string]any)
	if run["status"] != "failed" || e["code"] != "invalid_output" || !strings.Contains(e["message"].(string), "at .name") || n["attempt"] != 1.0 {
		t.Fatalf("run = %v", run)
	}
}
