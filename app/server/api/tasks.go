package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/tenantsecrets"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// Bounds of the bridge workers' API.
const (
	// MaxTaskPayloadBytes caps a task's output, as JSON, like a local
	// handler's.
	MaxTaskPayloadBytes = steps.DefaultMaxOutputBytes
	// MaxTaskBodyBytes leaves room for the token and JSON around the
	// output, and for an output somewhat over its cap, which fails the
	// step as payload_too_large rather than being refused unread.
	MaxTaskBodyBytes = httpx.MaxBodyBytes
	// MaxTaskWait caps how long a poll waits for tasks.
	MaxTaskWait = 30 * time.Second
	// MaxTasksPerPoll caps how many tasks one poll claims.
	MaxTasksPerPoll = 100
	maxTaskMessage  = 4 << 10
)

type taskPollRequest struct {
	Queue    string   `json:"queue"`
	Handlers []string `json:"handlers"`
	WorkerID string   `json:"worker_id"`
	Max      int      `json:"max"`
	WaitMS   int64    `json:"wait_ms"`
}

// TaskJSON is a claimed task as a bridge worker receives it.
type TaskJSON struct {
	ID             string          `json:"id"`
	Token          string          `json:"token"`
	Handler        string          `json:"handler"`
	Queue          string          `json:"queue"`
	Input          json.RawMessage `json:"input"`
	Attempt        int             `json:"attempt"`
	IdempotencyKey string          `json:"idempotency_key"`
	Deadline       *time.Time      `json:"deadline"`
	LeaseUntil     *time.Time      `json:"lease_until"`
	// DeadlineMS and LeaseMS are what was left of the deadline and the
	// lease when the task was claimed, by the database's clock: a worker
	// times them from when it receives the task, so that its own clock's
	// difference from the database's does not matter.
	DeadlineMS *int64 `json:"deadline_ms"`
	LeaseMS    *int64 `json:"lease_ms"`
	RunID      string `json:"run_id"`
	Node       string `json:"node"`
	// Traceparent and Tracestate place the attempt in its run's trace (W3C
	// Trace Context): a handler's spans are its children.
	Traceparent string `json:"traceparent,omitempty"`
	Tracestate  string `json:"tracestate,omitempty"`
	// Secrets are the values of the step's `secrets`, by name, opened
	// for this answer only (never stored with the task or its input).
	Secrets map[string]string `json:"secrets,omitempty"`
}

// taskSecrets opens a claimed task's secrets. A task whose secret does
// not exist is failed at once with secret_not_found, naming it, and is
// left out of the answer (nil, nil).
func taskSecrets(ctx context.Context, rs *runs.Service, vault *tenantsecrets.Service, t store.BridgeTask) (map[string]string, error) {
	if len(t.Secrets) == 0 {
		return nil, nil
	}
	values, err := vault.Values(ctx, t.TenantID.String(), t.Secrets)
	if err != nil && !apperr.Is(err, apperr.Unavailable) {
		return nil, err
	}
	for _, name := range t.Secrets {
		if _, ok := values[name]; ok {
			continue
		}
		e := &engine.Error{Code: steps.CodeSecretNotFound, Message: fmt.Sprintf("secret %s not found: set it (PUT /api/v1/secrets/%s) and retry the step", name, name)}
		if err := rs.Tasks.Fail(ctx, t.TenantID, t.ID, t.Token, e); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return values, nil
}

// handleTaskPoll claims up to max tasks of the queue for the handlers,
// waiting up to wait_ms (at most 30 s) when there are none: 200 {"tasks"}.
// A wait ends early when the client goes away or the server is stopping.
func handleTaskPoll(rs *runs.Service, vault *tenantsecrets.Service, stopping <-chan struct{}) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req taskPollRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		p, err := req.poll()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(c.Request().Context())
		defer cancel()
		stop := afterClose(stopping, cancel)
		defer stop()
		tasks, err := rs.Tasks.Poll(ctx, httpx.TenantOf(c), p)
		if err != nil {
			return err
		}
		out := make([]TaskJSON, 0, len(tasks))
		for _, t := range tasks {
			j := taskJSON(t)
			if j.Secrets, err = taskSecrets(c.Request().Context(), rs, vault, t); err != nil {
				return err
			}
			if j.Secrets != nil || len(t.Secrets) == 0 {
				out = append(out, j)
			}
		}
		return c.JSON(http.StatusOK, map[string]any{"tasks": out})
	}
}

// afterClose calls fn when ch closes, until the returned stop is called.
func afterClose(ch <-chan struct{}, fn func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			fn()
		case <-done:
		}
	}()
	return func() { close(done) }
}

func (r taskPollRequest) poll() (runs.TaskPoll, error) {
	if len(r.Handlers) == 0 {
		return runs.TaskPoll{}, apperr.New(apperr.Invalid, "handlers is required: the handler names this worker runs")
	}
	if r.Max < 0 || r.WaitMS < 0 {
		return runs.TaskPoll{}, apperr.New(apperr.Invalid, "max and wait_ms cannot be negative")
	}
	if r.Queue == "" {
		r.Queue = shell.DefaultQueue
	}
	wait := min(time.Duration(r.WaitMS)*time.Millisecond, MaxTaskWait)
	return runs.TaskPoll{
		Queue: r.Queue, Handlers: r.Handlers, WorkerID: r.WorkerID, Max: min(max(r.Max, 1), MaxTasksPerPoll), Wait: wait,
	}, nil
}

func taskJSON(t store.BridgeTask) TaskJSON {
	parent, state := telemetry.AttemptTraceparent(t.Trace, t.ID)
	return TaskJSON{
		ID: t.ID.String(), Token: t.Token, Handler: t.Handler, Queue: t.Queue, Input: t.Input, Attempt: t.Attempt,
		IdempotencyKey: t.IdempotencyKey, Deadline: t.Deadline, LeaseUntil: t.LeaseUntil,
		DeadlineMS: msAfter(t.Deadline, t.ClaimedAt), LeaseMS: msAfter(t.LeaseUntil, t.ClaimedAt),
		RunID: t.RunID.String(), Node: t.Node, Traceparent: parent, Tracestate: state,
	}
}

// msAfter is how many milliseconds at lies after from, when both are set.
func msAfter(at, from *time.Time) *int64 {
	if at == nil || from == nil {
		return nil
	}
	ms := at.Sub(*from).Milliseconds()
	return &ms
}

type taskCompleteRequest struct {
	Token  string          `json:"token"`
	Output json.RawMessage `json:"output"`
}

// handleTaskComplete delivers a task's output: 200 {"status":
// "completed"}; 409 for a wrong or expired token. An output that cannot
// be the step's (over 1 MiB: payload_too_large; a NUL character:
// invalid_output) fails the attempt, not retried, and answers 200
// {"status": "failed", "error"}: the worker did its part, and the node
// says why it failed rather than wait for the lease to run out.
func handleTaskComplete(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "task")
		if err != nil {
			return err
		}
		var req taskCompleteRequest
		if _, err := httpx.DecodeBody(c, &req); err != nil {
			return err
		}
		ctx, tenant := c.Request().Context(), httpx.TenantOf(c)
		output, bad, err := taskOutput(req.Output)
		if err != nil {
			return err
		}
		if bad != nil {
			if err := rs.Tasks.Fail(ctx, tenant, id, req.Token, bad); err != nil {
				return err
			}
			return c.JSON(http.StatusOK, map[string]any{"status": "failed", "error": bad})
		}
		if err := rs.Tasks.Complete(ctx, tenant, id, req.Token, output); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "completed"})
	}
}

// taskOutput decodes an output as the engine keeps outputs (the JSON
// value model). bad is the failure an output that cannot be stored
// becomes; err a body that is not JSON.
func taskOutput(raw json.RawMessage) (out any, bad *engine.Error, err error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	if len(raw) > MaxTaskPayloadBytes {
		return nil, &engine.Error{Code: engine.CodePayloadTooLarge,
			Message: fmt.Sprintf("output is %d bytes of JSON, over the %d-byte limit", len(raw), MaxTaskPayloadBytes)}, nil
	}
	out, err = jsonvalue.Decode(raw)
	if err != nil {
		return nil, nil, apperr.New(apperr.Invalid, "output is not JSON: %s", httpx.JSONMessage(err))
	}
	if nul, found := jsonvalue.FindNUL(out); found {
		return nil, &engine.Error{Code: engine.CodeInvalidOutput, Message: "output " + nul.Error()}, nil
	}
	return out, nil, nil
}

// maxErrorCode bounds a bridge worker's error code.
const maxErrorCode = 64

// validErrorCode accepts an empty code (task_failed) or one of at most
// maxErrorCode characters of [a-z0-9_.-].
func validErrorCode(code string) bool {
	if len(code) > maxErrorCode {
		return false
	}
	for _, r := range code {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

type taskFailRequest struct {
	Token string `json:"token"`
	Error struct {
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
		Code      string `json:"code"`
	} `json:"error"`
}

// handleTaskFail delivers a task's failure: 200; a retryable one is
// retried by the step's policy; 409 for a wrong or expired token.
func handleTaskFail(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "task")
		if err != nil {
			return err
		}
		var req taskFailRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if len(req.Error.Message) > maxTaskMessage {
			return apperr.New(apperr.TooLarge, "error message exceeds %d bytes", maxTaskMessage)
		}
		if !validErrorCode(req.Error.Code) {
			return apperr.New(apperr.Unprocessable, "error.code must be at most %d characters of a-z, 0-9, _, . and -", maxErrorCode)
		}
		e := &engine.Error{Code: req.Error.Code, Message: req.Error.Message, Retryable: req.Error.Retryable}
		if e.Code == "" {
			e.Code = steps.CodeTaskFailed
		}
		if err := rs.Tasks.Fail(c.Request().Context(), httpx.TenantOf(c), id, req.Token, e); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "failed"})
	}
}

type taskHeartbeatRequest struct {
	Token string `json:"token"`
}

// handleTaskHeartbeat extends a task's lease: 200 {"lease_until"}; 409
// for a wrong or expired token, or a task that is no longer wanted
// (cancelled or reported lost): its worker should stop.
func handleTaskHeartbeat(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "task")
		if err != nil {
			return err
		}
		var req taskHeartbeatRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		until, err := rs.Tasks.Heartbeat(c.Request().Context(), httpx.TenantOf(c), id, req.Token)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]time.Time{"lease_until": until})
	}
}
