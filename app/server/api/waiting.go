package api

import (
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

type signalRequest struct {
	RequestID string `json:"request_id"`
	Name      string `json:"name"`
	Payload   any    `json:"payload"`
}

// handleSignal delivers a signal: 202; 409 for a repeated request id or
// an ended run; 429 when the run's buffer is full.
func handleSignal(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		var req signalRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		if req.RequestID == "" || req.Name == "" {
			return apperr.New(apperr.Invalid, "request_id and name are required")
		}
		sig := engine.Signal{RequestID: req.RequestID, Name: req.Name, Payload: req.Payload}
		to, err := rs.Signal(c.Request().Context(), httpx.TenantOf(c), id, sig)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"status": "accepted", "run_id": to.String()})
	}
}

type eventRequest struct {
	Name           string `json:"name"`
	Data           any    `json:"data"`
	IdempotencyKey string `json:"idempotency_key"`
}

// handleEvent stores a tenant event and hands it to the runs waiting for
// its name: 202 {"id"}; a repeated idempotency key (the Idempotency-Key
// header or the body's) answers the first id, or 409
// idempotency_mismatch when it came with a different name or data.
func handleEvent(rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var req eventRequest
		if err := httpx.BindJSON(c, &req); err != nil {
			return err
		}
		key, err := httpx.IdempotencyKey(c, req.IdempotencyKey)
		if err != nil {
			return err
		}
		e, _, err := rs.Events.Publish(runs.WithCaller(c.Request().Context(), callerSpan(c)), store.Event{
			TenantID: httpx.TenantOf(c), Name: req.Name, Data: req.Data, IdempotencyKey: key, MatchRequest: true,
		})
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{"id": e.ID.String()})
	}
}

// WaitingJSON is why a node waits and what wakes it: the engine's record
// (type, timer expiry, signal or event name, an event_set's event names,
// the child key and child run id) plus the id of the approval or case it
// waits on.
type WaitingJSON struct {
	*engine.Waiting
	ApprovalID string `json:"approval_id,omitempty"`
	CaseID     string `json:"case_id,omitempty"`
}

func waitingJSON(n *engine.Node) *WaitingJSON {
	if n.Waiting == nil {
		return nil
	}
	w := *n.Waiting
	if w.Type == engine.WaitChild && w.ChildKey != "" && w.ChildRunID == "" {
		w.ChildRunID = engine.ChildRunID(w.ChildKey) // recorded before the id was kept
	}
	return &WaitingJSON{Waiting: &w}
}

// withInteraction adds to a node waiting on an approval or a case that
// approval's or case's id.
func withInteraction(runID string, out NodeJSON, n *engine.Node) NodeJSON {
	if out.Waiting == nil {
		return out
	}
	switch n.Waiting.Type {
	case engine.WaitApproval:
		out.Waiting.ApprovalID = store.ApprovalID(engine.NodeKey(runID, n)).String()
	case engine.WaitInteraction:
		out.Waiting.CaseID = store.CaseID(engine.NodeKey(runID, n)).String()
	}
	return out
}
