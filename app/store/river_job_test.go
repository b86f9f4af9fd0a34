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
