package shell

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// This pins the River behaviour the fair queue relies on: an insert
// middleware may turn a scheduled job available, and River fetches by
// (priority, scheduled_at, id). A tenant's 300 queued steps must not hold
// back another tenant's first step, which fair tags put near the head.
func TestFairTagsInterleaveTenantsInRiverOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t, func(cfg *Config) { cfg.StepBatchMax = 1 }) // fetch positions are a job's, one step each
	s := store.New(pool)
	a, b := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)
	insertSteps(t, c, pool, a.ID, 300)
	insertSteps(t, c, pool, b.ID, 3)

	rows, err := pool.Query(ctx, `SELECT args->>'tenant_id', state FROM river_job
		WHERE queue = $1 ORDER BY priority, scheduled_at, id`, QueueStepsStandard)
	if err != nil {
		t.Fatal(err)
	}
	var positions []int
	i := 0
	for rows.Next() {
		var tenant, state string
		if err := rows.Scan(&tenant, &state); err != nil {
			t.Fatal(err)
		}
		if state != "available" {
			t.Fatalf("a fair-tagged job is %s: River no longer lets insert middleware make it available", state)
		}
		if tenant == b.ID.String() {
			positions = append(positions, i)
		}
		i++
	}
	if len(positions) != 2 || positions[1] > 6 {
		t.Fatalf("tenant B's steps sit at fetch positions %v of %d: want the two behind its first among the first few", positions, i)
	}
	// B's first step went ahead of A's backlog on the tier's sparse lane.
	var lane int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE queue = $1 AND state = 'available' AND args->>'tenant_id' = $2`,
		SparseLane(QueueStepsStandard), b.ID.String()).Scan(&lane)
	if err != nil || lane != 1 {
		t.Fatalf("tenant B has %d available steps on the sparse lane, want 1 (%v)", lane, err)
	}
}

// insertSteps dispatches n steps of new runs of the tenant, as a tick
// would, in one transaction.
func insertSteps(t *testing.T, c *Shell, pool *pgxpool.Pool, tenant uuid.UUID, n int) {
	t.Helper()
	ctx := context.Background()
	jobs := make([]river.InsertManyParams, n)
	for i := range jobs {
		jobs[i] = river.InsertManyParams{Args: StepArgs{TenantID: tenant, RunID: uuid.New(), Node: "n"}, InsertOpts: stepOpts(QueueStepsStandard)}
	}
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return c.Writer.insertSteps(ctx, tx, jobs, nil) }); err != nil {
		t.Fatal(err)
	}
}

// A tenant's step dispatched with nothing of the tenant queued while other
// tenants have a backlog is sparse (its start goes ahead of bulk work, see
// yieldGate); the rest of a batch, the steps of a tenant with a backlog,
// and steps put into an empty queue are not. The coordinator remembers
// which tenants are not sparse (busy), for their triggers.
func TestFairTagsMarkAnIdleTenantsFirstStepSparse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t, func(cfg *Config) { cfg.StepBatchMax = 1 }) // fetch positions are a job's, one step each
	s := store.New(pool)
	a, b, alone := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)

	insertSteps(t, c, pool, alone.ID, 1) // nothing to go ahead of
	if !c.deps.busy.busy(alone.ID) {
		t.Fatal("a tenant alone on an empty queue is treated as urgent")
	}
	insertSteps(t, c, pool, a.ID, 300) // the first goes ahead of alone's
	insertSteps(t, c, pool, b.ID, 1)   // B had nothing queued, A had
	if !c.deps.busy.busy(a.ID) || c.deps.busy.busy(b.ID) {
		t.Fatalf("busy: A %v (queued 300), B %v (queued 1 behind A's backlog)", c.deps.busy.busy(a.ID), c.deps.busy.busy(b.ID))
	}
	insertSteps(t, c, pool, b.ID, 1) // B's first is still queued
	insertSteps(t, c, pool, a.ID, 1)
	if !c.deps.busy.busy(b.ID) {
		t.Fatal("B is not known busy after a dispatch behind its own queued step")
	}

	rows, err := pool.Query(ctx, `SELECT args->>'tenant_id', coalesce((args->>'sparse')::bool, false), queue
		FROM river_job WHERE queue = ANY($1) ORDER BY id`, []string{QueueStepsStandard, SparseLane(QueueStepsStandard)})
	if err != nil {
		t.Fatal(err)
	}
	var sparse []string
	i := 0
	for rows.Next() {
		var tenant, queue string
		var isSparse bool
		if err := rows.Scan(&tenant, &isSparse, &queue); err != nil {
			t.Fatal(err)
		}
		if isSparse != (queue == SparseLane(QueueStepsStandard)) {
			t.Fatalf("job %d: sparse %v on queue %s", i, isSparse, queue)
		}
		if isSparse {
			who := "A"
			if tenant == b.ID.String() {
				who = "B"
			}
			sparse = append(sparse, fmt.Sprintf("%s at %d", who, i))
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"A at 1", "B at 301"}; i != 304 || !slices.Equal(sparse, want) {
		t.Fatalf("sparse steps: %v of %d, want %v of 304", sparse, i, want)
	}
}

// A step job River snoozed, retried or rescued has a scheduled_at of now,
// behind every fair tag: under a flood that never drains it would never
// be fetched. The sweep puts it back at the head of its queue.
func TestSweepPutsAStepJobThatLostItsTagBackAtTheHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, pool := shellOn(t, func(cfg *Config) { cfg.StepBatchMax = 1 }) // fetch positions are a job's, one step each
	s := store.New(pool)
	a, b := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)
	insertSteps(t, c, pool, a.ID, 300)
	insertSteps(t, c, pool, b.ID, 2) // the second queues on the tier's queue
	// What River does to the job when it snoozes it and later makes it
	// available again.
	var id int64
	err := pool.QueryRow(ctx, `UPDATE river_job SET scheduled_at = now()
		WHERE id = (SELECT max(id) FROM river_job WHERE queue = $1) RETURNING id`, QueueStepsStandard).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	position := func() int {
		t.Helper()
		var pos int
		err := pool.QueryRow(ctx, `SELECT n FROM (
			SELECT id, row_number() OVER (ORDER BY priority, scheduled_at, id) - 1 AS n
			FROM river_job WHERE queue = $1 AND state = 'available') q WHERE id = $2`, QueueStepsStandard, id).Scan(&pos)
		if err != nil {
			t.Fatal(err)
		}
		return pos
	}
	if pos := position(); pos != 300 {
		t.Fatalf("the untagged job is at fetch position %d, want last (300)", pos)
	}
	if _, err := c.Sweeper.SweepOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if pos := position(); pos > 1 {
		t.Fatalf("after the sweep the job is at fetch position %d, want the head", pos)
	}
	// Tagged jobs are left alone.
	var moved int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE queue = $1 AND scheduled_at > now() - interval '1 hour'`, QueueStepsStandard).Scan(&moved); err != nil || moved != 0 {
		t.Fatalf("%d jobs still untagged after the sweep (%v)", moved, err)
	}
}
