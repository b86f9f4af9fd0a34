package runs

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
)

// Trigger asks for a new run.
type Trigger struct {
	TenantID         uuid.UUID
	Definition       string
	Version          int // 0: the latest published version
	Input            any
	Subject          string
	Context          map[string]any
	SearchAttributes map[string]any
	IdempotencyKey   string
	// MatchRequest makes the idempotency key name this very request, as
	// the API's does: the same key with a different request is an
	// IdempotencyMismatch. Ductor's own triggers (schedules, event
	// triggers) key an occurrence instead, whatever the request, and
	// leave it false.
	MatchRequest bool
	// Parent is the caller's span (an inbound traceparent): the run's
	// span joins its trace. Without it the run begins a trace of its own.
	Parent trace.SpanContext
}

// requestHash identifies what the trigger asks for, to compare a
// repeated idempotency key's request with the first: the definition and
// the version asked for (0, the latest, stays 0: a retry after a new
// version is published is the same request), input, subject, context and
// search attributes.
func (t Trigger) requestHash() (string, error) {
	return store.RequestHash(map[string]any{
		"definition": t.Definition, "version": t.Version, "input": t.Input, "subject": t.Subject,
		"context": orEmpty(t.Context), "search_attributes": orEmpty(t.SearchAttributes),
	})
}

// InputValidator checks trigger input against a definition's input schema.
type InputValidator func(schema []byte, input any) error

// Start creates a run and enqueues its first tick in one transaction. A
// repeated idempotency key returns the existing run with created false;
// with a different request, it is an IdempotencyMismatch (MatchRequest).
func (c *Service) Start(ctx context.Context, t Trigger, validate InputValidator) (store.Run, bool, error) {
	// The trigger of a tenant with nothing queued is urgent (see yieldGate).
	defer c.w.Urgent(t.TenantID)()
	if err := checkTrigger(t); err != nil {
		return store.Run{}, false, err
	}
	s := store.New(c.pool)
	v, err := c.w.Version(ctx, s, t.TenantID, t.Definition, t.Version)
	if err != nil {
		return store.Run{}, false, err
	}
	limited, err := c.admit(ctx, s, t.TenantID)
	if err != nil {
		return store.Run{}, false, err
	}
	if validate != nil && len(v.Manifest.InputSchema) > 0 {
		if err := validate(v.Manifest.InputSchema, t.Input); err != nil {
			return store.Run{}, false, err
		}
	}
	c.w.Remember(v)
	id := uuid.New()
	n := shell.NewRootRun(v, id, t.Input, t.Subject, t.Context, t.SearchAttributes)
	n.TenantID, n.IdempotencyKey = t.TenantID, t.IdempotencyKey
	if t.IdempotencyKey != "" && t.MatchRequest {
		if n.RequestHash, err = t.requestHash(); err != nil {
			return store.Run{}, false, err
		}
	}
	n.State.Trace = c.tracing.NewRun(ctx, t.Parent)
	var run store.Run
	var created bool
	ctx, tally := shell.WithFlowTally(ctx)
	// The start is logged as the transaction's last act, before it
	// commits: once it commits, its first step may run, and fail, before
	// this goroutine is scheduled again, and the run's log must read in
	// order. (Should the commit itself fail, the line names a run that
	// was not made; the run is retried under the same id or the caller
	// gets the error.)
	logged := false
	started := func() {
		if created && !logged {
			logged = true
			c.obs.RunStarted(ctx, run)
		}
	}
	create := func(inline bool) error {
		tally.Reset()
		// The inline tick may run the first step in this process, once the
		// start commits (c.t.WithTx).
		return c.t.WithTx(ctx, func(ctx context.Context, tx pgx.Tx) error {
			if limited { // again, exactly: under the tenant's quota lock
				if _, err := c.admit(ctx, store.New(tx), t.TenantID); err != nil {
					return err
				}
			}
			var startNow bool
			run, created, startNow, err = c.w.CreateRun(ctx, tx, v.Manifest, n, false)
			if err != nil || !startNow {
				if err == nil {
					started()
				}
				return err
			}
			if inline {
				ticked, err := c.t.TickNew(ctx, tx, run)
				if err != nil {
					return &inlineTickError{err}
				}
				if ticked {
					started()
					return nil
				}
			}
			if err := c.w.Wake(ctx, tx, t.TenantID, run.ID); err != nil {
				return err
			}
			started()
			return nil
		})
	}
	// The first tick runs in the creating transaction; should it fail,
	// the run is created again, for its tick job.
	err = create(c.t.Inline())
	var inlineErr *inlineTickError
	if errors.As(err, &inlineErr) {
		c.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", run.ID, "err", inlineErr.err)
		err = create(false)
	}
	if err == nil || apperr.CodeOf(err) != apperr.Internal { // committed, or refused
		c.w.CountFlow(tally)
	}
	return run, created, err
}

// checkTrigger refuses a trigger holding a NUL character, which cannot be
// stored, naming where it is.
func checkTrigger(t Trigger) error {
	for _, f := range []struct {
		name string
		v    any
	}{{"input", t.Input}, {"context", t.Context}, {"search_attributes", t.SearchAttributes}, {"subject", t.Subject}, {"idempotency_key", t.IdempotencyKey}} {
		if nul, found := jsonvalue.FindNUL(f.v); found {
			return NULProblem(f.name, f.name+nul.Path)
		}
	}
	return nil
}

// inlineTickError is a trigger's inline tick failing, which spoils the
// creating transaction.
type inlineTickError struct{ err error }

func (e *inlineTickError) Error() string { return "inline tick: " + e.err.Error() }
func (e *inlineTickError) Unwrap() error { return e.err }

// Control delivers an operator's control intent (cancel, retry-from-node,
// continue-as-new) to a run of the tenant, to be drained by its next tick.
func (c *Service) Control(ctx context.Context, tenantID, runID uuid.UUID, in engine.Input) error {
	return store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := store.New(tx).RunGet(ctx, tenantID, runID); err != nil {
			return err
		}
		return c.w.Deliver(ctx, tx, tenantID, runID, in)
	})
}

// RetryNode asks a run to retry a failed (or cancelled) node.
func (c *Service) RetryNode(ctx context.Context, tenantID, runID uuid.UUID, node string) error {
	s := store.New(c.pool)
	run, err := s.RunGet(ctx, tenantID, runID)
	if err != nil {
		return err
	}
	if err := c.refuseReopenUnderConcurrency(ctx, s, run); err != nil {
		return err
	}
	nodes, err := s.RunNodesByName(ctx, tenantID, runID, []string{node})
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return apperr.New(apperr.NotFound, "run has no node %q", node)
	}
	if st := nodes[0].State; st != engine.NodeFailed && st != engine.NodeCancelled {
		return apperr.New(apperr.Conflict, "node %q is %s: only a failed or cancelled node can be retried", node, st)
	}
	return c.Control(ctx, tenantID, runID, engine.RetryNode{RequestID: uuid.NewString(), Node: node})
}

// refuseReopenUnderConcurrency refuses to reopen a run that has ended
// when its definition limits runs per key: its slot was freed when it
// ended, and a retry does not pass admission again, so reopening it could
// put its key over the limit. A run still going holds its slot, and a
// node of it may be retried.
func (c *deps) refuseReopenUnderConcurrency(ctx context.Context, s *store.Store, r store.Run) error {
	if !r.Status.Terminal() {
		return nil
	}
	m, err := c.w.Manifest(ctx, s, r)
	if err != nil {
		return err
	}
	if len(m.Concurrency) == 0 {
		return nil
	}
	return apperr.New(apperr.Conflict, "run %s ended %s and its definition limits runs per key (concurrency): a retry would reopen it without a slot; start a new run instead", r.ID, r.Status)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
