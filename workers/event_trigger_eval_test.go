package workers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// An event trigger's filter is evaluated before the event's transaction
// begins: while an expensive filter runs, no connection sits idle in a
// transaction that has looked up the triggers, and the filter stops at
// its cost limit (or, on a loaded machine, its time limit), recorded on the trigger with the field that failed.
func TestEventTriggerFilterRunsOutsideTheTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	maps := make([]string, 20)
	for i := range maps {
		maps[i] = "event.items.map(x, x * 2).size() > 0"
	}
	testdb.Definition(t, b.store, b.tenant.ID, `key: on-heavy
steps:
  - {ref: a, type: task, with: {handler: builtin.noop}}
triggers:
  - event: heavy
    filter_expr: '`+strings.Join(maps, " && ")+`'
`)
	items := make([]any, 60_000)
	for i := range items {
		items[i] = int64(i)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := b.coord.Runs.Events.Publish(b.ctx, store.Event{TenantID: b.tenant.ID, Name: "heavy", Data: map[string]any{"items": items}})
		done <- err
	}()
	idle, polls := 0, 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if idle > 0 {
				t.Errorf("a connection was idle in a transaction that had read the triggers in %d of %d looks", idle, polls)
			}
			trs, err := b.store.EventTriggersOf(b.ctx, b.tenant.ID, "on-heavy")
			if err != nil || len(trs) != 1 {
				t.Fatalf("triggers = %+v, %v", trs, err)
			}
			if e := trs[0].LastError; !strings.Contains(e, "filter_expr") || !strings.Contains(e, "limit of") {
				t.Errorf("last error = %q, want the filter_expr's cost or time limit", e)
			}
			return
		default:
		}
		var n int
		err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE state = 'idle in transaction' AND position('EventTriggersByName' IN query) > 0`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		polls++
		idle += n
		time.Sleep(time.Millisecond) // poll interval
	}
}
