package runs

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Batches hold back while tick jobs wait for a worker, so a bulk
// operation never adds to the engine's backlog; once the backlog is
// gone they go on.
func TestBatchesWaitForTheTickBacklog(t *testing.T) {
	t.Parallel()
	c, _, pool := serviceOn(t, false)
	ctx := context.Background()
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	b, err := c.Batches.Create(ctx, store.Batch{TenantID: tenant.ID, ID: uuid.New(), Action: store.BatchCancel, Actor: "key:t", RunIDs: []uuid.UUID{uuid.New()}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := make([]river.InsertManyParams, batchBacklog)
	for i := range jobs {
		jobs[i] = river.InsertManyParams{Args: shell.TickArgs{TenantID: tenant.ID, RunID: uuid.New()}}
	}
	inserter, err := river.NewClient(riverpgxv5.New(pool), shell.InsertConfig(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inserter.InsertMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if worked, err := c.Batches.Once(ctx); err != nil || worked {
		t.Fatalf("with %d ticks waiting a batch worked (%v, %v)", batchBacklog, worked, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM river_job WHERE queue = 'coordinator'`); err != nil {
		t.Fatal(err)
	}
	if worked, err := c.Batches.Once(ctx); err != nil || !worked {
		t.Fatalf("without a backlog the batch did not go on (%v, %v)", worked, err)
	}
	got, _ := s.BatchGet(ctx, tenant.ID, b.ID)
	if !got.Finished() || got.Failed != 1 {
		t.Errorf("batch %+v, want it finished with its one unknown run failed", got)
	}
}
