package checker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// StepHandler is the task handler the workloads run: it records its
// execution in checker_execution before anything else (and, for a step
// whose input names its concurrency pool as flow_key, when it ended) (in a statement of
// its own, so the row survives whatever becomes of the attempt; retried
// while the database is unavailable, under an id of its own so that a
// retry of an insert whose commit was not acknowledged records nothing
// twice), waits
// input.ms milliseconds, then fails retryably while the attempt is at
// most input.fail_attempts, and succeeds otherwise. The rows are how a
// test counts executions: at-least-once allows more than one per step
// only when an attempt was lost or failed (its handler's own database
// unreachable past the step's timeout, say).
//
// While the attempt is at most input.outage_attempts, the handler, once
// recorded, waits for its database to go away and come back, then records
// again, as it does when an outage swallowed the acknowledgement of its
// commit: it keeps trying until the database is back or the attempt's
// time is up.
const StepHandler = "checker.step"

// executionTable is created in a test's schema before any worker starts.
const executionTable = `CREATE TABLE IF NOT EXISTS checker_execution (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    execution       uuid        NOT NULL UNIQUE,
    run_id          uuid        NOT NULL,
    node            text        NOT NULL,
    attempt         integer     NOT NULL,
    idempotency_key text        NOT NULL,
    pid             integer     NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at     timestamptz,
    flow_key        text
)`

// stepHandler records into pool's checker_execution.
func stepHandler(pool *pgxpool.Pool) steps.Handler {
	return func(ctx context.Context, call steps.Call) (any, error) {
		in, _ := call.Input.(map[string]any)
		execution := uuid.New()
		if err := record(ctx, pool, call, execution, in); err != nil {
			// Nothing is executed that is not recorded.
			return nil, steps.Fail("checker_unrecorded", "could not record the execution: "+err.Error(), true)
		}
		if call.Attempt <= int(number(in["outage_attempts"])) {
			if err := recordAcrossOutage(ctx, pool, call, execution, in); err != nil {
				return nil, steps.Fail("checker_unrecorded", "could not hear back from the database: "+err.Error(), true)
			}
		}
		if key, _ := in["flow_key"].(string); key != "" {
			defer finished(pool, execution)
		}
		if ms := number(in["ms"]); ms > 0 {
			t := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		if fails := number(in["fail_attempts"]); call.Attempt <= int(fails) {
			return nil, steps.Fail("checker_planned", fmt.Sprintf("attempt %d fails as planned", call.Attempt), true)
		}
		return map[string]any{"attempt": call.Attempt, "pid": os.Getpid()}, nil
	}
}

// record inserts the execution's row, trying again while the database is
// unavailable, as an idempotent handler would. An input's flow_key names
// the concurrency pool the step is in, for the flow checks.
func record(ctx context.Context, pool *pgxpool.Pool, call steps.Call, execution uuid.UUID, in map[string]any) error {
	key, _ := in["flow_key"].(string)
	for {
		_, err := pool.Exec(ctx, `INSERT INTO checker_execution (execution, run_id, node, attempt, idempotency_key, pid, flow_key)
			VALUES ($1, $2, $3, $4, $5, $6, nullif($7, '')) ON CONFLICT (execution) DO NOTHING`,
			execution, call.RunID, call.Node, call.Attempt, call.IdempotencyKey, os.Getpid(), key)
		if err == nil || !store.Unavailable(err) {
			return err
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// finished records when a pooled step's execution ended, before its
// result is handed over (and so before its pool's slot frees).
func finished(pool *pgxpool.Pool, execution uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = pool.Exec(ctx, `UPDATE checker_execution SET finished_at = clock_timestamp() WHERE execution = $1`, execution)
}

// recordAcrossOutage waits until the database has gone away and come
// back (its postmaster started anew), then records the execution again
// (the same row: nothing twice), until ctx ends. Waiting for the restart,
// not for the first failed statement, keeps a connection that a crash
// has not reached yet from answering early.
func recordAcrossOutage(ctx context.Context, pool *pgxpool.Pool, call steps.Call, execution uuid.UUID, in map[string]any) error {
	var began time.Time
	if err := pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&began); err != nil && !store.Unavailable(err) {
		return err
	}
	for {
		var now time.Time
		err := pool.QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&now)
		switch {
		case err == nil && !began.IsZero() && !now.Equal(began):
			return record(ctx, pool, call, execution, in)
		case err != nil && !store.Unavailable(err):
			return err
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// number is a JSON number of the value model (an int64 or a float64) as
// a float64; anything else is 0.
func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}
