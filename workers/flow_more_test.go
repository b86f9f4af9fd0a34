package workers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A key kept busy past its debounce's max_wait starts its run then, with
// the last input, though it was never quiet for the period.
func TestFlowDebounceMaxWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: busy-key
debounce: {key_expr: input.user, period: 10m, max_wait: 30m}
steps:
  - {ref: out, type: transform, with: {expr: input.n}}
`)
	var first uuid.UUID
	for n := range 4 {
		b.shift(t, time.Duration(n)*9*time.Minute) // 0, 9, 18, 27 minutes: never quiet for 10
		run, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "busy-key", Input: map[string]any{"user": "u", "n": n}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			first = run.ID
		} else if run.ID != first {
			t.Fatalf("start %d made run %s, want the debounce's %s", n, run.ID, first)
		}
		if run, _ := b.store.RunGet(b.ctx, b.tenant.ID, first); run.Status != engine.RunPending {
			t.Fatalf("the debounced run is %s %d minutes in, want pending", run.Status, n*9)
		}
	}
	b.shift(t, 31*time.Minute) // past max_wait, four minutes after the last start
	run := b.waitTerminal(t, first)
	if run.Status != engine.RunSucceeded || run.State.Output.(map[string]any)["out"] != int64(3) {
		t.Fatalf("run %s, output %v: want succeeded with the last input's n, 3", run.Status, run.State.Output)
	}
}

// A limit that is an expression is each run's own: a premium run starts
// while fewer than two hold the key, a basic one while none other does,
// and the first waiting run goes first (a premium run behind a waiting
// basic one waits too).
func TestFlowLimitExpression(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: tiered
concurrency: [{key_expr: '"shared"', limit: 'input.tier == "premium" ? 2 : 1'}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	basic, premium := map[string]any{"tier": "basic"}, map[string]any{"tier": "premium"}
	b1 := b.start(t, "tiered", basic)
	b.waitRunStatus(t, b1, engine.RunWaiting)
	p1 := b.start(t, "tiered", premium)
	b.waitRunStatus(t, p1, engine.RunWaiting) // one holds the key, fewer than its two
	b2 := b.start(t, "tiered", basic)
	p2 := b.start(t, "tiered", premium)
	b.wantPending(t, b2, p2)
	b.release(t, b1)
	b.flowPasses(t)
	b.wantPending(t, b2, p2) // one still holds the key: b2 may not go, nor p2 past it
	b.release(t, p1)
	b.waitRunStatus(t, b2, engine.RunWaiting)
	b.waitRunStatus(t, p2, engine.RunWaiting) // one holds the key, fewer than p2's two
	b.release(t, b2)
	b.release(t, p2)
}

// flowPasses returns once the flow control sweep has made two whole
// passes since it was called: a run of a probe definition holding its
// key's one slot ends, and the run waiting behind it starts, three times
// over.
func (b testBundle) flowPasses(t *testing.T) {
	t.Helper()
	b.publishYAML(t, `
key: flow-probe
concurrency: [{limit: 1}]
steps:
  - {ref: gate, type: signal, with: {name: go}}
`)
	probes := make([]uuid.UUID, 4)
	for i := range probes {
		probes[i] = b.start(t, "flow-probe", nil)
	}
	for i, id := range probes[:3] {
		b.waitRunStatus(t, id, engine.RunWaiting)
		b.release(t, id)
		b.waitRunStatus(t, probes[i+1], engine.RunWaiting)
	}
	b.release(t, probes[3])
}

// wantPending checks each run still waits pending.
func (b testBundle) wantPending(t *testing.T, ids ...uuid.UUID) {
	t.Helper()
	for _, id := range ids {
		if run, err := b.store.RunGet(b.ctx, b.tenant.ID, id); err != nil || run.Status != engine.RunPending {
			t.Fatalf("run %s is %s (%v), want pending", id, run.Status, err)
		}
	}
}

// release lets a run waiting on its go signal succeed.
func (b testBundle) release(t *testing.T, id uuid.UUID) {
	t.Helper()
	if err := b.signal(t, id, "go-"+id.String(), "go", nil); err != nil {
		t.Fatal(err)
	}
	b.finish(t, id, engine.RunSucceeded)
}

// A step pool's slot is free again however its attempt ends: failed,
// timed out, or its run cancelled; then another run's step of the pool
// starts at once and nothing is left counted or held back.
func TestFlowStepPoolFreesHoweverAnAttemptEnds(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 4), make(chan struct{})
	b := setup(t, map[string]steps.Handler{"test.block": func(ctx context.Context, _ steps.Call) (any, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return map[string]any{}, ctx.Err()
	}})
	for key, with := range map[string]string{
		"pool-fail":    `{handler: builtin.fail, input_expr: '{"message": "planned"}'}, retry: {max_attempts: 2, initial_interval: 10ms}`,
		"pool-timeout": `{handler: test.block}, timeout: 1s, retry: {max_attempts: 1}`,
		"pool-cancel":  `{handler: test.block}`,
		"pool-ok":      `{handler: builtin.noop}`,
	} {
		b.publishYAML(t, `
key: `+key+`
steps:
  - {ref: call, type: task, concurrency: {key_expr: '"one-pool"', limit: 1}, with: `+with+`}
`)
	}
	b.finish(t, b.start(t, "pool-fail", nil), engine.RunFailed)
	b.finish(t, b.start(t, "pool-timeout", nil), engine.RunFailed)
	<-entered
	cancelled := b.start(t, "pool-cancel", nil)
	<-entered
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, cancelled, engine.Cancel{RequestID: "c", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	b.finish(t, cancelled, engine.RunCancelled)
	close(release)
	b.finish(t, b.start(t, "pool-ok", nil), engine.RunSucceeded)
	inFlight := -1
	counted := func() bool {
		n, err := b.store.StepFlowInFlight(b.ctx, b.tenant.ID, "one-pool")
		if err != nil {
			t.Fatal(err)
		}
		inFlight = n
		return n == 0
	}
	if !testwait.Until(b.ctx, 20*time.Second, counted) {
		t.Fatalf("%d attempts of the pool still counted once every run has ended", inFlight)
	}
}

// A scatter's http template takes a slot of its item's pool: calls of
// one region never overlap, across runs, while calls of the two regions
// run side by side.
func TestFlowScatterHTTPPoolPerItem(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	inFlight, peak := map[string]int{}, map[string]int{}
	total, peakTotal, calls := 0, 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		region := strings.TrimPrefix(r.URL.Path, "/")
		mu.Lock()
		inFlight[region]++
		total++
		calls++
		peak[region] = max(peak[region], inFlight[region])
		peakTotal = max(peakTotal, total)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight[region]--; total--; mu.Unlock() }()
		// wait (a while) for a call of the other region to be in flight too
		testwait.Until(r.Context(), time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return total > inFlight[region]
		})
		if r.Context().Err() != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(srv.Close)
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, http: steps.HTTPOptions{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: per-region
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: input.regions
      do:
        type: http
        concurrency: {key_expr: '"region-" + item', limit: 1}
        with: {url_expr: 'input.base + "/" + item'}
`)
	in := map[string]any{"base": srv.URL, "regions": []any{"eu", "us", "eu", "us"}}
	first, second := b.start(t, "per-region", in), b.start(t, "per-region", in)
	b.finish(t, first, engine.RunSucceeded)
	b.finish(t, second, engine.RunSucceeded)
	mu.Lock()
	defer mu.Unlock()
	if calls != 8 || peak["eu"] != 1 || peak["us"] != 1 || peakTotal != 2 {
		t.Fatalf("%d calls, at most %v at once per region and %d in all: want 8, one per region, two in all", calls, peak, peakTotal)
	}
}

// A schedule's action that a rate limit drops starts nothing: it is
// recorded not_started, with the reason as the schedule's last error, and
// the next action within the limit starts again.
func TestFlowRateLimitedScheduleActionIsNotStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: limited-tick
rate_limit: {limit: 1, period: 90s}
steps:
  - {ref: out, type: transform, with: {expr: '1'}}
`)
	sc := b.newSchedule(t, "minutely", "limited-tick", time.Minute, schedule.OverlapAllowAll)
	b.passAt(t, b.coord, sc.NextAt.Add(50*time.Millisecond))
	b.passAt(t, b.coord, sc.NextAt.Add(time.Minute+50*time.Millisecond))
	if runs := b.runsOf(t, "minutely"); len(runs) != 1 {
		t.Fatalf("%d runs, want the first action's alone", len(runs))
	}
	got := b.schedule(t, "minutely")
	actions, err := b.store.ScheduleActionsRecent(b.ctx, b.tenant.ID, "minutely", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.LastError, "rate") || len(actions) != 2 || actions[0].Status != "not_started" {
		t.Fatalf("last error %q, actions %+v: want the second not_started for the rate limit", got.LastError, actions)
	}
	b.passAt(t, b.coord, sc.NextAt.Add(2*time.Minute+50*time.Millisecond)) // 120 s after the first: past its period
	if runs := b.runsOf(t, "minutely"); len(runs) != 2 {
		t.Fatalf("%d runs, want a second once the period is over", len(runs))
	}
}

// An event trigger's start that a rate limit drops starts nothing and
// never fails the event: it is recorded as the trigger's last error.
func TestFlowRateLimitedEventTriggerStartsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, `key: on-signup
rate_limit: {limit: 1, period: 1h}
triggers: [{event: user.signed_up}]
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
`)
	for range 2 {
		if _, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "user.signed_up", Data: map[string]any{}}); err != nil {
			t.Fatalf("publish: %v, want the event stored whatever its trigger's rate limit says", err)
		}
	}
	runs, err := b.store.RunList(b.ctx, b.tenant.ID, store.RunFilter{Definition: "on-signup", Limit: 10})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs (%v), want the first event's alone", len(runs), err)
	}
	trs, err := b.store.EventTriggersOf(b.ctx, b.tenant.ID, "on-signup")
	if err != nil || len(trs) != 1 || trs[0].Started != 1 || !strings.Contains(trs[0].LastError, "rate") {
		t.Fatalf("triggers = %+v, %v: want one run started and the rate limit as the last error", trs, err)
	}
}

// A run that ended under a concurrency rule freed its slot; retrying it
// would reopen it past admission, so the retry is refused (409) and the
// run stays as it ended.
func TestFlowRetryOfAnEndedRunUnderConcurrencyIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]steps.Handler{
		"test.fail": func(context.Context, steps.Call) (any, error) {
			return nil, steps.Permanent(errors.New("no"))
		},
	})
	b.publishYAML(t, `
key: limited-fail
concurrency: [{key_expr: input.user, limit: 1}]
steps:
  - {ref: f, type: task, with: {handler: test.fail}}
`)
	id := b.start(t, "limited-fail", map[string]any{"user": "ada"})
	if run := b.waitTerminal(t, id); run.Status != engine.RunFailed {
		t.Fatalf("run %s, want failed", run.Status)
	}
	err := b.coord.Runs.RetryNode(b.ctx, b.tenant.ID, id, "f")
	if apperr.CodeOf(err) != apperr.Conflict || !strings.Contains(err.Error(), "concurrency") {
		t.Fatalf("retry of an ended run under a concurrency rule: %v, want a conflict naming concurrency", err)
	}
	if run := b.waitTerminal(t, id); run.Status != engine.RunFailed {
		t.Fatalf("after the refused retry the run is %s, want still failed", run.Status)
	}
}

// Attempts a pool holds back wait without being offered again on a timer
// (their rows stay as they were while the pool is full, however long) and
// start in the order they were held, each as soon as a slot frees; a new
// attempt of the key queues behind them.
func TestFlowPoolWaitersWaitInLineWithoutChurn(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	release := make(chan struct{})
	b := setup(t, map[string]steps.Handler{"test.line": func(ctx context.Context, c steps.Call) (any, error) {
		mu.Lock()
		order = append(order, c.RunID+"/"+c.Node)
		first := len(order) == 1
		mu.Unlock()
		if first {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return map[string]any{}, nil
	}})
	b.publishYAML(t, `
key: in-line
steps:
  - {ref: call, type: task, for_each: input.items, with: {handler: test.line}, concurrency: {key_expr: '"line"', limit: 1}}
`)
	run := b.start(t, "in-line", map[string]any{"items": items(12)})
	waiting := func() []string {
		rows, err := b.pool.Query(b.ctx, `SELECT run_id::text || '/' || node || '@' || ctid::text FROM run_dispatch
			WHERE args @> '{"pool_wait": true}' ORDER BY (args->>'held_us')::bigint, run_id, node, generation, attempt`)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var before []string
	b.poll(t, func() bool { before = waiting(); return len(before) == 11 })
	// Long past any recheck the old design made (a quarter of a second),
	// and with the sweep run by hand besides: no waiter was rewritten.
	b.shift(t, 2*time.Second)
	for range 3 {
		if _, err := b.coord.Sweeper.SweepOnce(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := waiting(); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("waiting attempts were rewritten while the pool stayed full:\nbefore %v\nafter  %v", before, after)
	}
	late := b.start(t, "in-line", map[string]any{"items": items(1)})
	b.poll(t, func() bool { return len(waiting()) == 12 })
	close(release)
	b.finish(t, run, engine.RunSucceeded)
	b.finish(t, late, engine.RunSucceeded)
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, w := range before {
		want = append(want, w[:strings.Index(w, "@")])
	}
	if got := order[1:12]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("waiters started in the order\n%v\nwant the order they were held in\n%v", got, want)
	}
	if last := order[12]; !strings.HasPrefix(last, late.String()) {
		t.Errorf("the late run's attempt started at %v, want last (order %v)", last, order)
	}
}
