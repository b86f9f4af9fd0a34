package shell

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// tickInline runs the run's tick inside tx, in a savepoint, when the run
// row can be locked without waiting: a remote worker's result, say,
// dispatches the next step at once, saving a whole job hop. It reports
// false (and leaves tx as it was) when the run is busy or the tick fails;
// the caller then wakes the run's tick job as usual.
func (c *Ticker) tickInline(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) (bool, error) {
	if c.NoInlineTicks {
		return false, nil
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	ok, err := c.tickLocked(ctx, sp, tenantID, runID, in)
	if err != nil || !ok {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return false, rbErr
		}
		if err != nil && !errors.Is(err, store.ErrConflict) {
			c.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", runID, "err", err)
		}
		return false, nil
	}
	return true, sp.Commit(ctx)
}

// tickLocked locks the run without waiting and ticks it with the input
// (if any) handed straight to the engine. It reports false, having written
// nothing for the run, when the run is busy, has a tick job on its way, or
// could not be ticked.
func (c *Ticker) tickLocked(ctx context.Context, tx pgx.Tx, tenantID, runID uuid.UUID, in engine.Input) (bool, error) {
	k := store.RunKey{TenantID: tenantID, ID: runID}
	var inputs []engine.Input
	if in != nil {
		inputs = append(inputs, in)
	}
	left, err := c.tickFree(ctx, tx, []store.RunKey{k}, map[store.RunKey][]engine.Input{k: inputs})
	return err == nil && len(left) == 0, err
}

// tickFree ticks in tx, together, the runs of keys that no transaction
// holds and that have no tick job on its way, with their inputs handed
// straight to the engine. It returns the runs it left alone: busy, already
// awaited by a tick job (a hot run, such as a fan-out's children finishing,
// is ticked in batches, not once per result), or failing to tick. Their
// inputs are the caller's to store for the tick job.
func (c *Ticker) tickFree(ctx context.Context, tx pgx.Tx, keys []store.RunKey, inputs map[store.RunKey][]engine.Input) (left []store.RunKey, err error) {
	if c.NoInlineTicks {
		return keys, nil
	}
	loads, err := c.load(ctx, store.New(tx), keys, true)
	if err != nil {
		return nil, err
	}
	defer c.obs.observeTick("inline", time.Now())
	ticks, left, err := freeTicks(keys, loads, inputs)
	if err != nil {
		return nil, err
	}
	if len(ticks) == 0 {
		return left, nil
	}
	failed, err := c.tickRuns(ctx, tx, ticks, c.InlineBudget)
	if err != nil {
		return nil, err
	}
	for _, t := range failed {
		c.logHandOver(ctx, t)
		left = append(left, t.key)
	}
	return left, nil
}

// decideFree reads the runs of keys and decides those that have no tick
// job on its way with their inputs handed straight to the engine, all
// with no transaction open (store.RunTickPeek), within InlineBudget. It
// returns the ticks it decided, to persist under their locks
// (lockDecided), and the runs it left alone: missing, awaited by a tick
// job, or failing to decide; their inputs are the caller's to store. The
// engine runs on the caller's goroutine (the result group's, not a River
// worker's): a panic becomes its error instead of taking the process
// down.
func (c *Ticker) decideFree(ctx context.Context, keys []store.RunKey, inputs map[store.RunKey][]engine.Input) (decided []*runTick, left []store.RunKey, err error) {
	if c.NoInlineTicks {
		return nil, keys, nil
	}
	defer recoverAs(&err)
	s := store.New(c.pool)
	loads, err := c.load(ctx, s, keys, false)
	if err != nil {
		return nil, nil, err
	}
	ticks, left, err := freeTicks(keys, loads, inputs)
	if err != nil {
		return nil, nil, err
	}
	decided, failed, err := c.decideRuns(ctx, s, nil, ticks, c.InlineBudget)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range failed {
		c.logHandOver(ctx, t)
		left = append(left, t.key)
	}
	return decided, left, nil
}

// lockDecided locks, in tx and without waiting, the runs of ticks that
// decideFree decided, and keeps those still as it read them: at the
// record version read, with no tick job on its way since, and, for a tick
// that ends its run, with no input delivered since the read (see
// tickOnce). It returns the others' keys as lost: busy, or changed; their
// inputs are the caller's to store for their tick jobs.
func (c *Ticker) lockDecided(ctx context.Context, tx pgx.Tx, ticks []*runTick) (kept []*runTick, lost []store.RunKey, err error) {
	if len(ticks) == 0 {
		return nil, nil, nil
	}
	keys := make([]store.RunKey, len(ticks))
	for i, t := range ticks {
		keys[i] = t.key
	}
	s := store.New(tx)
	locked, err := s.RunTickLockFree(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range ticks {
		l, ok := locked[t.key]
		if !ok || l.RecordVersion != t.load.Run.RecordVersion || l.TickRequested {
			lost = append(lost, t.key)
			continue
		}
		arrived, err := endsOnArrivals(ctx, s, t)
		if err != nil {
			return nil, nil, err
		}
		if arrived {
			lost = append(lost, t.key)
			continue
		}
		kept = append(kept, t)
	}
	return kept, lost, nil
}

// freeTicks makes a tick of each run of keys that loads holds and no tick
// job awaits, with its inputs normalized to be handed straight to the
// engine; the other runs are left, their inputs the caller's to store.
func freeTicks(keys []store.RunKey, loads map[store.RunKey]store.TickLoad, inputs map[store.RunKey][]engine.Input) (ticks []*runTick, left []store.RunKey, err error) {
	for _, k := range keys {
		l, ok := loads[k]
		if !ok || l.TickRequested {
			left = append(left, k)
			continue
		}
		t := &runTick{key: k, load: l}
		for _, in := range inputs[k] {
			in, err := store.NormalizeInput(in)
			if err != nil {
				return nil, nil, err
			}
			t.inputs = append(t.inputs, in)
		}
		ticks = append(ticks, t)
	}
	return ticks, left, nil
}

// endsOnArrivals reports, under the run's lock, whether t decided to end
// a run that an input reached since t's read: a run that ends drains
// nothing more, so t must decide again on what was delivered (a signal,
// whose sender found the run live, must reach it or the run continuing
// it).
func endsOnArrivals(ctx context.Context, s *store.Store, t *runTick) (bool, error) {
	if !t.state.Run.Status.Terminal() || t.load.Run.Status.Terminal() {
		return false, nil
	}
	return s.RunInputsArrived(ctx, t.key.TenantID, t.key.ID, t.pending.IDs, t.pending.More)
}

// logHandOver logs an inline tick handed over to its tick job; one that
// only ran out of its budget is routine.
func (c *Ticker) logHandOver(ctx context.Context, t *runTick) {
	if errors.Is(t.err, errInlineBudget) {
		c.log.DebugContext(ctx, "inline tick over budget; handing over to a tick job", "run_id", t.key.ID)
		return
	}
	c.log.WarnContext(ctx, "inline tick failed; handing over to a tick job", "run_id", t.key.ID, "err", t.err)
}

// TickNew runs a new run's first tick in the transaction that created
// it. That transaction holds the run, and all that RunTickLoad would read
// is known: no node, no pending input, the run as inserted, and the
// transaction's now() as the run's created_at. It reports false when the
// tick failed on its own, for a tick job to take over.
func (c *Ticker) TickNew(ctx context.Context, tx pgx.Tx, run store.Run) (bool, error) {
	c.inputs.put(run.ID, run.State.Input) // decoded from the row, as a load would
	defer c.obs.observeTick("inline", time.Now())
	k := store.RunKey{TenantID: run.TenantID, ID: run.ID}
	t := &runTick{key: k, load: store.TickLoad{LeanRun: store.LeanRun{Run: run, Now: run.CreatedAt}}}
	failed, err := c.tickRuns(ctx, tx, []*runTick{t}, c.InlineBudget)
	if err != nil {
		return false, err
	}
	for _, t := range failed {
		c.logHandOver(ctx, t)
	}
	return len(failed) == 0, nil
}
