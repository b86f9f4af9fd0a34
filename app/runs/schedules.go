package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
)

const (
	// ScheduleEvery is how often a coordinator process looks for due
	// schedules and for ended runs that free a buffered action.
	ScheduleEvery = 100 * time.Millisecond
	// scheduleBatch bounds the schedules one pass claims.
	scheduleBatch = 100
	// actionsPerPass bounds the actions one schedule takes in one pass
	// (a long outage is caught up over several).
	actionsPerPass = 100
	// keepActions is how many ended actions a schedule remembers.
	keepActions = 100
)

// Sources of a schedule action.
const (
	SourceSchedule = "schedule"
	SourceTrigger  = "trigger"
	SourceBackfill = "backfill"
)

// statusNotStarted is an action whose run could not be started (its
// definition is not published, or its input does not fit the input
// schema); the action's error and the schedule's last error say why.
const statusNotStarted = "not_started"

// stateDuplicate answers an action at a time already acted on.
const stateDuplicate = "duplicate"

// RunSchedules fires due schedules and starts buffered actions whose
// blocking run ended, until ctx ends. Every coordinator process runs it:
// a schedule is claimed with SKIP LOCKED and, in one transaction, its
// actions are recorded (keyed by scheduled time), its runs created and its
// next time moved on, so two replicas, a restart or a retry never start a
// scheduled time twice. The database's clock decides what is due.
func (c *Schedules) Run(ctx context.Context) {
	t := time.NewTicker(ScheduleEvery)
	defer t.Stop()
	for {
		for {
			n, err := c.Once(ctx)
			if err != nil && ctx.Err() == nil {
				c.log.ErrorContext(ctx, "schedules", "err", err)
			}
			if err != nil || n < scheduleBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SchedulesOnce settles a batch of schedules whose running action ended,
// then fires a batch of due schedules; it returns the larger batch.
func (c *Schedules) Once(ctx context.Context) (int, error) {
	settled, err := c.settleSchedules(ctx)
	if err != nil {
		return 0, err
	}
	fired, err := c.fireSchedules(ctx)
	return max(settled, fired), err
}

func (c *Schedules) fireSchedules(ctx context.Context) (int, error) {
	var n int
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		s := store.New(tx)
		now, err := s.Now(ctx)
		if err != nil {
			return err
		}
		due, err := s.SchedulesClaimDue(ctx, scheduleBatch)
		if err != nil {
			return err
		}
		n = len(due)
		for _, sc := range due {
			c.inSavepoint(ctx, tx, sc, func(tx pgx.Tx) error { return c.fire(ctx, tx, sc, now) })
		}
		return nil
	})
	return n, err
}

// inSavepoint runs one schedule's work in a savepoint: a schedule that
// fails is logged and tried again next pass, without holding up others.
func (c *Schedules) inSavepoint(ctx context.Context, tx pgx.Tx, sc store.Schedule, fn func(pgx.Tx) error) {
	if err := store.WithTx(ctx, tx, fn); err != nil && ctx.Err() == nil {
		c.log.ErrorContext(ctx, "schedule pass failed", "tenant_id", sc.TenantID, "schedule_id", sc.ID, "err", err)
	}
}

// fire takes a due schedule's actions: those within the catchup window
// under its overlap policy, the older ones counted as missed.
func (c *Schedules) fire(ctx context.Context, tx pgx.Tx, sc store.Schedule, now time.Time) error {
	plan, err := sc.Compiled()
	if err != nil {
		return store.New(tx).SchedulePause(ctx, sc.TenantID, sc.ID, "paused: "+err.Error())
	}
	p, err := c.openPass(ctx, tx, sc)
	if err != nil {
		return err
	}
	due := plan.Due(sc.ID, *sc.NextAt, now, sc.CatchupWindow, actionsPerPass)
	p.adv.Missed = due.Missed
	for _, t := range due.Act {
		if p.sc.Paused {
			break // paused by a failure of this pass
		}
		if _, err := c.act(ctx, p, t, SourceSchedule, sc.Overlap); err != nil {
			return err
		}
	}
	p.adv.NextAt, p.adv.DueAt = nil, nil
	if !due.Next.IsZero() {
		at := due.Next.Add(plan.Jitter(sc.ID, due.Next))
		p.adv.NextAt, p.adv.DueAt = &due.Next, &at
	}
	return c.closePass(ctx, p)
}

// settleSchedules ends the actions whose runs ended and starts what they
// held back (buffered actions), or pauses a pause_on_failure schedule
// whose run failed.
func (c *Schedules) settleSchedules(ctx context.Context) (int, error) {
	var n int
	err := store.WithTx(ctx, c.pool, func(tx pgx.Tx) error {
		keys, err := store.New(tx).SchedulesToSettle(ctx, scheduleBatch)
		if err != nil {
			return err
		}
		n = len(keys)
		for _, k := range keys {
			sc, ok, err := store.New(tx).ScheduleTryLock(ctx, k.TenantID, k.ID)
			if err != nil || !ok {
				continue // another replica has it; the next pass sees it
			}
			c.inSavepoint(ctx, tx, sc, func(tx pgx.Tx) error {
				p, err := c.openPass(ctx, tx, sc)
				if err != nil {
					return err
				}
				return c.closePass(ctx, p)
			})
		}
		return nil
	})
	return n, err
}

// schedulePass is one locked schedule's work in one transaction: its
// open actions and what the pass did.
type schedulePass struct {
	tx       pgx.Tx
	s        *store.Store
	sc       store.Schedule
	running  []store.ScheduleAction
	buffered []store.ScheduleAction
	adv      store.Advance
	// newlyBuffered counts the actions this pass buffered (a metric).
	newlyBuffered int
}

// openPass reads a locked schedule's open actions, ends those whose run
// ended and, when nothing runs any more, starts the oldest buffered one.
func (c *Schedules) openPass(ctx context.Context, tx pgx.Tx, sc store.Schedule) (*schedulePass, error) {
	p := &schedulePass{tx: tx, s: store.New(tx), sc: sc, adv: store.Advance{NextAt: sc.NextAt, DueAt: sc.DueAt, LastError: sc.LastError}}
	open, err := p.s.ScheduleActionsOpen(ctx, sc.TenantID, sc.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range open {
		if err := c.settle(ctx, p, a); err != nil {
			return nil, err
		}
	}
	return p, c.startBuffered(ctx, p)
}

func (c *Schedules) settle(ctx context.Context, p *schedulePass, a store.ScheduleAction) error {
	switch {
	case a.State == store.ActionBuffered:
		p.buffered = append(p.buffered, a)
		return nil
	case !engine.RunStatus(a.Status).Terminal():
		p.running = append(p.running, a)
		return nil
	}
	if err := p.s.ScheduleActionDone(ctx, p.sc.TenantID, p.sc.ID, a.ScheduledAt, a.Status); err != nil {
		return err
	}
	failed := a.Status == string(engine.RunFailed) || a.Status == string(engine.RunTimedOut)
	if failed && p.sc.PauseOnFailure && !p.sc.Paused {
		p.sc.Paused = true
		note := fmt.Sprintf("paused: run %s of %s %s", a.RunID, a.ScheduledAt.UTC().Format(time.RFC3339), a.Status)
		return p.s.SchedulePause(ctx, p.sc.TenantID, p.sc.ID, note)
	}
	return nil
}

// startBuffered starts buffered actions, oldest first, while nothing of
// the schedule runs (one at a time: each waits for the one before).
func (c *Schedules) startBuffered(ctx context.Context, p *schedulePass) error {
	for len(p.running) == 0 && len(p.buffered) > 0 && !p.sc.Paused {
		a := p.buffered[0]
		p.buffered = p.buffered[1:]
		if _, err := c.startAction(ctx, p, a.ScheduledAt, a.Source, true); err != nil {
			return err
		}
	}
	return nil
}

func (c *Schedules) closePass(ctx context.Context, p *schedulePass) error {
	c.triggers.scheduleActions(p.adv, p.newlyBuffered)
	if err := p.s.ScheduleAdvance(ctx, p.sc.TenantID, p.sc.ID, p.adv); err != nil {
		return err
	}
	return p.s.ScheduleActionsPrune(ctx, p.sc.TenantID, p.sc.ID, keepActions)
}

// act is one action at nominal time t under an overlap policy: start a
// run, buffer it behind the running one, or skip it; cancel_other and
// terminate_other first stop what runs.
func (c *Schedules) act(ctx context.Context, p *schedulePass, t time.Time, source string, o schedule.Overlap) (store.ScheduleAction, error) {
	v, stop := o.Decide(len(p.running), len(p.buffered))
	if stop {
		if err := c.stopRunning(ctx, p, t, o); err != nil {
			return store.ScheduleAction{}, err
		}
	}
	switch v {
	case schedule.Start:
		return c.startAction(ctx, p, t, source, false)
	case schedule.Buffer:
		added, err := p.s.ScheduleActionAdd(ctx, p.sc.TenantID, p.sc.ID, t, store.ActionBuffered, source)
		a := store.ScheduleAction{ScheduledAt: t, State: store.ActionBuffered, Source: source}
		if added {
			p.buffered = append(p.buffered, a)
			p.newlyBuffered++
		} else {
			a.State = stateDuplicate
		}
		return a, err
	}
	p.adv.Skipped++
	return store.ScheduleAction{ScheduledAt: t, State: "skipped", Source: source}, nil
}

// startAction starts the run of the action at t, recording the action
// first (unless it was buffered, and so is recorded): a time already
// acted on starts nothing and answers state "duplicate".
func (c *Schedules) startAction(ctx context.Context, p *schedulePass, t time.Time, source string, buffered bool) (store.ScheduleAction, error) {
	sc := p.sc
	a := store.ScheduleAction{ScheduledAt: t, State: store.ActionRunning, Source: source}
	if !buffered {
		added, err := p.s.ScheduleActionAdd(ctx, sc.TenantID, sc.ID, t, store.ActionRunning, source)
		if err != nil || !added {
			a.State = stateDuplicate
			return a, err
		}
	}
	run, _, err := c.startTx(ctx, p.tx, scheduledTrigger(sc, t))
	if notStartable(err) {
		return c.notStarted(ctx, p, a, err)
	}
	if err != nil {
		return a, err
	}
	a.RunID, a.Status = &run.ID, string(run.Status)
	p.running = append(p.running, a)
	p.adv.Actions++
	p.adv.LastError = ""
	return a, p.s.ScheduleActionStarted(ctx, sc.TenantID, sc.ID, t, run.ID)
}

// notStarted records an action whose run could not be started (its
// definition or version is gone, or its input does not fit the input
// schema): a failed action, with why, that pauses a pause_on_failure
// schedule.
func (c *Schedules) notStarted(ctx context.Context, p *schedulePass, a store.ScheduleAction, why error) (store.ScheduleAction, error) {
	sc := p.sc
	p.adv.LastError = why.Error()
	a.State, a.Status, a.Error = store.ActionDone, statusNotStarted, why.Error()
	if err := p.s.ScheduleActionNotStarted(ctx, sc.TenantID, sc.ID, a.ScheduledAt, a.Error); err != nil {
		return a, err
	}
	e := sysevents.ScheduleNotStarted(sysevents.ScheduleAction{
		Schedule: sc.ID, Definition: sc.Definition, ScheduledAt: a.ScheduledAt.UTC().Format(time.RFC3339Nano),
		Error: a.Error, Paused: sc.PauseOnFailure && !sc.Paused,
	})
	if _, err := p.s.SystemEventAdd(ctx, sc.TenantID, e.ID, e.Name, e.Data); err != nil {
		return a, err
	}
	if !sc.PauseOnFailure || sc.Paused {
		return a, nil
	}
	p.sc.Paused = true
	note := fmt.Sprintf("paused: the action of %s started no run: %s", a.ScheduledAt.UTC().Format(time.RFC3339), a.Error)
	return a, p.s.SchedulePause(ctx, sc.TenantID, sc.ID, note)
}

// scheduledTrigger is the run of a schedule's action at t: keyed by
// (schedule, time), and searchable by both.
func scheduledTrigger(sc store.Schedule, t time.Time) Trigger {
	at := t.UTC().Format(time.RFC3339Nano)
	return Trigger{
		TenantID: sc.TenantID, Definition: sc.Definition, Version: sc.Version, Input: sc.Input,
		SearchAttributes: map[string]any{"schedule_id": sc.ID, "scheduled_at": at},
		IdempotencyKey:   "schedule:" + sc.ID + ":" + at,
	}
}

// notStartable reports an error that no retry fixes: the definition or
// its version is gone, the input does not fit (or its flow control
// cannot key it), a rate limit dropped the start, or the tenant's quota
// refused it.
func notStartable(err error) bool {
	switch apperr.CodeOf(err) {
	case apperr.NotFound, apperr.Invalid, apperr.Unprocessable, apperr.RateLimited, apperr.QuotaExceeded:
		return err != nil
	}
	return false
}

// stopRunning cancels (cancel_other) or terminates (terminate_other) the
// schedule's running runs, for the action at t.
func (c *Schedules) stopRunning(ctx context.Context, p *schedulePass, t time.Time, o schedule.Overlap) error {
	for _, a := range p.running {
		var in engine.Input = engine.Terminate{Reason: engine.ReasonScheduleOverlap}
		if o == schedule.OverlapCancelOther {
			in = engine.Cancel{
				RequestID: "schedule:" + p.sc.ID + ":" + t.UTC().Format(time.RFC3339Nano),
				Reason:    "schedule " + p.sc.ID + ": a newer action replaces it (cancel_other)",
			}
		}
		if err := c.w.Deliver(ctx, p.tx, p.sc.TenantID, *a.RunID, in); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
	}
	if o == schedule.OverlapTerminateOther {
		p.running = nil // they end now; their actions settle next pass
	}
	return nil
}
