package shell

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
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
// never wait for each other's), then loads what it decides on in one
// read: the keys' latest starts (rate limit, throttle), the open
// debounce, the slots held and waited for by runs that have not ended.
// flowcontrol.Decide says what becomes of it, and the shell writes
// that (writeFlow). A run it holds back
// is created pending and held (engine.Run.Held), with a flow_hold row
// saying what it waits for; the sweep lets it go (flow_sweep.go) and it
// starts on an engine.Admit input. A slot is a flow_slot row that counts
// while its run has not ended, so the commit that ends a run, whatever
// ends it, releases its slots: nothing has to remember to. A step's
// concurrency pool is counted at admission (flow_steps.go).

// CreateRun inserts a new run in tx: at once when its definition has no
// flow rules, else under them. startNow is false for a run flow control
// holds back and for a run that was there already (created false: a
// repeated idempotency key, or a start a debounce coalesced). Under
// rules, a start takes its keys' locks, loads their state in one read,
// decides with one pure call (flowcontrol.Decide), then writes what
// that says (recordStart).
func (c *Writer) CreateRun(ctx context.Context, tx pgx.Tx, m *definition.Manifest, n store.NewRun, trigger bool) (run store.Run, created, startNow bool, err error) {
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
	start := flowcontrol.Start{Run: n.ID.String(), Keys: keys}
	st, now, err := loadFlowState(ctx, s, n.TenantID, keys)
	if err != nil {
		return run, false, false, err
	}
	v, w := flowcontrol.Decide(st, start, now)
	if v.Outcome == flowcontrol.Joined {
		if run, joined, err := c.joinDebounce(ctx, s, n, w.Join); err != nil || joined {
			return run, false, false, err
		}
		// Its run went meanwhile: the start opens a debounce of its own.
		st.Debounce = nil
		v, w = flowcontrol.Decide(st, start, now)
	}
	return c.recordStart(ctx, tx, n, keys, v, w, trigger)
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

// loadFlowState reads the state of a start's keys in one round trip,
// with the database's clock. The caller holds the keys' locks.
func loadFlowState(ctx context.Context, s *store.Store, tenantID uuid.UUID, k flowcontrol.Keys) (flowcontrol.State, time.Time, error) {
	var q store.FlowStateQuery
	if w := k.RateLimit; w != nil {
		q.RateLimit = &store.FlowWindow{FlowKey: store.FlowKey{Pool: w.Pool, Key: w.Key}, Limit: w.Limit}
	}
	if w := k.Throttle; w != nil {
		q.Throttle = &store.FlowWindow{FlowKey: store.FlowKey{Pool: w.Pool, Key: w.Key}, Limit: w.Limit}
	}
	if d := k.Debounce; d != nil {
		q.Debounce = &store.FlowKey{Pool: d.Pool, Key: d.Key}
	}
	for _, sl := range k.Slots {
		q.Slots = append(q.Slots, store.FlowSlotKey{FlowKey: store.FlowKey{Pool: sl.Pool, Key: sl.Key},
			Oldest: sl.Strategy == definition.StrategyCancelInProgress})
	}
	loaded, err := s.FlowStateLoad(ctx, tenantID, q)
	if err != nil {
		return flowcontrol.State{}, time.Time{}, err
	}
	st := flowcontrol.State{RateLimit: loaded.RateLimit, Throttle: loaded.Throttle}
	if d := loaded.Debounce; d != nil {
		st.Debounce = &flowcontrol.OpenDebounce{Run: d.RunID.String(), Pending: d.RunStatus == engine.RunPending, MaxAt: orZero(d.MaxAt)}
	}
	for _, ks := range loaded.Slots {
		one := flowcontrol.KeyState{Held: ks.Held, Waiting: ks.Waiting}
		for _, id := range ks.Oldest {
			one.Oldest = append(one.Oldest, id.String())
		}
		st.Slots = append(st.Slots, one)
	}
	return st, loaded.Now, nil
}

// rateLimited is a rate limit's answer to a start over it, saying when
// to try again.
func rateLimited(n store.NewRun, w *flowcontrol.Window, wait time.Duration) error {
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

// joinDebounce joins a start to its key's open debounce: the pending run
// takes the new input, and its quiet begins again. joined is false when
// that run is no longer pending.
func (c *Writer) joinDebounce(ctx context.Context, s *store.Store, n store.NewRun, j *flowcontrol.Join) (store.Run, bool, error) {
	id := uuid.MustParse(j.Run)
	k := store.FlowKey{Pool: j.Pool, Key: j.Key}
	joined, err := s.FlowDebounceJoin(ctx, n.TenantID, k, id, n.State.Input)
	if err != nil || !joined {
		return store.Run{}, false, err
	}
	if err := s.FlowHoldDue(ctx, n.TenantID, id, j.Due); err != nil {
		return store.Run{}, false, err
	}
	c.flowMetrics.decided(ctx, flowcontrol.KindDebounce, "joined")
	run, err := s.RunGet(ctx, n.TenantID, id)
	return run, true, err
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// recordStart creates a run by its verdict: started at once, or held
// (by its debounce, its throttle turn or its slots), with what the
// verdict writes. A start over its rate limit, or refused by
// cancel_newest at the API, creates nothing; from a trigger, a refused
// run is created held and cancelled.
func (c *Writer) recordStart(ctx context.Context, tx pgx.Tx, n store.NewRun, keys flowcontrol.Keys, v flowcontrol.Verdict, w flowcontrol.Writes, trigger bool) (store.Run, bool, bool, error) {
	switch {
	case v.Outcome == flowcontrol.RateLimited:
		c.flowMetrics.decided(ctx, flowcontrol.KindRateLimit, "refused")
		return store.Run{}, false, false, rateLimited(n, keys.RateLimit, v.RetryAfter)
	case v.Outcome == flowcontrol.Refused && !trigger:
		c.flowMetrics.decided(ctx, flowcontrol.KindConcurrency, "refused")
		return store.Run{}, false, false, refusal(v.Refused, n.DefinitionKey)
	}
	s := store.New(tx)
	n.State.Held = w.Held
	run, created, err := s.RunCreate(ctx, n)
	if err != nil || !created {
		return run, created, false, err
	}
	return run, true, !w.Held, c.writeFlow(ctx, tx, s, run, v, w)
}
