package workers_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/workers"
)

// A step's result whose write fails on a statement timeout (every
// transaction of the first write: the group's and the fallback's) is
// offered again and recorded, not dropped: the step runs once, and its
// run does not wait for the attempt's lease to run out.
func TestResultWriteRetriedAfterStatementTimeout(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	var timedOut atomic.Int32
	b := setupWith(t, func(c *workers.Config) {
		c.RescueWindow = 200 * time.Millisecond
		c.Testing.FaultTx = func(ctx context.Context, tx pgx.Tx, point string) error {
			if point != shell.FaultResultWrite || timedOut.Load() >= 2 {
				return nil
			}
			_, err := tx.Exec(ctx, "SET LOCAL statement_timeout = '20ms'; SELECT pg_sleep(5)")
			if pgErr, ok := err.(*pgconn.PgError); ok && pgErr.Code == "57014" {
				timedOut.Add(1)
			}
			return err
		}
	}, map[string]steps.Handler{"test.count": func(context.Context, steps.Call) (any, error) {
		ran.Add(1)
		return map[string]any{"ok": true}, nil
	}})
	st := step("count", definition.TypeTask, map[string]any{"handler": "test.count"})
	st.TimeoutMS = 30000 // a lease far longer than the retried write takes on a loaded machine
	b.publish(t, chain("counted", st))
	id := b.start(t, "counted", nil)
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded || timedOut.Load() != 2 {
		t.Fatalf("run %s after %d statement timeouts, want succeeded after 2", run.Status, timedOut.Load())
	}
	attempts, err := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 1 || len(attempts) != 1 {
		t.Errorf("the step ran %d times in %d attempts, want once", ran.Load(), len(attempts))
	}
}
