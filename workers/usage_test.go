package workers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/checker"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// usageWorkload publishes the mixed workload's definitions for tenant
// and runs it: chains, a scatter whose children fail once and are
// retried, runs that wait on an event and on a signal.
func (b testBundle) usageWorkload(t *testing.T, tenant store.Tenant, n int) {
	t.Helper()
	b.tenant = tenant
	b.publishYAML(t, `
key: u-chain
steps:
  - {ref: a, type: task, with: {handler: builtin.echo}}
  - {ref: b, type: transform, with: {expr: '{"n": 2}'}}
  - {ref: c, type: task, with: {handler: builtin.noop}}
edges:
  - {from: a, to: b}
  - {from: b, to: c}
`)
	b.publishYAML(t, `
key: u-scatter
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: input.items
      key_expr: '"k" + string(index)'
      concurrency: 4
      do: {type: task, with: {handler: test.flaky, input_expr: item}, retry: {max_attempts: 3, initial_interval: 10ms}}
`)
	b.publishYAML(t, `
key: u-wait
steps:
  - {ref: paid, type: event, with: {name: paid, match_expr: 'event.order == input.order'}}
  - {ref: ok, type: signal, with: {name: ok}}
edges:
  - {from: paid, to: ok}
`)
	var ids []uuid.UUID
	for i := range n {
		ids = append(ids, b.start(t, "u-chain", map[string]any{"n": i}))
		ids = append(ids, b.start(t, "u-scatter", map[string]any{"items": items(4)}))
		w := b.start(t, "u-wait", map[string]any{"order": i})
		b.waitNode(t, w, "paid", engine.NodeWaiting)
		b.event(t, "paid", map[string]any{"order": i})
		b.waitNode(t, w, "ok", engine.NodeWaiting)
		if err := b.signal(t, w, fmt.Sprint("r", i), "ok", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w)
	}
	for _, id := range ids {
		b.waitTerminal(t, id)
	}
}

// flaky fails each item's first attempt (retryably) and then succeeds.
func flaky() map[string]steps.Handler {
	return map[string]steps.Handler{"test.flaky": func(_ context.Context, c steps.Call) (any, error) {
		if c.Attempt == 1 {
			return nil, errors.New("first attempt fails")
		}
		return c.Input, nil
	}}
}

// assertStoredBytesMatchTables checks the stored bytes alone: the other
// figures count what happened, which a prune does not take back.
func assertStoredBytesMatchTables(t *testing.T, b testBundle) {
	t.Helper()
	found, err := checker.StoredBytes(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range found {
		t.Error(v)
	}
}

// assertUsageMatchesTables checks every figure (checker.Usage).
func assertUsageMatchesTables(t *testing.T, b testBundle) {
	t.Helper()
	var runs int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM run`).Scan(&runs); err != nil || runs == 0 {
		t.Fatalf("the workload left no runs (%v): the check proves nothing", err)
	}
	found, err := checker.Usage(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range found {
		t.Error(v)
	}
}

// Every usage figure equals what the tables hold, per tenant and day,
// before and after the deltas are folded, with result writes that fail
// and are retried in the middle of the workload.
func TestUsageAddsUpToTheTables(t *testing.T) {
	t.Parallel()
	var faults atomic.Int32
	b := setupWith(t, func(c *workers.Config) {
		c.Usage.FoldEvery = time.Hour // folded by the test, at chosen moments
		c.Testing.FaultTx = func(ctx context.Context, tx pgx.Tx, point string) error {
			if point == shell.FaultResultWrite && faults.Add(1)%5 == 0 {
				return errors.New("injected: the result write fails and is tried again")
			}
			return nil
		}
	}, flaky())
	other := testdb.Tenant(t, b.store, nil)
	b.usageWorkload(t, b.tenant, 3)
	assertUsageMatchesTables(t, b)
	assertStepsByType(t, b, b.tenant.ID, "task", "transform", "scatter")
	if _, err := b.coord.Usage.Fold(b.ctx); err != nil {
		t.Fatal(err)
	}
	b.usageWorkload(t, other, 2)
	assertUsageMatchesTables(t, b)
	if _, err := b.coord.Usage.Fold(b.ctx); err != nil {
		t.Fatal(err)
	}
	assertUsageMatchesTables(t, b)
	assertStepsByType(t, b, other.ID, "task", "transform", "scatter")
	if faults.Load() < 5 {
		t.Errorf("only %d result writes, none failed", faults.Load())
	}
	// Every attempt and history batch carries its run's definition, so the
	// metering triggers never look a run up (migration 0055).
	var looked int64
	if err := b.pool.QueryRow(b.ctx, `SELECT (SELECT count(*) FROM run_attempt WHERE definition_key IS NULL)
		+ (SELECT count(*) FROM run_history_batch WHERE definition_key IS NULL)`).Scan(&looked); err != nil || looked != 0 {
		t.Errorf("%d attempt and history rows written without their run's definition (%v)", looked, err)
	}
	var pending int64
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM usage_delta`).Scan(&pending); err != nil || pending != 0 {
		var left string
		_ = b.pool.QueryRow(b.ctx, `SELECT string_agg(format('%s %s steps=%s us=%s bytes=%s', day, definition_key, steps, step_us, stored_bytes), '; ')
			FROM (SELECT * FROM usage_delta ORDER BY id LIMIT 20) d`).Scan(&left)
		t.Errorf("%d deltas left after the fold (%v): %s", pending, err, left)
	}
}

// A worker killed mid-step leaves an attempt started and never finished;
// the sweep reports it lost and the retry runs. Both attempts count, and
// the figures still equal the tables.
func TestUsageAddsUpAfterAWorkerDies(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false,
		config: func(c *workers.Config) { c.RescueWindow = 200 * time.Millisecond }})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: doomed
steps:
  - {ref: work, type: task, with: {handler: builtin.noop}, timeout: 300ms}
`)
	id := b.start(t, "doomed", nil)
	var jobID int64
	b.poll(t, func() bool {
		return b.pool.QueryRow(b.ctx, `SELECT id FROM river_job WHERE kind = 'ductor.step' AND args->>'run_id' = $1`, id.String()).Scan(&jobID) == nil
	})
	if _, err := b.pool.Exec(b.ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, jobID); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.store.AttemptStart(b.ctx, b.tenant.ID, id, "work", 0, 1, 500*time.Millisecond); err != nil || !ok {
		t.Fatalf("take attempt: %v %v", ok, err)
	}
	startWith(t, pool, roles{steps: true})
	if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	assertUsageMatchesTables(t, b)
	u, err := b.coord.Usage.Read(b.ctx, b.tenant.ID, time.Now().UTC().AddDate(0, 0, -1), time.Now().UTC().AddDate(0, 0, 2), "day")
	if err != nil {
		t.Fatal(err)
	}
	if u.Total.Steps != 2 || u.Total.RunsStarted != 1 || u.Total.RunsSucceeded != 1 {
		t.Errorf("usage %+v, want 2 steps (the lost one and its retry) of one run that succeeded", u.Total)
	}
	// The lost attempt was taken without its type (as a worker from
	// before types were recorded takes it); the tick that recorded it lost
	// wrote its type, which moved its step from unknown to task.
	if got := u.Total.StepsByType; got["task"].Steps != 2 || len(got) != 1 {
		t.Errorf("steps by type %+v, want 2 task steps", got)
	}
}

// assertStepsByType checks a tenant's steps by type this month: each of
// types has steps, none is unknown, and they add up to the total; and
// every started attempt recorded its type.
func assertStepsByType(t *testing.T, b testBundle, tenantID uuid.UUID, types ...string) {
	t.Helper()
	from := store.MonthStart(time.Now())
	u, err := b.coord.Usage.Read(b.ctx, tenantID, from.AddDate(0, -1, 0), from.AddDate(0, 1, 0), "definition")
	if err != nil {
		t.Fatal(err)
	}
	var steps, micros int64
	for typ, n := range u.Total.StepsByType {
		steps += n.Steps
		micros += n.StepMicros
		if typ == "unknown" {
			t.Errorf("%d steps of an unknown type", n.Steps)
		}
	}
	if steps != u.Total.Steps || micros != u.Total.StepMicros {
		t.Errorf("steps by type add up to %d steps, %d µs; the totals are %d, %d", steps, micros, u.Total.Steps, u.Total.StepMicros)
	}
	for _, typ := range types {
		if u.Total.StepsByType[typ].Steps == 0 {
			t.Errorf("no %s steps in %+v", typ, u.Total.StepsByType)
		}
	}
	var untyped int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM run_attempt WHERE tenant_id = $1 AND step_type IS NULL`, tenantID).Scan(&untyped); err != nil || untyped != 0 {
		t.Errorf("%d attempts without a step type (%v)", untyped, err)
	}
}

// The usage check compares steps by type with the attempts' own types: an
// attempt whose type changes behind the metering's back is found.
func TestUsageCheckFindsStepsCountedUnderAnotherType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publishYAML(t, `
key: typed
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
`)
	b.waitTerminal(t, b.start(t, "typed", nil))
	assertUsageMatchesTables(t, b)
	for _, sql := range []string{
		`ALTER TABLE run_attempt DISABLE TRIGGER run_attempt_usage_update`,
		`UPDATE run_attempt SET step_type = 'http' WHERE step_type = 'task'`,
		`ALTER TABLE run_attempt ENABLE TRIGGER run_attempt_usage_update`,
	} {
		if _, err := b.pool.Exec(b.ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	found, err := checker.Usage(b.ctx, b.pool)
	if err != nil {
		t.Fatal(err)
	}
	var task, http bool
	for _, v := range found {
		task = task || strings.Contains(v, "/steps.task:")
		http = http || strings.Contains(v, "/steps.http:")
	}
	if !task || !http {
		t.Errorf("the check did not find the steps moved from task to http: %q", found)
	}
}

// A tenant at its monthly step quota is refused new starts with
// quota_exceeded while its running runs finish (their remaining steps
// counted); another tenant is unaffected; raising the quota lets starts
// through at once.
func TestMonthlyStepQuotaRefusesStartsNotRunningRuns(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setup(t, map[string]steps.Handler{"test.gate": func(ctx context.Context, _ steps.Call) (any, error) {
		select {
		case <-release:
			return "through", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	other := testdb.Tenant(t, b.store, nil)
	for _, tn := range []store.Tenant{b.tenant, other} {
		testdb.Definition(t, b.store, tn.ID, `
key: gated
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
  - {ref: wait, type: task, with: {handler: test.gate}}
  - {ref: c, type: task, with: {handler: builtin.noop}}
edges:
  - {from: a, to: wait}
  - {from: wait, to: c}
`)
	}
	limit := int64(2)
	if err := b.coord.Usage.SetTenant(b.ctx, b.tenant.ID, store.QuotaChange{MonthlySteps: &limit}); err != nil {
		t.Fatal(err)
	}
	running := b.start(t, "gated", nil)
	b.poll(t, func() bool { // the gate's attempt has started: 2 steps of 2
		st, err := b.coord.Usage.State(b.ctx, b.tenant.ID)
		return err == nil && st.Quotas[0].Used == 2
	})
	_, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "gated"}, nil)
	wantCode(t, err, apperr.QuotaExceeded)
	var ae *apperr.Error
	errors.As(err, &ae)
	if ae.RetryAfter <= 0 || ae.RetryAfter > 31*24*time.Hour {
		t.Errorf("Retry-After %s, want the time to the next month", ae.RetryAfter)
	}
	if d, _ := ae.Details.(map[string]any); d["quota"] != "monthly_steps" || d["used"] != int64(2) || d["limit"] != int64(2) {
		t.Errorf("details %v, want the quota, its use and its limit", ae.Details)
	}
	if _, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: other.ID, Definition: "gated"}, nil); err != nil {
		t.Fatalf("another tenant's start: %v", err)
	}
	close(release)
	if run := b.waitTerminal(t, running); run.Status != engine.RunSucceeded {
		t.Fatalf("the running run %s, want it to finish", run.Status)
	}
	state, err := b.coord.Usage.State(b.ctx, b.tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if over, ok := state.Exceeded(); !ok || over.Used != 3 {
		t.Errorf("quota state %+v, want monthly_steps exceeded with the 3 steps of the run that finished", state)
	}
	warnings, _ := b.store.UsageWarningList(b.ctx, b.tenant.ID, store.MonthStart(time.Now()))
	if len(warnings) != 1 || warnings[0].Quota != "monthly_steps" {
		t.Errorf("warnings %+v, want one for monthly_steps", warnings)
	}
	// The warning is a system event too, once, that triggers and
	// subscriptions can react to.
	var events int
	var data string
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*), coalesce(max(data::text), '') FROM event WHERE tenant_id = $1 AND name = 'ductor.usage.warning'`,
		b.tenant.ID).Scan(&events, &data); err != nil || events != 1 || !strings.Contains(data, `"quota": "monthly_steps"`) || !strings.Contains(data, `"limit": 2`) {
		t.Errorf("%d ductor.usage.warning events (%v): %s, want one naming monthly_steps and its limit", events, err, data)
	}
	limit = 1000
	if err := b.coord.Usage.SetTenant(b.ctx, b.tenant.ID, store.QuotaChange{MonthlySteps: &limit}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "gated"}, nil); err != nil {
		t.Fatalf("a start once the quota is raised: %v", err)
	}
}

// A schedule's action refused by the tenant's quota records not_started
// with the quota's error, and starts no run.
func TestScheduleRefusedByQuotaRecordsNotStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	b.newSchedule(t, "quota", "tick", time.Hour, schedule.OverlapAllowAll)
	zero := int64(0)
	if err := b.coord.Usage.SetTenant(b.ctx, b.tenant.ID, store.QuotaChange{MonthlyRuns: &zero}); err != nil {
		t.Fatal(err)
	}
	a, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "quota", schedule.OverlapAllowAll)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "not_started" || !strings.Contains(a.Error, "monthly_runs") {
		t.Errorf("action %+v, want not_started naming the quota", a)
	}
	if runs := b.runsOf(t, "quota"); len(runs) != 0 {
		t.Errorf("the refused action started %d runs", len(runs))
	}
}

// A burst of concurrent starts of a tenant with a monthly run quota
// starts exactly as many runs as the quota leaves: each start checks its
// use under the tenant's quota lock, in the transaction that creates
// (and counts) its run, so none passes the limit alongside another.
func TestMonthlyRunQuotaHoldsUnderABurstOfStarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, "key: burst\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\n")
	limit := int64(10)
	if err := b.coord.Usage.SetTenant(b.ctx, b.tenant.ID, store.QuotaChange{MonthlyRuns: &limit}); err != nil {
		t.Fatal(err)
	}
	const starts = 40
	var ok, refused atomic.Int64
	errs := make(chan error, starts)
	gate := make(chan struct{})
	done := make(chan struct{})
	for range starts {
		go func() {
			defer func() { done <- struct{}{} }()
			<-gate
			_, _, err := b.coord.Runs.Start(b.ctx, runs.Trigger{TenantID: b.tenant.ID, Definition: "burst"}, nil)
			switch {
			case err == nil:
				ok.Add(1)
			case apperr.CodeOf(err) == apperr.QuotaExceeded:
				refused.Add(1)
			default:
				errs <- err
			}
		}()
	}
	close(gate)
	for range starts {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Errorf("a start failed otherwise: %v", err)
	}
	var rows int64
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM run WHERE tenant_id = $1`, b.tenant.ID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if ok.Load() != limit || refused.Load() != starts-limit || rows != limit {
		t.Fatalf("%d starts went through and %d were refused, %d runs exist; want %d through, the rest refused", ok.Load(), refused.Load(), rows, limit)
	}
}
