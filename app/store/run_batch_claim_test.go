package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Two processes working two batches of one tenant at once each send the
// tenant to the back of the round as they record their chunk: neither
// waits for the batch the other holds, so neither deadlocks the other.
func TestBatchTurnsOfTwoProcessesDoNotDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t)
	tenant := testdb.Tenant(t, store.New(pool), nil)
	for range 2 {
		_, err := store.New(pool).BatchCreate(ctx, store.Batch{
			TenantID: tenant.ID, ID: uuid.New(), Action: store.BatchCancel,
			RunIDs: []uuid.UUID{uuid.New(), uuid.New()}, Actor: "test", Total: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	claim := func() (pgx.Tx, store.Batch) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		b, ok, err := store.New(tx).BatchClaim(ctx)
		if err != nil || !ok {
			t.Fatalf("claim: %v, %v", ok, err)
		}
		return tx, b
	}
	tx1, b1 := claim()
	tx2, b2 := claim()
	if b1.ID == b2.ID {
		t.Fatal("both processes claimed one batch")
	}
	first := make(chan error, 1)
	go func() {
		err := store.New(tx1).BatchProgress(ctx, b1, store.BatchChunk{Index: 1})
		if err == nil {
			err = tx1.Commit(ctx)
		}
		first <- err
	}()
	err := store.New(tx2).BatchProgress(ctx, b2, store.BatchChunk{Index: 1})
	if err == nil {
		err = tx2.Commit(ctx)
	}
	if err != nil {
		t.Fatalf("second process: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first process: %v", err)
	}
}
