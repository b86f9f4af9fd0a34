package db_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// A run's insert is metered by a row trigger (migration 0056): its start
// on the day it was created, a final status it was inserted with on the
// day it finished, and its input's bytes on the day it was written, each
// day once; a repeated idempotency key, which inserts nothing, meters
// nothing.
func TestRunInsertIsMeteredOnEachOfItsDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t)
	tenant := testdb.Tenant(t, store.New(pool), nil).ID
	insert := func(status, created, finished, input, key string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO run (tenant_id, id, definition_key, definition_version, manifest_hash, status,
			root_run_id, state, input, created_at, finished_at, idempotency_key)
			VALUES ($1, gen_random_uuid(), 'chain', 1, 'h', $2, gen_random_uuid(), '{}',
			        NULLIF($3, '')::jsonb, $4::timestamptz, NULLIF($5, '')::timestamptz, NULLIF($6, ''))
			ON CONFLICT DO NOTHING`, tenant, status, input, created, finished, key); err != nil {
			t.Fatal(err)
		}
	}
	insert("running", "now", "", `{"n": 1}`, "k1")                              // today: started, 8 bytes
	insert("running", "now", "", `{"n": 1}`, "k1")                              // the same key: nothing
	insert("succeeded", "2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z", "", "") // started day 1, succeeded day 2
	insert("failed", "2026-01-03T10:00:00Z", "", `[1, 2]`, "")                  // started and failed day 3, 6 bytes today

	rows, err := pool.Query(ctx, `SELECT CASE WHEN day = ductor_utc_day(now()) THEN 'today' ELSE day::text END,
		       sum(runs_started), sum(runs_succeeded), sum(runs_failed), sum(stored_bytes), count(*)
		FROM usage_delta WHERE tenant_id = $1 GROUP BY 1 ORDER BY 1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][5]int64{}
	for rows.Next() {
		var day string
		var v [5]int64
		if err := rows.Scan(&day, &v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
			t.Fatal(err)
		}
		got[day] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// started, succeeded, failed, bytes, delta rows
	want := map[string][5]int64{
		"today":      {1, 0, 0, 8 + 6, 2},
		"2026-01-01": {1, 0, 0, 0, 1},
		"2026-01-02": {0, 1, 0, 0, 1},
		"2026-01-03": {1, 0, 1, 0, 1},
	}
	if len(got) != len(want) {
		t.Fatalf("usage deltas by day: got %v, want %v", got, want)
	}
	for day, w := range want {
		if got[day] != w {
			t.Errorf("%s: got started, succeeded, failed, bytes, rows %v, want %v", day, got[day], w)
		}
	}
}
