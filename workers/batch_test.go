package workers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// waitBatch polls the batch until it is completed.
func (b testBundle) waitBatch(t *testing.T, id uuid.UUID) store.Batch {
	t.Helper()
	var got store.Batch
	if !testwait.Until(b.ctx, 60*time.Second, func() bool {
		var err error
		got, err = b.store.BatchGet(b.ctx, b.tenant.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.Finished()
	}) {
		t.Fatalf("batch %s: %d of %d done after 60s", id, got.Done+got.Failed, got.Total)
	}
	return got
}

// A bulk cancel by filter covers the matching runs created before it,
// more than one chunk of them, records who asked and why on each run,
// leaves the runs created after it alone, and is audited from start to
// end.
func TestBatchCancelsByFilterInChunks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.publish(t, chain("parked", step("wait", definition.TypeSignal, map[string]any{"name": "never"})))
	n := runs.BatchChunk*2 + 7
	var runs []uuid.UUID
	for range n {
		runs = append(runs, b.start(t, "parked", nil))
	}
	created, err := b.coord.Runs.Batches.Create(b.ctx, store.Batch{
		TenantID: b.tenant.ID, ID: uuid.New(), Action: store.BatchCancel, Reason: "maintenance", Actor: "key:ops",
		Filter: &store.RunFilter{Definition: "parked"},
	})
	if err != nil || created.Total != n {
		t.Fatalf("create batch: %+v %v, want a total of %d", created, err, n)
	}
	later := b.start(t, "parked", nil)
	done := b.waitBatch(t, created.ID)
	if done.Done != n || done.Failed != 0 || done.Total != n {
		t.Fatalf("batch ended %d done, %d failed of %d; want all %d", done.Done, done.Failed, done.Total, n)
	}
	for _, id := range runs {
		r := b.waitTerminal(t, id)
		if r.Status != engine.RunCancelled || r.Reason != "maintenance" || r.CancelledBy != "key:ops" {
			t.Fatalf("run %s: %s, reason %q, by %q", id, r.Status, r.Reason, r.CancelledBy)
		}
	}
	if r, _ := b.store.RunGet(b.ctx, b.tenant.ID, later); r.Status.Terminal() {
		t.Errorf("a run created after the batch was %s", r.Status)
	}
	audit, _ := b.store.AuditList(b.ctx, b.tenant.ID, 10)
	if len(audit) != 2 || audit[0].Action != store.AuditBatchFinish || audit[1].Action != store.AuditBatchCreate || audit[0].Actor != "key:ops" {
		t.Errorf("audit %+v, want the batch's start and end by key:ops", audit)
	}
}

// A bulk retry by ids retries each failed run from the step that failed,
// and records as failures the runs it cannot retry (one that succeeded,
// an id that names no run) with why.
func TestBatchRetriesFailedRunsByID(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := map[string]int{}
	flaky := func(_ context.Context, c steps.Call) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[c.RunID]++
		if calls[c.RunID] == 1 {
			return nil, steps.Permanent(errors.New("first time fails"))
		}
		return "ok", nil
	}
	b := setup(t, map[string]steps.Handler{"flaky": flaky})
	b.publish(t, chain("flaky", step("a", definition.TypeTransform, map[string]any{"expr": "1"}), step("b", definition.TypeTask, map[string]any{"handler": "flaky"})))
	b.publish(t, chain("fine", step("a", definition.TypeTransform, map[string]any{"expr": "1"})))
	var failed []uuid.UUID
	for range 3 {
		id := b.start(t, "flaky", nil)
		if r := b.waitTerminal(t, id); r.Status != engine.RunFailed {
			t.Fatalf("run %s is %s, want failed", id, r.Status)
		}
		failed = append(failed, id)
	}
	fine := b.start(t, "fine", nil)
	b.waitTerminal(t, fine)
	ghost := uuid.New()
	created, err := b.coord.Runs.Batches.Create(b.ctx, store.Batch{
		TenantID: b.tenant.ID, ID: uuid.New(), Action: store.BatchRetry, Actor: "user:ops@example.com",
		RunIDs: append(append([]uuid.UUID{}, failed...), fine, ghost, failed[0]),
	})
	if err != nil || created.Total != 5 {
		t.Fatalf("create batch: %+v %v, want 5 distinct runs", created, err)
	}
	done := b.waitBatch(t, created.ID)
	if done.Done != 3 || done.Failed != 2 || len(done.Errors) != 2 {
		t.Fatalf("batch ended %d done, %d failed (%+v); want 3 and 2", done.Done, done.Failed, done.Errors)
	}
	why := map[uuid.UUID]string{}
	for _, e := range done.Errors {
		why[e.RunID] = e.Message
	}
	if why[ghost] != "no such run" || why[fine] == "" {
		t.Errorf("failures %+v: want the unknown id and the succeeded run named", why)
	}
	for _, id := range failed {
		if r := b.waitRun(t, id, "succeed after the retry", func(r store.Run) bool { return r.Status == engine.RunSucceeded }); r.State.Error != nil {
			t.Errorf("run %s succeeded with error %+v", id, r.State.Error)
		}
	}
}

// Tenants take turns at bulk operations: a tenant's one-run cancel,
// created behind another tenant's large batches, finishes before any of
// them does.
func TestBatchesTakeTurnsAcrossTenants(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := testdb.Tenant(t, b.store, nil)
	var big []uuid.UUID
	for range 3 {
		ids := make([]uuid.UUID, 20*runs.BatchChunk)
		for i := range ids {
			ids[i] = uuid.New()
		}
		created, err := b.coord.Runs.Batches.Create(b.ctx, store.Batch{TenantID: other.ID, ID: uuid.New(), Action: store.BatchCancel, Actor: "key:a", RunIDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		big = append(big, created.ID)
	}
	b.publish(t, chain("parked", step("wait", definition.TypeSignal, map[string]any{"name": "never"})))
	run := b.start(t, "parked", nil)
	small, err := b.coord.Runs.Batches.Create(b.ctx, store.Batch{TenantID: b.tenant.ID, ID: uuid.New(), Action: store.BatchCancel, Actor: "key:b", RunIDs: []uuid.UUID{run}})
	if err != nil {
		t.Fatal(err)
	}
	if done := b.waitBatch(t, small.ID); done.Done != 1 {
		t.Fatalf("the one-run cancel ended %+v", done)
	}
	for _, id := range big {
		got, err := b.store.BatchGet(b.ctx, other.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Finished() {
			t.Errorf("tenant A's batch %s of %d runs finished before tenant B's one-run cancel", id, got.Total)
		}
	}
}
