package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// Ductor's lookups of its River jobs by their args can use their btree
// indexes (River's GIN indexes on args are gone): each repeats its index's
// predicate, so the planner can prove it.
func TestStepJobLookupsUseTheirIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := testdb.Tx(t)
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	for name, q := range store.StepJobLookups {
		rows, err := tx.Query(ctx, "EXPLAIN "+q.SQL, q.Args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, q.Index) {
			t.Errorf("%s does not use %s:\n%s", name, q.Index, p)
		}
	}
}

// The retention prune deletes a pruned run's step jobs that no worker
// holds, but not an unfinished step batch named by it: the batch carries
// another run's step too.
func TestPruneKeepsAnUnfinishedBatchOfAnotherRunsSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := testdb.Tx(t)
	batch := `{"tenant_id": "t", "run_id": "r", "node": "b", "more": [{"tenant_id": "t", "run_id": "other", "node": "c"}]}`
	if _, err := tx.Exec(ctx, `INSERT INTO river_job (kind, args, queue, state, max_attempts, finalized_at) VALUES
		('ductor.step', '{"tenant_id": "t", "run_id": "r", "node": "a"}', 'q', 'available', 1, NULL),
		('ductor.step', $1, 'q', 'available', 1, NULL),
		('ductor.step', $1, 'q', 'completed', 1, now())`, batch); err != nil {
		t.Fatal(err)
	}
	q := store.StepJobLookups["pruneRiverJobs"]
	if _, err := tx.Exec(ctx, q.SQL, []string{"r"}, "t"); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := tx.Query(ctx, `SELECT state::text || ' ' || (args ? 'more')::text FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if len(left) != 1 || left[0] != "available true" {
		t.Fatalf("left %v, want only the unfinished batch", left)
	}
}
