package checker

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

const rescueChain = `
key: rescue-chain
steps:
  - {ref: a, type: task, timeout: 5s, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
  - {ref: b, type: task, timeout: 5s, with: {handler: checker.step, input_expr: '{"ms": 10}'}}
edges: [{from: a, to: b}]
`

// A worker process killed with SIGKILL while it holds River jobs (tick
// jobs in the middle of their ticks, step jobs in the middle of their
// steps) leaves them running in River, which would rescue them only after
// an hour, and tick jobs never. Ductor's sweep, in another process, finds
// them by its own rules and the database's clock: lost attempts when their
// lease runs out (their jobs discarded then), dead ticks after the rescue
// window (their runs ticked again). Every run ends, within seconds; no
// River job is left running; and nothing ran twice because of the
// rescue: a step whose result was recorded before the kill is not run
// again, and only a step killed mid-run is, once.
func TestKilledProcessJobsAreRescuedByDuctorsDetection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, url := testdb.SchemaURL(t)
	if err := Prepare(ctx, pool); err != nil {
		t.Fatal(err)
	}
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, rescueChain)
	coord, err := workers.New(workers.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	// The doomed worker sends results through tick jobs and holds every
	// tick it takes; half the runs' first steps are quick (their results
	// recorded, their ticks held), half still running at the kill.
	doomed := StartWorker(t, url, WorkerOptions{RescueWindow: time.Second, NoInlineTicks: true, HoldTicks: true})
	var ids []uuid.UUID
	for i := range 8 {
		ms := 50
		if i%2 == 1 {
			ms = 4000
		}
		run, _, err := coord.Runs.Start(ctx, runs.Trigger{TenantID: tenant.ID, Definition: "rescue-chain", Input: map[string]any{"ms": ms}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	testwait.Eventually(t, 30*time.Second, "held ticks and running steps", func() bool {
		var ticks, steps int
		err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE kind = 'ductor.tick'), count(*) FILTER (WHERE kind = 'ductor.step')
			FROM river_job WHERE state = 'running'`).Scan(&ticks, &steps)
		return err == nil && ticks >= 4 && steps >= 4
	})
	doomed.Kill()
	killed := time.Now()
	StartWorker(t, url, WorkerOptions{RescueWindow: time.Second})

	for _, id := range ids {
		var run store.Run
		testwait.Eventually(t, 60*time.Second, "run "+id.String()+" to end", func() bool {
			run, err = s.RunGet(ctx, tenant.ID, id)
			return err == nil && run.Status.Terminal()
		})
		if run.Status != engine.RunSucceeded {
			t.Errorf("run %s ended %s:\n%s", id, run.Status, Dump(ctx, pool, id))
		}
	}
	took := time.Since(killed)
	testwait.Eventually(t, 30*time.Second, "no River job left running", func() bool {
		left, err := Jobs(ctx, pool)
		return err == nil && len(left) == 0
	})
	found, err := Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	// Executions per step: one, or two for a step whose first attempt was
	// lost with the killed process (it ran there, and once more).
	again, err := lines(ctx, pool, `SELECT format('run %s: node %s executed %s times with %s attempts lost', e.run_id, e.node,
		       count(*), (SELECT count(*) FROM run_attempt a WHERE a.run_id = e.run_id AND a.node = e.node AND a.error->>'code' = 'worker_lost'))
		FROM checker_execution e GROUP BY e.run_id, e.node
		HAVING count(*) > 1 + (SELECT count(*) FROM run_attempt a WHERE a.run_id = e.run_id AND a.node = e.node AND a.error->>'code' = 'worker_lost')`)
	if err != nil {
		t.Fatal(err)
	}
	found = append(found, again...)
	quick, err := lines(ctx, pool, `SELECT format('run %s: its quick step, recorded before the kill, was retried', a.run_id)
		FROM run_attempt a JOIN run r ON r.id = a.run_id
		WHERE a.node = 'a' AND a.error->>'code' = 'worker_lost' AND r.input->>'ms' = '50'`)
	if err != nil {
		t.Fatal(err)
	}
	found = append(found, quick...)
	if len(found) > 0 {
		t.Fatalf("%d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
	var rescuedTicks, lostSteps int
	if err := pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE kind = 'ductor.tick' AND errors::text LIKE '%rescued%'),
		count(*) FILTER (WHERE kind = 'ductor.step' AND errors::text LIKE '%reported lost%')
		FROM river_job`).Scan(&rescuedTicks, &lostSteps); err != nil {
		t.Fatal(err)
	}
	if rescuedTicks == 0 || lostSteps == 0 {
		t.Errorf("%d tick jobs rescued and %d step jobs discarded as lost, want some of each", rescuedTicks, lostSteps)
	}
	if took > 20*time.Second {
		t.Errorf("the killed process's runs took %s to end", took)
	}
	t.Logf("killed worker %d: %d held tick jobs rescued, %d running step jobs discarded as lost; every run ended %s after the kill; nothing ran twice but the steps killed mid-run",
		doomed.Pid(), rescuedTicks, lostSteps, took.Round(time.Millisecond))
}
