package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Version is a published version of a definition.
type Version struct {
	Key          string `json:"key"`
	Version      int    `json:"version"`
	ManifestHash string `json:"manifest_hash"`
	// Created is false when the document was unchanged and the existing
	// version was answered.
	Created bool `json:"-"`
}

// Publish compiles d on the server and publishes it as the next version
// of d.Key; an unchanged document answers its existing version. An
// invalid one is an [APIError] with status 422 listing every problem in
// Details.
func (c *Client) Publish(ctx context.Context, d *Definition) (Version, error) {
	if err := d.Validate(); err != nil {
		return Version{}, err
	}
	var v Version
	status, err := c.do(ctx, http.MethodPost, "/definitions/"+url.PathEscape(d.Key)+"/versions", d, &v)
	v.Created = status == http.StatusCreated
	return v, err
}

// StartRun asks for a run of a published definition.
type StartRun struct {
	Definition       string         `json:"definition"`
	Version          int            `json:"version,omitempty"` // 0: the latest
	Input            any            `json:"input,omitempty"`
	Subject          string         `json:"subject,omitempty"`
	Context          any            `json:"context,omitempty"`
	SearchAttributes map[string]any `json:"search_attributes,omitempty"`
	// IdempotencyKey makes a repeated start answer the first run.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// Started is a started run.
type Started struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// Existing is true when the idempotency key named a run already started.
	Existing bool `json:"-"`
}

// StartRun starts a run. The run joins the caller's trace: the one the
// client's trace injector finds in ctx (WithTraceInjector), else the one
// of ContextWithTrace (a handler's context carries its task's).
func (c *Client) StartRun(ctx context.Context, r StartRun) (Started, error) {
	var s Started
	status, err := c.send(ctx, http.MethodPost, "/runs", r, &s, func(h http.Header) { c.setTrace(ctx, h) })
	s.Existing = status == http.StatusOK
	return s, err
}

// Run is a run as the API shows it.
type Run struct {
	ID                 string          `json:"id"`
	Definition         string          `json:"definition"`
	Version            int             `json:"version"`
	Status             string          `json:"status"`
	Reason             string          `json:"reason"`
	Input              json.RawMessage `json:"input"`
	Output             json.RawMessage `json:"output"`
	Error              *RunError       `json:"error"`
	Subject            string          `json:"subject"`
	ParentRunID        string          `json:"parent_run_id"`
	RootRunID          string          `json:"root_run_id"`
	ContinuedToRunID   string          `json:"continued_to_run_id"`
	ContinuedFromRunID string          `json:"continued_from_run_id"`
	Context            json.RawMessage `json:"context"`
	SearchAttributes   map[string]any  `json:"search_attributes"`
	Depth              int             `json:"depth"`
	TransitionCount    int             `json:"transition_count"`
	CreatedAt          time.Time       `json:"created_at"`
	FinishedAt         *time.Time      `json:"finished_at"`
	// TraceID is the run's trace (W3C Trace Context): the caller's when
	// the run was started with a traceparent header.
	TraceID string `json:"trace_id"`
	Nodes   []Node `json:"nodes"`
}

// Node is one node of a run.
type Node struct {
	Node    string `json:"node"`
	Ref     string `json:"ref"`
	Type    string `json:"type"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	// Generation counts the node's resets (retries from a node, loops).
	Generation int             `json:"generation"`
	Waiting    *Waiting        `json:"waiting"`
	Output     json.RawMessage `json:"output"`
	Error      *RunError       `json:"error"`
}

// Waiting says why a node waits and what wakes it.
type Waiting struct {
	Type       string     `json:"type"`
	Name       string     `json:"name"`
	Until      *time.Time `json:"until"`
	ApprovalID string     `json:"approval_id"`
	CaseID     string     `json:"case_id"`
	ChildKey   string     `json:"child_key"`
}

// RunError is why a run or a node failed.
type RunError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Terminal reports whether the run has ended.
func (r *Run) Terminal() bool {
	switch r.Status {
	case "succeeded", "failed", "cancelled", "timed_out", "terminated":
		return true
	}
	return false
}

// GetRun reads a run with its nodes.
func (c *Client) GetRun(ctx context.Context, id string) (*Run, error) {
	var r Run
	if _, err := c.do(ctx, http.MethodGet, "/runs/"+url.PathEscape(id), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WaitRun reads the run every interval until it has ended or ctx ends.
func (c *Client) WaitRun(ctx context.Context, id string, interval time.Duration) (*Run, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		r, err := c.GetRun(ctx, id)
		if err != nil || r.Terminal() {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("ductor: wait for run %s: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// Signal sends a signal to a run. RequestID deduplicates: a repeat is an
// [APIError] with status 409.
func (c *Client) Signal(ctx context.Context, runID, requestID, name string, payload any) error {
	body := map[string]any{"request_id": requestID, "name": name, "payload": payload}
	_, err := c.do(ctx, http.MethodPost, "/runs/"+url.PathEscape(runID)+"/signals", body, nil)
	return err
}

// Event is a tenant event.
type Event struct {
	Name string `json:"name"`
	Data any    `json:"data,omitempty"`
	// IdempotencyKey makes a repeated event answer the first one's id.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// PublishEvent stores an event for the runs waiting for its name and
// returns its id.
func (c *Client) PublishEvent(ctx context.Context, e Event) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	_, err := c.do(ctx, http.MethodPost, "/events", e, &out)
	return out.ID, err
}
