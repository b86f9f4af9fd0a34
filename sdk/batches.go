package sdk

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Bulk operations on runs: cancel or retry every run a filter matches, or
// a list of runs, in the background (see docs/dashboard.md#bulk-operations).

// RunQuery selects the runs of a bulk operation, with the runs list's
// filters; zero fields do not filter. Only runs created before the
// operation starts are covered.
type RunQuery struct {
	Status     string `json:"status"`
	Definition string `json:"definition"`
	// DefinitionMatch is how Definition matches keys: exact (default),
	// prefix or contains (ignoring case).
	DefinitionMatch string `json:"definition_match"`
	Subject         string `json:"subject"`
	// Q searches run ids and subjects by their beginning; name=value
	// words in it match search attributes.
	Q           string `json:"q"`
	ParentRunID string `json:"parent_run_id"`
	// Attributes match search attributes exactly.
	Attributes map[string]any `json:"attributes"`
	// From and To bound when the runs were created; To is excluded.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// MarshalJSON writes the filter, zero fields left out.
func (q RunQuery) MarshalJSON() ([]byte, error) { return marshalFields(q) }

// BatchRuns names the runs of a bulk operation: Filter, or RunIDs (at
// most 100,000 either way), and why.
type BatchRuns struct {
	Filter *RunQuery `json:"filter,omitempty"`
	RunIDs []string  `json:"run_ids,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// Batch is a bulk operation and its progress. Runs it could not act on
// (ended already, not failed, not found) count as Failed; Errors holds
// the first hundred with why.
type Batch struct {
	ID         string       `json:"id"`
	Action     string       `json:"action"` // cancel or retry
	Status     string       `json:"status"` // running, completed or stopped
	Total      int          `json:"total"`
	Done       int          `json:"done"`
	Failed     int          `json:"failed"`
	Reason     string       `json:"reason"`
	CreatedBy  string       `json:"created_by"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	Errors     []BatchError `json:"errors"`
}

// BatchError is a run a bulk operation could not act on, and why.
type BatchError struct {
	RunID   string `json:"run_id"`
	Message string `json:"message"`
}

// Finished reports whether the operation is done: with every run, or
// stopped.
func (b *Batch) Finished() bool { return b.Status != "" && b.Status != "running" }

// CancelRuns starts cancelling the runs r names and answers the
// operation; WaitBatch follows it to the end. A tenant whose running
// operations have too many runs left is refused with 429 and a
// Retry-After (see WithRetryAfter).
func (c *Client) CancelRuns(ctx context.Context, r BatchRuns) (Batch, error) {
	return c.batch(ctx, "cancel", r)
}

// RetryRuns starts retrying the failed or cancelled runs r names, each
// from the step whose failure ended it (as RetryNode), and answers the
// operation.
func (c *Client) RetryRuns(ctx context.Context, r BatchRuns) (Batch, error) {
	return c.batch(ctx, "retry", r)
}

func (c *conn) batch(ctx context.Context, action string, r BatchRuns) (Batch, error) {
	if (r.Filter == nil) == (r.RunIDs == nil) {
		return Batch{}, fmt.Errorf("ductor: a bulk %s needs either a filter or run ids", action)
	}
	body := struct {
		Action string `json:"action"`
		BatchRuns
	}{action, r}
	var out Batch
	_, err := c.do(ctx, http.MethodPost, "/runs/batch", body, &out)
	return out, err
}

// GetBatch reads a bulk operation's progress.
func (c *Client) GetBatch(ctx context.Context, id string) (Batch, error) {
	var out Batch
	_, err := c.do(ctx, http.MethodGet, "/batches/"+url.PathEscape(id), nil, &out)
	return out, err
}

// StopBatch stops a running bulk operation where it stands and answers
// it, Status "stopped", with the counts of what it did: the runs it had
// not reached are left as they are. One that has already ended is a 409
// APIError.
func (c *Client) StopBatch(ctx context.Context, id string) (Batch, error) {
	var out Batch
	_, err := c.do(ctx, http.MethodPost, "/batches/"+url.PathEscape(id)+"/stop", nil, &out)
	return out, err
}

// WaitBatch reads the operation every interval until it has finished or
// ctx ends.
func (c *Client) WaitBatch(ctx context.Context, id string, interval time.Duration) (Batch, error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		b, err := c.GetBatch(ctx, id)
		if err != nil || b.Finished() {
			return b, err
		}
		select {
		case <-ctx.Done():
			return b, fmt.Errorf("ductor: wait for batch %s: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}
