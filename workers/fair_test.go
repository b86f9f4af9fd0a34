package workers

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	c, pool := coordinatorOn(t, false)
	s := store.New(pool)
	a, b := testdb.Tenant(t, s, nil), testdb.Tenant(t, s, nil)
	insert := func(tenant uuid.UUID, n int) {
		jobs := make([]river.InsertManyParams, n)
		for i := range jobs {
			jobs[i] = river.InsertManyParams{Args: StepArgs{TenantID: tenant, RunID: uuid.New(), Node: "n"}, InsertOpts: stepOpts(QueueStepsStandard)}
		}
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return c.insertSteps(ctx, tx, jobs, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	insert(a.ID, 300)
	insert(b.ID, 3)

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
	if len(positions) != 3 || positions[2] > 6 {
		t.Fatalf("tenant B's steps sit at fetch positions %v of %d: want all three among the first few", positions, i)
	}
}

// Each tier's step queue has workers of its own, in proportion to the
// tier's weight.
func TestTierQueuesHaveWorkersByWeight(t *testing.T) {
	t.Parallel()
	q := queues(Options{Steps: true, MaxWorkers: 10})
	want := map[string]int{QueueStepsInteractive: 80, QueueStepsStandard: 40, QueueStepsBulk: 20}
	for queue, n := range want {
		if got := q[queue].MaxWorkers; got != n {
			t.Errorf("%s has %d workers, want %d", queue, got, n)
		}
	}
}
