package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// History is stored as one batch per run and tick, and reads back as the
// transitions it was given: in seq order, paged by seq, through the
// run_history view too, each run's apart, and a batch written twice (a
// re-executed tick) is kept once.
func TestRunHistoryBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	tenant := testdb.Tenant(t, b.store, nil)
	one, two := tickRun(t, b.store, tenant.ID), tickRun(t, b.store, tenant.ID)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var want []engine.Transition
	seq := int64(0)
	tick := func(runs ...store.Run) {
		var w store.RunWrites
		for _, r := range runs {
			var ts []engine.Transition
			for i := range 3 {
				tr := engine.Transition{At: at, Node: fmt.Sprint("n", i), From: "ready", To: "running", Attempt: i, Generation: 1, Detail: "d"}
				if r.ID == one.ID {
					seq++
					tr.Seq = seq
					want = append(want, tr)
				} else {
					tr.Seq = int64(100 + i)
				}
				ts = append(ts, tr)
			}
			if err := w.Decision(r, &engine.Decision{Transitions: ts}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.store.RunWritesFlush(ctx, &w); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	tick(one, two)
	tick(one)
	tick(one)
	seq = 3 // the second tick again: the same batch
	at = at.Add(-2 * time.Second)
	tick(one)
	want = want[:9]

	got, err := b.store.RunHistory(ctx, tenant.ID, one.ID, 0, 100)
	if err != nil || !reflect.DeepEqual(utc(got), want) {
		t.Fatalf("history = %+v, %v\nwant %+v", got, err, want)
	}
	var paged []engine.Transition
	for after := int64(0); ; {
		page, err := b.store.RunHistory(ctx, tenant.ID, one.ID, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1].Seq
	}
	if !reflect.DeepEqual(utc(paged), want) {
		t.Fatalf("paged by 2 = %+v\nwant %+v", paged, want)
	}
	var rows, other int
	err = b.store.DB().QueryRow(ctx, `SELECT count(*) FILTER (WHERE run_id = $1), count(*) FILTER (WHERE run_id = $2)
		FROM run_history WHERE seq > 0`, one.ID, two.ID).Scan(&rows, &other)
	if err != nil || rows != 9 || other != 3 {
		t.Fatalf("view rows: %d and %d, %v; want 9 and 3", rows, other, err)
	}
}

func utc(ts []engine.Transition) []engine.Transition {
	for i := range ts {
		ts[i].At = ts[i].At.UTC()
	}
	return ts
}
