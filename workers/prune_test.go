package workers_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/prune"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// everythingDoc leaves a row in most run-owned tables: attempts (one
// failed and retried), a child run, a consumed signal, a consumed event,
// an approval with its decision and a human-loop case.
const everythingDoc = `
key: everything
steps:
  - {ref: flaky, type: task, with: {handler: test.flaky}}
  - {ref: child, type: subworkflow, with: {workflow: child, input_expr: '{"v": 1.0}'}}
  - {ref: sig, type: signal, with: {name: go}}
  - {ref: paid, type: event, with: {name: paid}}
  - {ref: ok, type: approval, with: {approvers: ["ann@example.com"]}}
  - {ref: review, type: human_loop, with: {title: Review, assignees: ["ann@example.com"]}}
`

// waitsDoc consumes an event, starts an async child, then waits for a
// signal that never comes: its unit never finishes.
const waitsDoc = `
key: waits
steps:
  - {ref: kept, type: event, with: {name: kept}}
  - {ref: kid, type: subworkflow, with: {workflow: child, mode: async, input_expr: '{"v": 2.0}'}}
  - {ref: never, type: signal, with: {name: never}}
edges:
  - {from: kept, to: never}
`

func flakyHandler() map[string]steps.Handler {
	return map[string]steps.Handler{"test.flaky": func(_ context.Context, c steps.Call) (any, error) {
		if c.Attempt == 1 {
			return nil, &steps.Error{Code: "flaky", Message: "first attempt fails", Retryable: true}
		}
		return map[string]any{"ok": true}, nil
	}}
}

// Runs past an hour's retention disappear with every row of theirs, a root
// with its child and a ContinueAsNew chain as units; an unfinished run, its
// finished child and the event it consumed stay; an event that woke
// nothing goes.
func TestPruneDeletesExpiredRunsWithAllTheirRows(t *testing.T) {
	t.Parallel()
	b := setup(t, flakyHandler())
	// An hour, not seconds: on a slow machine the runs below can take
	// longer than a short retention to set up, and the first pass must
	// find nothing expired yet.
	if _, err := b.store.TenantSetRetention(b.ctx, b.tenant.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	b.publishYAML(t, childDoc)
	b.publishYAML(t, everythingDoc)
	b.publishYAML(t, waitsDoc)
	b.publishYAML(t, parkedDoc)

	done := b.runEverything(t)
	chain := b.runChain(t)
	waiting := b.start(t, "waits", nil)
	b.waitNode(t, waiting, "kept", engine.NodeWaiting)
	kept := b.event(t, "kept", nil)
	b.waitNode(t, waiting, "never", engine.NodeWaiting)
	kid := b.children(t, waiting)
	if len(kid) != 1 {
		t.Fatalf("%d children of the waiting run", len(kid))
	}
	b.waitTerminal(t, kid[0].ID)
	idle := b.event(t, "nobody-listens", nil)

	gone := append(b.unit(t, done), chain...)
	stays := []uuid.UUID{waiting, kid[0].ID}
	before := b.ownedRows(t, gone)
	for _, table := range []string{"run", "run_node", "run_history_batch", "run_attempt", "run_input", "run_signal",
		"event_use", "approval", "approval_decision", "run_case", "river_job"} {
		if before[table] == 0 {
			t.Errorf("the finished runs have no %s rows: the test proves nothing for that table", table)
		}
	}
	b.leaveStrayRows(t, done)
	b.poll(t, func() bool { return b.runningJobs(t, append(gone, stays...)) == 0 })
	staying := b.ownedRows(t, stays)

	// Before the retention passes nothing goes.
	pruner := prune.New(b.pool, prune.Options{Pace: -1, Logger: slog.New(slog.DiscardHandler)})
	if st, err := fullPass(t, b, pruner); err != nil || st.Runs != 0 || st.Events != 0 {
		t.Fatalf("pass before the retention: %+v %v", st, err)
	}
	// The runs' system events (ductor.*) woke nothing either: they go too.
	var system int64
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM event WHERE tenant_id = $1 AND name LIKE 'ductor.%'`, b.tenant.ID).Scan(&system); err != nil {
		t.Fatal(err)
	}
	b.shift(t, time.Hour+time.Second)
	st, err := fullPass(t, b, pruner)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != int64(len(gone)) || st.Events != 2+system {
		t.Errorf("pass deleted %d runs and %d events, want %d and %d (the idle one, the one only pruned runs used, %d system events)", st.Runs, st.Events, len(gone), 2+system, system)
	}
	for table, n := range b.ownedRows(t, gone) {
		if n != 0 {
			t.Errorf("%d %s rows of pruned runs are left", n, table)
		}
	}
	if after := b.ownedRows(t, stays); !equalCounts(after, staying) {
		t.Errorf("rows of the unfinished unit changed: %v, were %v", after, staying)
	}
	if !b.eventExists(t, kept) || b.eventExists(t, idle) {
		t.Errorf("event kept exists=%v (want true), idle exists=%v (want false)", b.eventExists(t, kept), b.eventExists(t, idle))
	}
	// The tenant's stored bytes are what its remaining rows hold: the
	// prune took back what it deleted (inputs, history, attempts).
	assertStoredBytesMatchTables(t, b)
	// And per definition: a definition none of whose runs is left stores
	// nothing (its attempts' bytes were taken back from it, not from the
	// tenant's unassigned bytes).
	rows, err := b.pool.Query(b.ctx, `SELECT definition_key, sum(stored_bytes)::bigint FROM (
		SELECT definition_key, stored_bytes FROM usage_delta WHERE tenant_id = $1
		UNION ALL SELECT definition_key, stored_bytes FROM usage_day WHERE tenant_id = $1) u
		WHERE definition_key <> '' AND NOT EXISTS (SELECT 1 FROM run WHERE tenant_id = $1 AND definition_key = u.definition_key)
		GROUP BY 1`, b.tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	defs := 0
	for rows.Next() {
		var key string
		var n int64
		if err := rows.Scan(&key, &n); err != nil {
			t.Fatal(err)
		}
		if defs++; n != 0 {
			t.Errorf("definition %s has no run left but stores %d bytes", key, n)
		}
	}
	if rows.Close(); rows.Err() != nil || defs == 0 {
		t.Errorf("no definition with every run pruned (%v): the per-definition check proves nothing", rows.Err())
	}
	if st, err := fullPass(t, b, pruner); err != nil || st.Runs != 0 {
		t.Errorf("a second pass: %+v %v", st, err)
	}
}

// runEverything runs everythingDoc to its end and returns the run.
func (b testBundle) runEverything(t *testing.T) uuid.UUID {
	t.Helper()
	id := b.start(t, "everything", nil)
	b.waitNode(t, id, "sig", engine.NodeWaiting)
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: "r1", Name: "go"}); err != nil {
		t.Fatal(err)
	}
	b.waitNode(t, id, "paid", engine.NodeWaiting)
	b.event(t, "paid", nil)
	b.waitNode(t, id, "ok", engine.NodeWaiting)
	as, err := b.store.ApprovalsOfRun(b.ctx, b.tenant.ID, id)
	if err != nil || len(as) != 1 {
		t.Fatalf("approvals %v %v", as, err)
	}
	if err := b.decide(as[0].ID, "ann@example.com", true); err != nil {
		t.Fatal(err)
	}
	b.waitNode(t, id, "review", engine.NodeWaiting)
	cs, err := b.store.CasesOfRun(b.ctx, b.tenant.ID, id)
	if err != nil || len(cs) != 1 {
		t.Fatalf("cases %v %v", cs, err)
	}
	resolved := "resolved"
	if _, err := b.coord.Runs.UpdateCase(b.ctx, b.tenant.ID, cs[0].ID, runs.CaseChange{Status: &resolved}); err != nil {
		t.Fatal(err)
	}
	b.finish(t, id, engine.RunSucceeded)
	return id
}

const parkedDoc = `
key: parked
steps:
  - {ref: wait, type: signal, with: {name: never}}
`

// runChain continues a waiting run as new and cancels the successor: a
// finished ContinueAsNew chain.
func (b testBundle) runChain(t *testing.T) []uuid.UUID {
	t.Helper()
	first := b.start(t, "parked", nil)
	b.waitRunStatus(t, first, engine.RunWaiting)
	next, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, first, "can", nil)
	if err != nil {
		t.Fatal(err)
	}
	b.waitTerminal(t, first)
	second := uuid.MustParse(next)
	b.waitRunStatus(t, second, engine.RunWaiting)
	if err := b.coord.Runs.Control(b.ctx, b.tenant.ID, second, engine.Cancel{RequestID: "stop"}); err != nil {
		t.Fatal(err)
	}
	b.waitTerminal(t, second)
	return []uuid.UUID{first, second}
}

// unit is the run and its children, each finished.
func (b testBundle) unit(t *testing.T, root uuid.UUID) []uuid.UUID {
	t.Helper()
	ids := []uuid.UUID{root}
	for _, k := range b.children(t, root) {
		b.waitTerminal(t, k.ID)
		ids = append(ids, k.ID)
	}
	return ids
}

// leaveStrayRows gives a finished run rows that usually go when it
// finishes: a timer, a delayed dispatch, a waiting event node and a bridge
// task.
func (b testBundle) leaveStrayRows(t *testing.T, run uuid.UUID) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO run_timer (tenant_id, run_id, timer_id, fire_at) VALUES ($1, $2, 'stray', now() + interval '1 day')`,
		`INSERT INTO run_dispatch (tenant_id, run_id, node, generation, attempt, fire_at, queue, args)
		 VALUES ($1, $2, 'flaky', 0, 9, now() + interval '1 day', 'steps_standard', '{}')`,
		`INSERT INTO event_wait (tenant_id, name, run_id, node) VALUES ($1, 'stray', $2, 'paid')`,
		`INSERT INTO bridge_task (tenant_id, run_id, node, generation, attempt, queue, handler, input, idempotency_key, timeout_ms)
		 VALUES ($1, $2, 'flaky', 0, 9, 'q', 'h', 'null', 'k', 0)`,
	} {
		if _, err := b.pool.Exec(b.ctx, q, b.tenant.ID, run); err != nil {
			t.Fatal(err)
		}
	}
}

// ownedRows counts the runs' rows in every run-owned table, in their own
// run rows and in River's jobs.
func (b testBundle) ownedRows(t *testing.T, ids []uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	count := func(table, q string, args ...any) {
		var n int
		if err := b.pool.QueryRow(b.ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	count("run", `SELECT count(*) FROM run WHERE tenant_id = $1 AND id = ANY($2)`, b.tenant.ID, ids)
	for _, r := range store.RunOwned {
		count(r.Table, fmt.Sprintf(`SELECT count(*) FROM %s t, %s WHERE t.tenant_id = $1 AND (%s)`, r.Table, store.RunIDs, r.Where), b.tenant.ID, ids)
	}
	count("river_job", `SELECT count(*) FROM river_job WHERE args->>'run_id' = ANY($1)`, uuidStrings(ids))
	return out
}

// runningJobs counts the runs' River jobs still running: the prune leaves
// those to River's job cleaner, and River completes a finished job's row a
// moment after its worker returned.
func (b testBundle) runningJobs(t *testing.T, ids []uuid.UUID) int {
	t.Helper()
	var n int
	err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM river_job WHERE state = 'running' AND args->>'run_id' = ANY($1)`, uuidStrings(ids)).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func uuidStrings(ids []uuid.UUID) []string {
	strs := make([]string, len(ids))
	for i, id := range ids {
		strs[i] = id.String()
	}
	return strs
}

func (b testBundle) eventExists(t *testing.T, id uuid.UUID) bool {
	t.Helper()
	var one int
	err := b.pool.QueryRow(b.ctx, `SELECT 1 FROM event WHERE tenant_id = $1 AND id = $2`, b.tenant.ID, id).Scan(&one)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	return err == nil
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// notRunOwned lists the tables that name a run (or an approval) without
// belonging to it. A table added to the schema with a run_id or
// approval_id column, or a foreign key to run or approval, belongs either
// in store.RunOwned or here. A schedule_action belongs to its schedule: it
// keeps the status its run ended with after the run is pruned (and the
// schedule keeps only its newest actions); the prune waits for the
// schedule to settle an action before its run goes. A flow_start is a
// start a throttle or rate limit counts until its period is over, whether
// or not its run is still kept.
var notRunOwned = []string{"run", "schedule_action", "flow_start"}

// A run a schedule started goes once the schedule has settled its action,
// never before: until then the action would lose the run's status (and a
// failed run its pause_on_failure). The action stays, with the status.
func TestPruneWaitsForTheScheduleToSettle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.TenantSetRetention(b.ctx, b.tenant.ID, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	b.newSchedule(t, "nightly", "tick", time.Hour, schedule.OverlapSkip)
	a, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "nightly", "")
	if err != nil || a.RunID == nil {
		t.Fatalf("trigger = %+v, %v", a, err)
	}
	b.finish(t, *a.RunID, engine.RunSucceeded)
	b.poll(t, func() bool { return b.runningJobs(t, []uuid.UUID{*a.RunID}) == 0 })
	b.shift(t, 4*time.Second)

	pruner := prune.New(b.pool, prune.Options{Pace: -1, Logger: slog.New(slog.DiscardHandler)})
	if st, err := fullPass(t, b, pruner); err != nil || st.Runs != 0 {
		t.Fatalf("pass before the schedule settled: %+v %v", st, err)
	}
	if _, err := b.coord.Runs.Schedules.Once(b.ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := fullPass(t, b, pruner); err != nil || st.Runs != 1 {
		t.Fatalf("pass after the schedule settled: %+v %v", st, err)
	}
	actions, err := b.store.ScheduleActionsRecent(b.ctx, b.tenant.ID, "nightly", 10)
	if err != nil || len(actions) != 1 || actions[0].State != store.ActionDone || actions[0].Status != string(engine.RunSucceeded) {
		t.Errorf("the schedule's actions after the prune: %+v, %v", actions, err)
	}
}

func TestPruneCoversEveryRunTable(t *testing.T) {
	t.Parallel()
	rows, err := testdb.Pool(t).Query(context.Background(), `
SELECT c.table_name::text FROM information_schema.columns c
JOIN information_schema.tables t USING (table_schema, table_name)
WHERE c.table_schema = current_schema() AND c.column_name IN ('run_id', 'approval_id') AND t.table_type = 'BASE TABLE'
UNION
SELECT conrelid::regclass::text FROM pg_constraint
WHERE contype = 'f' AND confrelid IN ('run'::regclass, 'approval'::regclass)`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		owned := slices.ContainsFunc(store.RunOwned, func(r store.RunRows) bool { return r.Table == table })
		if !owned && !slices.Contains(notRunOwned, table) {
			t.Errorf("table %s names runs: add it to store.RunOwned (its rows go with their run) or to notRunOwned", table)
		}
	}
}

// fullPass is a prune pass that ran: the prune's advisory lock is one per
// database, and another test's pruner (on its own schema of the same
// database) may hold it, making a pass skip.
func fullPass(t *testing.T, b testBundle, pruner *prune.Pruner) (prune.Stats, error) {
	t.Helper()
	var st prune.Stats
	var err error
	testwait.Eventually(t, 30*time.Second, "a prune pass that is not skipped", func() bool {
		st, err = pruner.Pass(b.ctx)
		return err != nil || !st.Skipped
	})
	return st, err
}
