package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/flowcontrol"
	"github.com/ductor/ductor/app/store"
)

// Flow control per key, held in Postgres. A start of a definition with
// rules takes the advisory locks of its keys (sorted, so that two starts
// never wait for each other's), then reads what it decides on: the key's
// latest starts (rate limit, throttle), its open debounce, its slots
// held and waited for by runs that have not ended. A run it holds back
// is created pending and held (engine.Run.Held), with a flow_hold row
// saying what it waits for; the sweep lets it go (flow_sweep.go) and it
// starts on an engine.Admit input. A slot is a flow_slot row that counts
// while its run has not ended, so the commit that ends a run, whatever
// ends it, releases its slots: nothing has to remember to. A step's
// concurrency pool is counted at admission (flow_steps.go).

// createRun inserts a new run in tx: at once when its definition has no
// flow rules, else under them. startNow is false for a run flow control
// holds back and for a run that was there already (created false: a
// repeated idempotency key, or a start a debounce coalesced).
func (c *Coordinator) createRun(ctx context.Context, tx pgx.Tx, m *definition.Manifest, n store.NewRun, trigger bool) (run store.Run, created, startNow bool, err error) {
	s := store.New(tx)
	if !m.HasFlow() {
		run, created, err = s.RunCreate(ctx, n)
		return run, created, created, err
	}
	stage := flowcontrol.StageAll
	if m.Debounce != nil {
		stage = flowcontrol.StageStart
	}
	keys, err := flowcontrol.Evaluate(ctx, c.engine.Eval, m, flowVars(n.State), stage)
	if err != nil {
		return run, false, false, keyProblem(err)
	}
	if err := s.FlowLock(ctx, n.TenantID, lockKeys(keys)); err != nil {
		return run, false, false, err
	}
	if run, found, err := s.RunOfIdempotencyKey(ctx, n); err != nil || found {
		return run, false, false, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return run, false, false, err
	}
	if err := c.rateLimit(ctx, s, n, keys.RateLimit, now); err != nil {
		return run, false, false, err
	}
	if keys.Debounce != nil {
		return c.debounce(ctx, s, n, keys, now)
	}
	g, err := c.flowGate(ctx, s, n, keys, now)
	if err != nil {
		return run, false, false, err
	}
	return c.createGated(ctx, tx, n, g, trigger)
}

// flowVars are what a rule's expressions see: the input, and the run
// (its subject, context and search attributes among the rest).
func flowVars(r engine.Run) expr.Vars { return expr.Vars{Input: r.Input, Run: r.Meta} }

// keyProblem refuses a start whose rules cannot key it.
func keyProblem(err error) error {
	return apperr.Wrap(err, apperr.Unprocessable, "flow control cannot key this run: "+err.Error())
}

// lockKeys are every key a start decides on.
func lockKeys(k flowcontrol.Keys) []store.FlowKey {
	var out []store.FlowKey
	for _, w := range []*flowcontrol.Window{k.RateLimit, k.Throttle} {
		if w != nil {
			out = append(out, store.FlowKey{Pool: w.Pool, Key: w.Key})
		}
	}
	if q := k.Debounce; q != nil {
		out = append(out, store.FlowKey{Pool: q.Pool, Key: q.Key})
	}
	for _, sl := range k.Slots {
		out = append(out, store.FlowKey{Pool: sl.Pool, Key: sl.Key})
	}
	return out
}

// rateLimit refuses a start over its rate limit, saying when to try
// again; the start is counted once its run is created.
func (c *Coordinator) rateLimit(ctx context.Context, s *store.Store, n store.NewRun, w *flowcontrol.Window, now time.Time) error {
	if w == nil {
		return nil
	}
	latest, err := s.FlowStartsLatest(ctx, n.TenantID, store.FlowKey{Pool: w.Pool, Key: w.Key}, w.Limit)
	if err != nil {
		return err
	}
	wait := flowcontrol.RetryAfter(now, latest, *w)
	if wait <= 0 {
		return nil
	}
	c.flowMetrics.decided(ctx, flowcontrol.KindRateLimit, "refused")
	e := apperr.New(apperr.RateLimited, "rate_limit: at most %d runs of %s%s per %s; try again in %s",
		w.Limit, n.DefinitionKey, keyText(w.Key), w.Period, wait.Round(time.Millisecond))
	e.RetryAfter = wait
	return e.WithDetails(map[string]any{"rule": "rate_limit", "key": w.Key, "retry_after_ms": wait.Milliseconds()})
}

func keyText(key string) string {
	if key == "" {
		return ""
	}
	return fmt.Sprintf(" with key %q", key)
}

// countStart counts a created run's start under its rate limit.
func countStart(ctx context.Context, s *store.Store, run store.Run, w *flowcontrol.Window, at time.Time) error {
	if w == nil {
		return nil
	}
	return s.FlowStartAdd(ctx, run.TenantID, store.FlowKey{Pool: w.Pool, Key: w.Key}, at, run.ID, w.Period)
}

// debounce joins the start to its key's open debounce (the pending run
// takes the new input, and its quiet begins again), or opens one with a
// new held run.
func (c *Coordinator) debounce(ctx context.Context, s *store.Store, n store.NewRun, keys flowcontrol.Keys, now time.Time) (store.Run, bool, bool, error) {
	q := keys.Debounce
	k := store.FlowKey{Pool: q.Pool, Key: q.Key}
	open, found, err := s.FlowDebounceOpen(ctx, n.TenantID, k)
	if err != nil {
		return store.Run{}, false, false, err
	}
	if found && open.RunStatus == engine.RunPending {
		joined, err := s.FlowDebounceJoin(ctx, n.TenantID, k, open.RunID, n.State.Input)
		if err != nil {
			return store.Run{}, false, false, err
		}
		if joined {
			if err := s.FlowHoldDue(ctx, n.TenantID, open.RunID, flowcontrol.QuietAt(now, *q, orZero(open.MaxAt))); err != nil {
				return store.Run{}, false, false, err
			}
			c.flowMetrics.decided(ctx, flowcontrol.KindDebounce, "joined")
			run, err := s.RunGet(ctx, n.TenantID, open.RunID)
			return run, false, false, err
		}
	}
	n.State.Held = true
	run, created, err := s.RunCreate(ctx, n)
	if err != nil || !created {
		return run, created, false, err
	}
	var maxAt *time.Time
	if q.MaxWait > 0 {
		t := now.Add(q.MaxWait)
		maxAt = &t
	}
	if err := s.FlowDebounceBegin(ctx, n.TenantID, k, run.ID, maxAt); err != nil {
		return run, true, false, err
	}
	due := flowcontrol.QuietAt(now, *q, orZero(maxAt))
	if err := s.FlowHoldSet(ctx, n.TenantID, run.ID, store.StageDebounce, &due, []store.FlowRule{{Rule: "debounce", Key: q.Key}}); err != nil {
		return run, true, false, err
	}
	c.flowMetrics.decided(ctx, flowcontrol.KindDebounce, "held")
	return run, true, false, countStart(ctx, s, run, keys.RateLimit, now)
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// createGated creates a run that has met its rate limit and debounce,
// by what its throttle and concurrency rules say: started at once, or
// held until its turn or its slots; refused (cancel_newest) at the API,
// or, from a trigger, created held and cancelled.
func (c *Coordinator) createGated(ctx context.Context, tx pgx.Tx, n store.NewRun, g gateResult, trigger bool) (store.Run, bool, bool, error) {
	if g.plan.Verdict == flowcontrol.Refuse && !g.throttled() && !trigger {
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "refused")
		return store.Run{}, false, false, g.refusal(n.DefinitionKey)
	}
	s := store.New(tx)
	admitted := !g.throttled() && g.plan.Verdict == flowcontrol.Start
	n.State.Held = !admitted
	run, created, err := s.RunCreate(ctx, n)
	if err != nil || !created {
		return run, created, false, err
	}
	if err := countStart(ctx, s, run, g.keys.RateLimit, g.now); err != nil {
		return run, true, false, err
	}
	_, err = c.passGate(ctx, tx, s, run, g)
	return run, true, admitted, err
}
