package workers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// A run over its key's limit waits pending, held, and starts once the
// key's running run ends, in arrival order; another key runs meanwhile.
func TestFlowQueueHoldsAKeyInArrivalOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: per-user
concurrency: [{key_expr: input.user, limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	first := b.start(t, "per-user", map[string]any{"user": "a"})
	b.waitRunStatus(t, first, engine.RunWaiting)
	second := b.start(t, "per-user", map[string]any{"user": "a"})
	third := b.start(t, "per-user", map[string]any{"user": "a"})
	other := b.start(t, "per-user", map[string]any{"user": "b"})
	b.waitRunStatus(t, other, engine.RunWaiting)
	for _, id := range []uuid.UUID{second, third} {
		run, err := b.store.RunGet(b.ctx, b.tenant.ID, id)
		if err != nil || run.Status != engine.RunPending || !run.State.Held {
			t.Fatalf("run %s: %s held=%v (%v), want pending and held", id, run.Status, run.State.Held, err)
		}
		h, err := b.store.FlowHoldGet(b.ctx, b.tenant.ID, id)
		if err != nil || h.Stage != store.StageConcurrency || len(h.Rules) != 1 || h.Rules[0].Key != "a" {
			t.Fatalf("hold of %s = %+v, %v", id, h, err)
		}
	}
	if err := b.signal(t, first, "r1", "go", nil); err != nil {
		t.Fatal(err)
	}
	b.finish(t, first, engine.RunSucceeded)
	b.waitRunStatus(t, second, engine.RunWaiting)
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, third); run.Status != engine.RunPending {
		t.Fatalf("the third run is %s while the second runs", run.Status)
	}
	if err := b.signal(t, second, "r2", "go", nil); err != nil {
		t.Fatal(err)
	}
	b.waitRunStatus(t, third, engine.RunWaiting)
}

// cancel_newest refuses a start over the limit with 409 concurrency_limit
// at the API, and a trigger's start is created and cancelled instead.
func TestFlowCancelNewest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: one-at-a-time
concurrency: [{limit: 1, strategy: cancel_newest}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	first := b.start(t, "one-at-a-time", nil)
	_, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "one-at-a-time"}, nil)
	if !apperr.Is(err, apperr.ConcurrencyLimit) {
		t.Fatalf("a second start: %v, want concurrency_limit", err)
	}
	b.waitRunStatus(t, first, engine.RunWaiting)
}

// cancel_in_progress cancels the oldest run of the key, and the new one
// starts once it has ended.
func TestFlowCancelInProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: latest-edit
concurrency: [{key_expr: input.doc, limit: 1, strategy: cancel_in_progress}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	first := b.start(t, "latest-edit", map[string]any{"doc": 1})
	b.waitRunStatus(t, first, engine.RunWaiting)
	second := b.start(t, "latest-edit", map[string]any{"doc": 1})
	third := b.start(t, "latest-edit", map[string]any{"doc": 1})
	b.finish(t, first, engine.RunCancelled)
	b.finish(t, second, engine.RunCancelled)
	b.waitRunStatus(t, third, engine.RunWaiting)
}

// Five starts of a key within its debounce period make one run, which
// starts with the last input once the key is quiet.
func TestFlowDebounce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: burst
debounce: {key_expr: input.user, period: 1h}
steps:
  - {ref: out, type: transform, with: {expr: input.n}}
`)
	var ids []uuid.UUID
	for n := range 5 {
		run, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "burst", Input: map[string]any{"user": "u", "n": n}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("starts made runs %v, want one", ids)
		}
	}
	b.shift(t, time.Hour)
	run := b.waitTerminal(t, ids[0])
	if run.Status != engine.RunSucceeded || run.State.Output.(map[string]any)["out"] != int64(4) {
		t.Fatalf("run %s, output %v: want succeeded with the last input's n, 4", run.Status, run.State.Output)
	}
}

// A rate limit refuses the starts past it with a Retry-After; a throttle
// holds them for their turn.
func TestFlowRateLimitAndThrottle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: limited
rate_limit: {limit: 2, period: 1h}
steps:
  - {ref: out, type: transform, with: {expr: '1'}}
`)
	b.publishYAML(t, `
key: throttled
throttle: {limit: 1, period: 1h}
steps:
  - {ref: out, type: transform, with: {expr: '1'}}
`)
	b.start(t, "limited", nil)
	b.start(t, "limited", nil)
	_, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "limited"}, nil)
	var ae *apperr.Error
	if !apperr.Is(err, apperr.RateLimited) || !asAppErr(err, &ae) || ae.RetryAfter <= 59*time.Minute {
		t.Fatalf("a third start: %v, want rate_limited with about an hour to wait", err)
	}
	first, second := b.start(t, "throttled", nil), b.start(t, "throttled", nil)
	b.finish(t, first, engine.RunSucceeded)
	h, err := b.store.FlowHoldGet(b.ctx, b.tenant.ID, second)
	if err != nil || h.Stage != store.StageThrottle || h.DueAt == nil {
		t.Fatalf("second throttled run's hold = %+v, %v", h, err)
	}
	b.shift(t, time.Hour)
	b.finish(t, second, engine.RunSucceeded)
}

func asAppErr(err error, target **apperr.Error) bool { return errors.As(err, target) }

// A key's slot is free again however its run ends: failed, cancelled
// running or waiting, timed out, and continued as new (the successor
// holds it on, and frees it when it ends).
func TestFlowSlotsFreeHoweverARunEnds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: one-per-key
timeout: 1h
concurrency: [{key_expr: input.k, limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
  - {ref: fail, type: task, with: {handler: builtin.fail, input_expr: '{"message": "planned"}'}, retry: {max_attempts: 1}}
edges: [{from: gate, to: fail}]
`)
	in := map[string]any{"k": "x"}
	failed, cancelled, queuedThenCancelled := b.start(t, "one-per-key", in), b.start(t, "one-per-key", in), b.start(t, "one-per-key", in)
	timedOut, continued, last := b.start(t, "one-per-key", in), b.start(t, "one-per-key", in), b.start(t, "one-per-key", in)
	b.waitRunStatus(t, failed, engine.RunWaiting)
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, queuedThenCancelled, engine.Cancel{RequestID: "q", Reason: "while queued"}); err != nil {
		t.Fatal(err)
	}
	b.finish(t, queuedThenCancelled, engine.RunCancelled)
	if err := b.signal(t, failed, "f", "go", nil); err != nil {
		t.Fatal(err)
	}
	b.finish(t, failed, engine.RunFailed)
	b.waitRunStatus(t, cancelled, engine.RunWaiting)
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, cancelled, engine.Cancel{RequestID: "c", Reason: "while running"}); err != nil {
		t.Fatal(err)
	}
	b.finish(t, cancelled, engine.RunCancelled)
	b.waitRunStatus(t, timedOut, engine.RunWaiting)
	b.shift(t, time.Hour)
	b.finish(t, timedOut, engine.RunTimedOut)
	b.waitRunStatus(t, continued, engine.RunWaiting)
	successor, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, continued, "can", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.finish(t, continued, engine.RunTerminated)
	next := uuid.MustParse(successor)
	b.waitRunStatus(t, next, engine.RunWaiting)
	if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, last); run.Status != engine.RunPending {
		t.Fatalf("the last run is %s while the successor holds the slot", run.Status)
	}
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, next, engine.Cancel{RequestID: "s", Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	b.finish(t, next, engine.RunCancelled)
	b.waitRunStatus(t, last, engine.RunWaiting)
}

// A step's concurrency pool is shared by the runs and definitions that
// name its key: eight tasks of three runs of two definitions run two at
// a time.
func TestFlowStepPoolIsSharedAcrossRunsAndDefinitions(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	running, peak, done := 0, 0, 0
	b := setup(t, map[string]steps.Handler{"test.vendor": func(ctx context.Context, _ steps.Call) (any, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; done++; mu.Unlock() }()
		select { // hold the slot long enough for the others to try
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
		return map[string]any{}, nil
	}})
	for _, key := range []string{"calls-a", "calls-b"} {
		b.publishYAML(t, `
key: `+key+`
steps:
  - {ref: call, type: task, for_each: input.items, with: {handler: test.vendor}, concurrency: {key_expr: '"vendor"', limit: 2}}
`)
	}
	runs := []uuid.UUID{b.start(t, "calls-a", map[string]any{"items": items(3)}),
		b.start(t, "calls-b", map[string]any{"items": items(3)}), b.start(t, "calls-a", map[string]any{"items": items(2)})}
	for _, id := range runs {
		b.finish(t, id, engine.RunSucceeded)
	}
	if peak > 2 || done != 8 {
		t.Fatalf("%d of the pool's steps ran at once (limit 2), %d ran", peak, done)
	}
}
