package api

import (
	"context"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/telemetry"
)

// RunJSON is a run as the API shows it.
type RunJSON struct {
	ID         string `json:"id"`
	Definition string `json:"definition"`
	Version    int    `json:"version"`
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	// CancelledBy names who cancelled the run (user:EMAIL, key:PREFIX).
	CancelledBy        string         `json:"cancelled_by,omitempty"`
	Input              any            `json:"input"`
	Output             any            `json:"output"`
	Error              *engine.Error  `json:"error"`
	Subject            string         `json:"subject"`
	Context            any            `json:"context"`
	SearchAttributes   map[string]any `json:"search_attributes"`
	ParentRunID        *uuid.UUID     `json:"parent_run_id"`
	RootRunID          uuid.UUID      `json:"root_run_id"`
	Depth              int            `json:"depth"`
	ContinuedFromRunID *uuid.UUID     `json:"continued_from_run_id"`
	ContinuedToRunID   *uuid.UUID     `json:"continued_to_run_id"`
	TransitionCount    int64          `json:"transition_count"`
	RecordVersion      int64          `json:"record_version"`
	CreatedAt          time.Time      `json:"created_at"`
	FinishedAt         *time.Time     `json:"finished_at"`
	// TraceID is the run's trace (W3C Trace Context), joined from the
	// caller's traceparent when POST /runs carried one.
	TraceID string     `json:"trace_id,omitempty"`
	Nodes   []NodeJSON `json:"nodes,omitempty"`
	// Children counts the run's child runs by status.
	Children map[string]int64 `json:"children,omitempty"`
	// Discarded lists the latest inputs the run refused with a reason
	// worth seeing (an event whose match_expr failed on it), oldest first;
	// DiscardedTotal counts all of them.
	Discarded      []engine.Discard `json:"discarded,omitempty"`
	DiscardedTotal int64            `json:"discarded_total,omitempty"`
	// WaitingFor says what a pending run flow control holds back waits
	// for: a debounce's quiet, a throttle's turn or concurrency slots.
	WaitingFor *store.FlowWait `json:"waiting_for,omitempty"`
}

// NodeJSON is one node of a run.
type NodeJSON struct {
	Node       string        `json:"node"`
	Ref        string        `json:"ref"`
	Type       string        `json:"type"`
	State      string        `json:"state"`
	Waiting    *WaitingJSON  `json:"waiting,omitempty"`
	Attempt    int           `json:"attempt"`
	Generation int           `json:"generation"`
	Output     any           `json:"output"`
	Error      *engine.Error `json:"error"`
	// CancelReason says why a cancelled node was cancelled.
	CancelReason string     `json:"cancel_reason,omitempty"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
	// Attempts are the node's attempts on workers, oldest first.
	Attempts []AttemptJSON `json:"attempts,omitempty"`
	// Key and Index place a scatter child; Scatter counts a scatter's
	// children (total, in flight, succeeded, failed).
	Key     string               `json:"key,omitempty"`
	Index   *int                 `json:"index,omitempty"`
	Scatter *engine.ScatterState `json:"scatter,omitempty"`
	// WaitingForWorker is set while a task's attempt waits for a worker
	// to claim it.
	WaitingForWorker *WorkerWaitJSON `json:"waiting_for_worker,omitempty"`
	// WaitingForSlot is set while the attempt waits for a slot of its
	// step's concurrency pool.
	WaitingForSlot *SlotWaitJSON `json:"waiting_for_slot,omitempty"`
}

// SlotWaitJSON is a step attempt waiting for a slot of its concurrency
// pool: the pool's key and how many may run at once.
type SlotWaitJSON struct {
	Key   string `json:"key"`
	Limit int    `json:"limit"`
}

// WorkerWaitJSON says what a task waits for: a worker polling queue for
// handler, since when, and until when (then it fails as no_worker).
type WorkerWaitJSON struct {
	Handler string     `json:"handler"`
	Queue   string     `json:"queue"`
	Since   time.Time  `json:"since"`
	StartBy *time.Time `json:"start_by"`
}

func runJSON(r store.Run) RunJSON {
	return RunJSON{
		ID: r.ID.String(), Definition: r.DefinitionKey, Version: r.DefinitionVersion,
		Status: string(r.Status), Reason: r.Reason, CancelledBy: r.CancelledBy, Input: r.State.Input, Output: r.State.Output,
		Error: r.State.Error, Subject: r.Subject, Context: r.State.Meta["context"],
		SearchAttributes: r.SearchAttributes, ParentRunID: r.ParentRunID, RootRunID: r.RootRunID,
		Depth: r.Depth, ContinuedFromRunID: r.ContinuedFromRunID, ContinuedToRunID: r.ContinuedToRunID,
		TransitionCount: r.TransitionCount, RecordVersion: r.RecordVersion,
		CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt, TraceID: telemetry.TraceID(r.State.Trace),
		Discarded: r.State.Discarded, DiscardedTotal: r.State.DiscardedTotal,
	}
}

func nodeJSON(n *engine.Node, types map[string]definition.StepType) NodeJSON {
	out := NodeJSON{
		Node: n.ID, Ref: n.Ref, Type: string(types[n.Ref]), State: string(n.State), Waiting: waitingJSON(n),
		Attempt: n.Attempt, Generation: n.Generation, Output: n.Output, Error: n.Error,
		StartedAt: timePtr(n.StartedAt), FinishedAt: timePtr(n.FinishedAt), Scatter: n.Scatter,
		CancelReason: n.CancelReason,
	}
	if n.Child != nil {
		out.Key, out.Index = n.Child.Key, &n.Child.Index
	}
	return out
}

func workerWaitJSON(w *store.WorkerWait) *WorkerWaitJSON {
	if w == nil {
		return nil
	}
	return &WorkerWaitJSON{Handler: w.Handler, Queue: w.Queue, Since: w.Since, StartBy: w.StartBy}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

type startRunRequest struct {
	Definition       string         `json:"definition"`
	Version          int            `json:"version"`
	Input            any            `json:"input"`
	Subject          string         `json:"subject"`
	Context          map[string]any `json:"context"`
	SearchAttributes map[string]any `json:"search_attributes"`
	IdempotencyKey   string         `json:"idempotency_key"`
}

// handleRunStart triggers a run: 201 when created, 200 with the existing
// run for a repeated idempotency key (the Idempotency-Key header or the
// body's), 409 idempotency_mismatch when that key came with a different
// request.
func handleRunStart(rs *runs.Service, validate runs.InputValidator) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req startRunRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Definition == "" {
			return apperr.New(apperr.Invalid, "definition is required")
		}
		key, err := httpx.IdempotencyKey(c, req.IdempotencyKey)
		if err != nil {
			return err
		}
		run, created, err := rs.Start(c.Request().Context(), runs.Trigger{
			TenantID: httpx.TenantOf(c), Definition: req.Definition, Version: req.Version,
			Input: req.Input, Subject: req.Subject, Context: req.Context,
			SearchAttributes: req.SearchAttributes, IdempotencyKey: key, MatchRequest: true,
			Parent: callerSpan(c),
		}, validate)
		if err != nil {
			return err
		}
		status := http.StatusCreated
		if !created {
			status = http.StatusOK
		}
		return c.JSON(status, map[string]string{"id": run.ID.String(), "status": string(run.Status)})
	}
}

// handleRunGet shows a run with its step nodes.
func handleRunGet(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		run, err := loadRun(c, s)
		if err != nil {
			return err
		}
		g, err := httpx.GuardFor(c, s, run)
		if err != nil {
			return err
		}
		out, err := runWithNodes(ctx, s, rs, run, g)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, out)
	}
}

// runWithNodes is the run with its step nodes, its case data passed
// through g.
func runWithNodes(ctx context.Context, s *store.Store, rs *runs.Service, run store.Run, g httpx.CaseGuard) (RunJSON, error) {
	out := runJSON(g.Run(run))
	m, err := rs.Manifest(ctx, run)
	if err != nil {
		return out, err
	}
	types := map[string]definition.StepType{}
	for _, st := range m.Steps {
		types[st.Ref] = st.Type
	}
	nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return out, err
	}
	nodes = g.Nodes(nodes)
	byID := map[string]*engine.Node{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	waits, err := httpx.WorkerWaits(ctx, s, run, nodes)
	if err != nil {
		return out, err
	}
	slots, err := httpx.SlotWaits(ctx, s, run, nodes)
	if err != nil {
		return out, err
	}
	for _, ref := range m.Order {
		if n := byID[ref]; n != nil {
			nj := withInteraction(run.ID.String(), nodeJSON(n, types), n)
			nj.WaitingForWorker = workerWaitJSON(waits[n.ID])
			if w := slots[n.ID]; w != nil {
				nj.WaitingForSlot = &SlotWaitJSON{Key: w.Key, Limit: w.Limit}
			}
			out.Nodes = append(out.Nodes, nj)
		}
	}
	if out.Nodes, err = withAttempts(ctx, s, run.TenantID, run.ID, out.Nodes); err != nil {
		return out, err
	}
	if out.WaitingFor, err = httpx.FlowWait(ctx, s, run); err != nil {
		return out, err
	}
	if out.Children, err = s.RunChildCounts(ctx, run.TenantID, run.ID); err != nil {
		return out, err
	}
	return out, nil
}

func loadRun(c echo.Context, s *store.Store) (store.Run, error) {
	id, err := httpx.PathUUID(c, "id", "run")
	if err != nil {
		return store.Run{}, err
	}
	return s.RunGet(c.Request().Context(), httpx.TenantOf(c), id)
}

// handleRunHistory lists a run's transitions, oldest first.
func handleRunHistory(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		run, err := loadRun(c, s)
		if err != nil {
			return err
		}
		after, limit, err := httpx.PageParams(c)
		if err != nil {
			return err
		}
		ts, err := s.RunHistory(c.Request().Context(), run.TenantID, run.ID, after, limit)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"transitions": ts})
	}
}

// handleRunCancel asks a run to cancel, recording the key that asked
// and the reason on the run.
func handleRunCancel(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Reason string `json:"reason"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if utf8.RuneCountInString(req.Reason) > httpx.MaxReasonLength {
			return apperr.New(apperr.Invalid, "reason is longer than %d characters", httpx.MaxReasonLength)
		}
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		in := engine.Cancel{RequestID: uuid.NewString(), Reason: req.Reason, By: actorOf(c)}
		if err := rs.Control(c.Request().Context(), httpx.TenantOf(c), id, in); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted"})
	}
}

// handleNodeRetry retries a failed node and resumes its run; with a
// version, or dry_run, it is a retry on a version (upgrades.go).
func handleNodeRetry(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			Version       int  `json:"version"`
			CancelRemoved bool `json:"cancel_removed"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.Version != 0 || c.QueryParam("dry_run") != "" {
			return retryOnVersion(c, rs, c.Param("node"), req.Version, req.CancelRemoved)
		}
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		if err := rs.RetryNode(c.Request().Context(), httpx.TenantOf(c), id, c.Param("node")); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted"})
	}
}

// handleContinueAsNew asks a run to continue as new: 202 with the
// successor's id, the same for the same request id.
func handleContinueAsNew(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req struct {
			RequestID string `json:"request_id"`
			Input     any    `json:"input"`
		}
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		successor, err := rs.ContinueAsNew(c.Request().Context(), httpx.TenantOf(c), id, req.RequestID, req.Input)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"successor_run_id": successor})
	}
}
