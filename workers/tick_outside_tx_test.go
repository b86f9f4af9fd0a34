package workers_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/workers"
)

// A tick decides with no transaction open, whether it is a tick job or
// the result group's tick of the runs it finds free: while the engine
// evaluates a run's expressions, no connection sits idle in a transaction
// that has read the run (and holds its lock). The check runs in the fault
// hook just before the engine decides.
func TestTickDecidesOutsideATransaction(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"job", "group"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			var looks, idle atomic.Int32
			var probe atomic.Pointer[pgxpool.Pool] // set once the bundle is built
			b := setupWith(t, func(c *workers.Config) {
				c.NoInlineTicks = path != "group" // without, every result is ticked by the run's tick job
				c.Testing.Fault = func(point string) error {
					if point != shell.FaultBeforeDecide {
						return nil
					}
					pool := probe.Load()
					if pool == nil {
						return nil
					}
					var n int32
					err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
						WHERE datname = current_database() AND state = 'idle in transaction'
						  AND position('RunTickRead' IN query) > 0`).Scan(&n)
					if err != nil {
						return err
					}
					looks.Add(1)
					idle.Add(n)
					return nil
				}
			})
			probe.Store(b.pool)
			b.publish(t, chain("decides-outside", noop("a"), noop("b"), noop("c")))
			id := b.start(t, "decides-outside", nil)
			if run := b.waitTerminal(t, id); run.Status != engine.RunSucceeded {
				t.Fatalf("run: %s", run.Status)
			}
			if looks.Load() < 3 {
				t.Fatalf("%d decisions looked at, want one for each step's result at least", looks.Load())
			}
			if n := idle.Load(); n > 0 {
				t.Errorf("a connection was idle in a transaction that had read the run in %d of %d decisions", n, looks.Load())
			}
		})
	}
}

// A tick job reads its run before it locks it, so a signal can reach the
// run between the read and the lock. When the tick ends the run (here by
// continuing it as new), it decides again on that signal rather than
// leave it on a run that drains nothing more: the signal, buffered since
// no step waits for it yet, moves to the successor and completes it.
func TestSignalDuringAnEndingTickReachesTheSuccessor(t *testing.T) {
	t.Parallel()
	var fault atomic.Pointer[func(string) error] // armed once the run waits
	b := setupWith(t, func(c *workers.Config) {
		c.NoInlineTicks = true // the switch is decided by the run's tick job
		c.Testing.Fault = func(point string) error {
			if f := fault.Load(); f != nil {
				return (*f)(point)
			}
			return nil
		}
	})
	b.publishYAML(t, `
key: listens-twice
steps:
  - {ref: first, type: signal, with: {name: first}}
  - {ref: second, type: signal, with: {name: go}}
edges: [{from: first, to: second}]
`)
	id := b.start(t, "listens-twice", nil)
	b.poll(t, func() bool { r, _ := b.store.RunGet(b.ctx, b.tenant.ID, id); return r.Status == engine.RunWaiting })
	var sent atomic.Bool
	signalled := make(chan error, 1)
	signalOnce := func(point string) error {
		if point == shell.FaultBeforeDecide && sent.CompareAndSwap(false, true) {
			_, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, id, engine.Signal{RequestID: "s-go", Name: "go"})
			signalled <- err
		}
		return nil
	}
	fault.Store(&signalOnce)
	succ, err := b.coord.Runs.ContinueAsNew(b.ctx, b.tenant.ID, id, "can", nil)
	if err != nil {
		t.Fatal(err)
	}
	if old := b.waitTerminal(t, id); old.Reason != string(engine.ReasonContinuedAsNew) {
		t.Fatalf("run: %s %s, want continued as new", old.Status, old.Reason)
	}
	if err := <-signalled; err != nil {
		t.Fatalf("signal sent while the switch was decided: %v", err)
	}
	next := uuid.MustParse(succ)
	if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, next, engine.Signal{RequestID: "s-first", Name: "first"}); err != nil {
		t.Fatal(err)
	}
	if run := b.waitTerminal(t, next); run.Status != engine.RunSucceeded {
		t.Fatalf("successor %s", run.Status)
	}
}
