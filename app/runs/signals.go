package runs

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// MaxPayloadBytes caps a signal's payload and an event's data (encoded):
// the cap every node output obeys.
const MaxPayloadBytes = engine.DefaultMaxOutputBytes

// maxChainHops bounds how far a signal follows ContinueAsNew successors.
const maxChainHops = 100

func (c *Service) maxSignals() int {
	if n := c.MaxBufferedSignals; n > 0 {
		return n
	}
	return engine.DefaultMaxBufferedSignals
}

// Signal stores a signal for a run and wakes it, in one transaction. A
// run that continued as new passes the signal on to its successor. The
// request id is unique in the run's chain (a repeat is a Conflict, also
// after a ContinueAsNew); a run holding as many unconsumed signals as the
// bound refuses more (RateLimited), counted under a lock that serialises
// the run's senders so that concurrent ones never pass the bound together;
// an ended run refuses any (Conflict).
// It returns the run that received the signal.
func (c *Service) Signal(ctx context.Context, tenantID, runID uuid.UUID, sig engine.Signal) (_ uuid.UUID, err error) {
	defer func() { c.obs.Signalled(err) }()
	if err := checkPayload("signal payload", "payload", sig.Payload); err != nil {
		return uuid.Nil, err
	}
	err = store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		run, err := liveRun(ctx, s, tenantID, runID)
		if err != nil {
			return err
		}
		runID = run.ID
		return c.signalTx(ctx, tx, s, run, sig)
	})
	return runID, err
}

func (c *Service) signalTx(ctx context.Context, tx pgx.Tx, s *store.Store, run store.Run, sig engine.Signal) error {
	chain, err := s.RunChainRoot(ctx, run.TenantID, run.ID)
	if err != nil {
		return err
	}
	if err := s.SignalLock(ctx, run.ID); err != nil {
		return err
	}
	open, err := s.SignalsOpen(ctx, run.TenantID, run.ID)
	if err != nil {
		return err
	}
	if open >= c.maxSignals() {
		awaited, err := signalAwaited(ctx, s, run, sig.Name)
		if err != nil {
			return err
		}
		if !awaited {
			return apperr.New(apperr.RateLimited, "run %s already holds %d unconsumed signals, the most it keeps", run.ID, open)
		}
	}
	added, err := s.SignalAdd(ctx, run.TenantID, chain, run.ID, sig)
	if err != nil {
		return err
	}
	if !added {
		return apperr.New(apperr.Conflict, "a signal with request id %q was already sent to this run", sig.RequestID)
	}
	return c.w.Deliver(ctx, tx, run.TenantID, run.ID, engine.SignalReceived{Signal: sig})
}

// liveRun is the run, or the last of its ContinueAsNew successors; an
// ended run is a Conflict. Each run is locked before its status is read
// (waiting for a tick that holds it): a signal decided on a run that a
// tick was continuing or ending meanwhile would be stored for a run that
// drains nothing more, and lost. The lock holds until the signal is
// stored, so the run cannot end or continue in between either.
func liveRun(ctx context.Context, s *store.Store, tenantID, runID uuid.UUID) (store.Run, error) {
	run, err := s.RunGetLocked(ctx, tenantID, runID)
	for hops := 0; err == nil && run.ContinuedToRunID != nil && hops < maxChainHops; hops++ {
		run, err = s.RunGetLocked(ctx, tenantID, *run.ContinuedToRunID)
	}
	if err != nil {
		return store.Run{}, err
	}
	if run.Status.Terminal() {
		return store.Run{}, apperr.New(apperr.Conflict, "run %s has ended (%s)", run.ID, run.Status)
	}
	return run, nil
}

// checkPayload refuses a value whose JSON is over MaxPayloadBytes
// (TooLarge) or that holds a NUL character, which cannot be stored
// (Unprocessable, with its path from root: "payload.items[2]").
func checkPayload(what, root string, v any) error {
	_, size, err := jsonvalue.Check(v, MaxPayloadBytes)
	var nul *jsonvalue.NULError
	switch {
	case err == nil:
		return nil
	case jsonvalue.IsTooLarge(err):
		return apperr.New(apperr.TooLarge, "%s is %d bytes, over the %d-byte limit", what, size, MaxPayloadBytes)
	case errors.As(err, &nul):
		return NULProblem(what, root+nul.Path)
	}
	return apperr.New(apperr.Invalid, "%s is not JSON: %v", what, err)
}

// NULProblem is the answer to a value holding a NUL character (U+0000),
// which Postgres cannot store: 422 with the path.
func NULProblem(what, path string) error {
	msg := "contains a NUL character (\\u0000), which cannot be stored"
	return apperr.New(apperr.Unprocessable, "%s %s at %s", what, msg, path).
		WithDetails([]map[string]string{{"path": path, "message": msg}})
}

// signalAwaited reports whether a node of the run waits for a signal of
// the name: such a signal is taken at once, not buffered, so the bound
// does not refuse it.
func signalAwaited(ctx context.Context, s *store.Store, run store.Run, name string) (bool, error) {
	nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return false, err
	}
	for _, n := range nodes {
		if n.State == engine.NodeWaiting && n.Waiting != nil && n.Waiting.Type == engine.WaitSignal && n.Waiting.Name == name {
			return true, nil
		}
	}
	return false, nil
}
