package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
)

// Bulk operations (run_batch) are worked by the sweep, one bounded chunk
// at a time, so a batch over a hundred thousand runs never crowds the
// engine out: each sweep round takes one chunk of a running batch no
// other process holds, delivers a cancel or a retry to each of its runs
// (each in a savepoint: a run that cannot be acted on is a failure of the
// batch, not of the chunk) and records the chunk's progress in the same
// transaction, so every run is acted on once. Tenants take turns, a chunk
// each (store.BatchClaim): a tenant's one-run cancel waits for one chunk
// of every other busy tenant, not for their whole batches; a tenant's own
// batches go oldest first. Each tenant's running batches have at most
// BatchQueueMax runs left to act on between them. While the coordinator
// queue has a backlog of tick jobs (the wakes the batch caused among
// them), batches wait.
const (
	// BatchChunk is how many runs one chunk acts on.
	BatchChunk = 50
	// batchBacklog is the number of waiting tick jobs at which batches
	// hold back.
	batchBacklog = 500
)

// BatchOnce works one chunk of the running batch whose tenant's turn it
// is and reports whether there was one to work.
func (c *Batches) Once(ctx context.Context) (bool, error) {
	if n, err := store.New(c.pool).TickBacklog(ctx, batchBacklog); err != nil || n >= batchBacklog {
		return false, err
	}
	worked := false
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		b, ok, err := s.BatchClaim(ctx)
		if err != nil || !ok {
			return err
		}
		worked = true
		chunk, err := c.batchChunk(ctx, tx, s, b)
		if err != nil {
			return err
		}
		if err := s.BatchProgress(ctx, b, chunk); err != nil || !chunk.Finished {
			return err
		}
		return s.AuditRecord(ctx, b.TenantID, b.Actor, store.AuditBatchFinish, b.ID.String(), map[string]any{
			"action": b.Action, "done": b.Done + chunk.Done, "failed": b.Failed + chunk.Failed,
		})
	})
	return worked, err
}

// batchChunk acts on the batch's next runs.
func (c *Batches) batchChunk(ctx context.Context, tx pgx.Tx, s *store.Store, b store.Batch) (store.BatchChunk, error) {
	runs, chunk, err := nextBatchRuns(ctx, s, b)
	if err != nil {
		return chunk, err
	}
	for _, r := range runs {
		err := store.WithTx(ctx, tx, func(sp pgx.Tx) error { return c.batchAct(ctx, sp, b, r) })
		switch {
		case err == nil:
			chunk.Done++
		case ctx.Err() != nil:
			return chunk, ctx.Err()
		default:
			if apperr.CodeOf(err) == apperr.Internal {
				c.log.WarnContext(ctx, "batch could not act on a run", "batch_id", b.ID, "run_id", r.ID, "tenant_id", b.TenantID, "err", err)
			}
			chunk.Failed++
			chunk.Errors = append(chunk.Errors, store.BatchError{RunID: r.ID, Message: batchMessage(err)})
		}
	}
	return chunk, nil
}

// nextBatchRuns reads the batch's next chunk of runs and where the one
// after starts. An id that names no run of the tenant is a failure.
func nextBatchRuns(ctx context.Context, s *store.Store, b store.Batch) ([]store.Run, store.BatchChunk, error) {
	var chunk store.BatchChunk
	if b.Filter == nil {
		end := min(b.Index+BatchChunk, len(b.RunIDs))
		chunk.Index, chunk.Finished = end, end == len(b.RunIDs)
		var runs []store.Run
		for _, id := range b.RunIDs[b.Index:end] {
			r, err := s.RunGet(ctx, b.TenantID, id)
			if apperr.CodeOf(err) == apperr.NotFound {
				chunk.Failed++
				chunk.Errors = append(chunk.Errors, store.BatchError{RunID: id, Message: "no such run"})
				continue
			}
			if err != nil {
				return nil, chunk, err
			}
			runs = append(runs, r)
		}
		return runs, chunk, nil
	}
	f := *b.Filter
	if b.Cursor != nil {
		f.Before = b.Cursor
	}
	f.Limit = BatchChunk
	runs, err := s.RunList(ctx, b.TenantID, f)
	if err != nil {
		return nil, chunk, err
	}
	chunk.Finished = len(runs) < BatchChunk
	if len(runs) > 0 {
		last := runs[len(runs)-1]
		chunk.Cursor = &store.RunCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return runs, chunk, nil
}

// batchAct delivers the batch's control to one run: a cancel to a run
// that has not ended, a retry of the step that failed (or was cancelled)
// to a failed or cancelled run. The request id is the batch's, so a
// chunk worked twice delivers nothing twice.
func (c *Batches) batchAct(ctx context.Context, tx pgx.Tx, b store.Batch, r store.Run) error {
	req := "batch:" + b.ID.String()
	switch b.Action {
	case store.BatchCancel:
		if r.Status.Terminal() {
			return apperr.New(apperr.Conflict, "the run already ended %s", r.Status)
		}
		return c.w.Deliver(ctx, tx, r.TenantID, r.ID, engine.Cancel{RequestID: req, Reason: b.Reason, By: b.Actor})
	case store.BatchRetry:
		if err := c.refuseReopenUnderConcurrency(ctx, store.New(tx), r); err != nil {
			return err
		}
		node, err := c.retryTarget(ctx, store.New(tx), r)
		if err != nil {
			return err
		}
		return c.w.Deliver(ctx, tx, r.TenantID, r.ID, engine.RetryNode{RequestID: req, Node: node})
	case store.BatchUpgradeRuns:
		return (&Upgrades{c.deps}).inBatch(ctx, tx, b, r)
	}
	return fmt.Errorf("batch %s: unknown action %q", b.ID, b.Action)
}

// retryTarget is the step a retry of a whole run retries: the one whose
// failure ended it, else its first failed or cancelled step.
func (c *Batches) retryTarget(ctx context.Context, s *store.Store, r store.Run) (string, error) {
	if r.Status != engine.RunFailed && r.Status != engine.RunCancelled {
		return "", apperr.New(apperr.Conflict, "only a failed or cancelled run can be retried; this one is %s", r.Status)
	}
	if e := r.State.Error; e != nil && e.Node != "" {
		return e.Node, nil
	}
	m, err := c.w.Manifest(ctx, s, r)
	if err != nil {
		return "", err
	}
	nodes, err := s.RunNodesSteps(ctx, r.TenantID, r.ID)
	if err != nil {
		return "", err
	}
	for _, ref := range m.Order {
		i := slices.IndexFunc(nodes, func(n *engine.Node) bool { return n.ID == ref })
		if i >= 0 && (nodes[i].State == engine.NodeFailed || nodes[i].State == engine.NodeCancelled) {
			return ref, nil
		}
	}
	return "", apperr.New(apperr.Conflict, "the run has no failed or cancelled step to retry")
}

// batchMessage is what a batch keeps of a failure: the message of an
// expected one, a generic line for anything else (which is logged).
func batchMessage(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return "internal error"
}

// MaxBatchRuns bounds the runs one batch may cover: narrow a filter that
// matches more.
const MaxBatchRuns = 100_000

// DefaultBatchQueueMax is the default bound on the runs a tenant's
// running batches have left to act on: two of the largest batches.
const DefaultBatchQueueMax = 2 * MaxBatchRuns

func (c *Batches) batchQueueMax() int {
	if c.BatchQueueMax > 0 {
		return c.BatchQueueMax
	}
	return DefaultBatchQueueMax
}

// batchRoom refuses a batch its tenant's queue has no room for: 422 for
// one larger than the whole bound (it never fits), 429 with how long the
// sweep of one process takes to work through the excess otherwise.
func (c *Batches) batchRoom(ctx context.Context, s *store.Store, b store.Batch) error {
	limit := c.batchQueueMax()
	if b.Total > limit {
		return apperr.New(apperr.Unprocessable, "a batch covers at most %d runs in this installation; this one covers %d", limit, b.Total)
	}
	queued, err := s.BatchQueued(ctx, b.TenantID)
	if err != nil || queued+b.Total <= limit {
		return err
	}
	wait := time.Duration((queued+b.Total-limit+BatchChunk-1)/BatchChunk) * shell.SweepEvery
	e := apperr.New(apperr.RateLimited, "the tenant's bulk operations have %d runs left to act on; at most %d may wait: try again later", queued, limit)
	e.RetryAfter = min(max(wait, time.Second), 5*time.Minute)
	return e
}

// CreateBatch stores a bulk operation for the sweep to work, with its
// audit row, and returns it: over the runs of b.RunIDs (each once), or
// over those matching b.Filter that were created before the batch. Total
// is how many runs it covers.
func (c *Batches) Create(ctx context.Context, b store.Batch) (store.Batch, error) {
	switch {
	case b.Action != store.BatchCancel && b.Action != store.BatchRetry && b.Action != store.BatchUpgradeRuns:
		return b, apperr.New(apperr.Invalid, `action must be "cancel", "retry" or "upgrade"`)
	case (b.Action == store.BatchUpgradeRuns) != (b.Upgrade != nil):
		return b, apperr.New(apperr.Invalid, "an upgrade batch, and only one, names its version")
	}
	var out store.Batch
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		if err := batchScope(ctx, s, &b); err != nil {
			return err
		}
		if err := c.batchRoom(ctx, s, b); err != nil {
			return err
		}
		var err error
		if out, err = s.BatchCreate(ctx, b); err != nil {
			return err
		}
		details := map[string]any{"action": b.Action, "total": b.Total, "reason": b.Reason}
		if b.Filter != nil {
			details["filter"] = b.Filter
		} else {
			details["run_ids"] = len(b.RunIDs)
		}
		return s.AuditRecord(ctx, b.TenantID, b.Actor, store.AuditBatchCreate, out.ID.String(), details)
	})
	return out, err
}

// Stop stops a running batch where it stands, with its audit row, and
// returns it: the chunk being worked (if any) commits first, its counts
// kept, and the runs not reached yet are left as they are. A batch that
// has already finished is a conflict.
func (c *Batches) Stop(ctx context.Context, tenantID, id uuid.UUID, actor string) (store.Batch, error) {
	var out store.Batch
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		b, ok, err := s.BatchStop(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if !ok {
			if b, err = s.BatchGet(ctx, tenantID, id); err != nil {
				return err
			}
			return apperr.New(apperr.Conflict, "the batch has already ended: it is %s", b.Status)
		}
		out = b
		return s.AuditRecord(ctx, tenantID, actor, store.AuditBatchStop, b.ID.String(), map[string]any{
			"action": b.Action, "done": b.Done, "failed": b.Failed, "total": b.Total,
		})
	})
	return out, err
}

// batchScope fixes what the batch covers and counts it: its ids without
// repeats, or its filter bounded to the runs created so far.
func batchScope(ctx context.Context, s *store.Store, b *store.Batch) error {
	if b.Filter == nil {
		seen := map[string]bool{}
		ids := b.RunIDs[:0:0]
		for _, id := range b.RunIDs {
			if !seen[id.String()] {
				seen[id.String()] = true
				ids = append(ids, id)
			}
		}
		b.RunIDs, b.Total = ids, len(ids)
		if b.Total > MaxBatchRuns {
			return apperr.New(apperr.Invalid, "a batch covers at most %d runs", MaxBatchRuns)
		}
		return nil
	}
	now, err := s.BatchCutoff(ctx)
	if err != nil {
		return err
	}
	if b.Filter.Before == nil || b.Filter.Before.CreatedAt.After(now) {
		b.Filter.Before = &store.RunCursor{CreatedAt: now, ID: uuid.Max}
	}
	n, err := s.RunCount(ctx, b.TenantID, *b.Filter, MaxBatchRuns+1)
	if err != nil {
		return err
	}
	if n > MaxBatchRuns {
		return apperr.New(apperr.Invalid, "the filter matches more than %d runs: narrow it", MaxBatchRuns)
	}
	b.Total = n
	return nil
}
