package checker

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

// localChain is a chain of five steps of StepHandler, each taking
// input.ms, retried through lost attempts: a step killed with its process
// comes back as a new attempt.
const localChain = `
key: local-chain
steps:
  - {ref: a, type: task, timeout: 3s, retry: {max_attempts: 20, initial_interval: 10ms}, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
  - {ref: b, type: task, timeout: 3s, retry: {max_attempts: 20, initial_interval: 10ms}, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
  - {ref: c, type: task, timeout: 3s, retry: {max_attempts: 20, initial_interval: 10ms}, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
  - {ref: d, type: task, timeout: 3s, retry: {max_attempts: 20, initial_interval: 10ms}, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
  - {ref: e, type: task, timeout: 3s, retry: {max_attempts: 20, initial_interval: 10ms}, with: {handler: checker.step, input_expr: '{"ms": input.ms}'}}
edges: [{from: a, to: b}, {from: b, to: c}, {from: c, to: d}, {from: d, to: e}]
`

// localNemesis runs the local steps workload: two worker processes with
// local steps on; runs of localChain started steadily for the nemesis's
// time while, every two seconds, one of the workers is killed with
// SIGKILL (mid-step: every step takes tens to hundreds of milliseconds)
// and a new one started in its place. opts are the workers'. It returns
// the runs started and the pids killed, once the nemesis is over and a
// last worker, a healthy one, is running.
func localNemesis(t *testing.T, ctx context.Context, pool *pgxpool.Pool, url string, opts WorkerOptions, kills int) ([]uuid.UUID, []int) {
	t.Helper()
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, localChain)
	coord, err := workers.New(workers.Config{Pool: pool, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	procs := []*Process{StartWorker(t, url, opts), StartWorker(t, url, opts)}
	var (
		mu  sync.Mutex
		ids []uuid.UUID
	)
	stop := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(started)
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			run, _, err := coord.Runs.Start(ctx, runs.Trigger{TenantID: tenant.ID, Definition: "local-chain",
				Input: map[string]any{"ms": 20 + (i*37)%300}}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids = append(ids, run.ID)
			mu.Unlock()
		}
	}()
	var killed []int
	every := time.NewTicker(2 * time.Second)
	defer every.Stop()
	for i := range kills {
		<-every.C // the nemesis's rhythm, not a wait for anything
		victim := procs[i%2]
		testwait.Eventually(t, 30*time.Second, "a step running in the process about to be killed", func() bool {
			var n int
			err := pool.QueryRow(ctx, `SELECT count(*) FROM checker_execution WHERE pid = $1 AND started_at > now() - interval '1 second'`,
				victim.Pid()).Scan(&n)
			return err == nil && n > 0
		})
		victim.Kill()
		killed = append(killed, victim.Pid())
		procs[i%2] = StartWorker(t, url, opts)
	}
	close(stop)
	<-started
	mu.Lock()
	defer mu.Unlock()
	return ids, killed
}

// Local steps keep every guarantee when their processes die mid-step: with
// two processes running the steps their ticks dispatch in-process and a
// nemesis killing one every two seconds, every run ends successfully, no
// update is lost and no node is applied twice (Check), and a step runs
// more than once only when an attempt of it was lost with a killed
// process, once more per attempt lost. The steps did run locally (more
// attempts started than step jobs carried), and some local attempts were
// lost and re-dispatched (more attempts lost than step jobs found lost).
func TestLocalStepsCheckerWithProcessesKilledMidStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, url := testdb.SchemaURL(t)
	if err := Prepare(ctx, pool); err != nil {
		t.Fatal(err)
	}
	ids, killed := localNemesis(t, ctx, pool, url, WorkerOptions{LocalSteps: true, RescueWindow: time.Second}, 6)
	s := store.New(pool)
	var tenant uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT tenant_id FROM run LIMIT 1`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		var run store.Run
		var err error
		testwait.Eventually(t, 90*time.Second, "run "+id.String()+" to end", func() bool {
			run, err = s.RunGet(ctx, tenant, id)
			return err == nil && run.Status.Terminal()
		})
		if run.Status != "succeeded" {
			t.Errorf("run %s ended %s:\n%s", id, run.Status, Dump(ctx, pool, id))
		}
	}
	testwait.Eventually(t, 30*time.Second, "no River job left running", func() bool {
		left, err := Jobs(ctx, pool)
		return err == nil && len(left) == 0
	})
	found, err := Check(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	again, err := executedMoreThanLost(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	found = append(found, again...)
	if len(found) > 0 {
		t.Fatalf("%d violations:\n%s", len(found), strings.Join(found, "\n"))
	}
	paths, err := localPaths(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if paths.started <= paths.carried {
		t.Errorf("%d attempts started and %d steps carried by step jobs: no step ran locally", paths.started, paths.carried)
	}
	if paths.lost <= paths.jobsLost {
		t.Errorf("%d attempts lost and %d step jobs reported lost: no local attempt was lost with its process", paths.lost, paths.jobsLost)
	}
	t.Logf("%d runs through %d kills (pids %v): %d attempts started, %d carried by step jobs, %d lost (%d of them in step jobs), every run succeeded",
		len(ids), len(killed), killed, paths.started, paths.carried, paths.lost, paths.jobsLost)
}

// With the fault UnleasedLocalSteps the local attempts a killed process
// leaves have no lease, so nothing reports them lost and their runs never
// go on: the checker must find them stalled.
func TestLocalStepsCheckerFindsUnleasedSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, url := testdb.SchemaURL(t)
	if err := Prepare(ctx, pool); err != nil {
		t.Fatal(err)
	}
	localNemesis(t, ctx, pool, url, WorkerOptions{LocalSteps: true, UnleasedLocalSteps: true, RescueWindow: time.Second}, 2)
	var found []string
	testwait.Eventually(t, 60*time.Second, "the checker to find runs stalled behind unleased local attempts", func() bool {
		var err error
		found, err = Stalled(ctx, pool, 10*time.Second)
		return err == nil && len(found) > 0
	})
	t.Logf("found, as it must: %d stalled, such as %s", len(found), found[0])
}

// executedMoreThanLost lists steps that ran more often than once plus
// once per attempt of theirs lost with a process.
func executedMoreThanLost(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	return lines(ctx, pool, `SELECT format('run %s: node %s executed %s times with %s attempts lost', e.run_id, e.node,
		       count(*), (SELECT count(*) FROM run_attempt a WHERE a.run_id = e.run_id AND a.node = e.node AND a.error->>'code' = 'worker_lost'))
		FROM checker_execution e GROUP BY e.run_id, e.node
		HAVING count(*) > 1 + (SELECT count(*) FROM run_attempt a WHERE a.run_id = e.run_id AND a.node = e.node AND a.error->>'code' = 'worker_lost')`)
}

type pathCounts struct{ started, carried, lost, jobsLost int64 }

// localPaths counts the attempts started against the steps step jobs
// carried (each job its step and a batch's further ones), and the
// attempts lost against the steps of step jobs reported lost.
func localPaths(ctx context.Context, pool *pgxpool.Pool) (pathCounts, error) {
	var p pathCounts
	err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM run_attempt WHERE started_at IS NOT NULL),
		(SELECT coalesce(sum(1 + coalesce(jsonb_array_length(args->'more'), 0)), 0)::bigint FROM river_job WHERE kind = 'ductor.step'),
		(SELECT count(*) FROM run_attempt WHERE error->>'code' = 'worker_lost'),
		(SELECT coalesce(sum(1 + coalesce(jsonb_array_length(args->'more'), 0)), 0)::bigint FROM river_job
		 WHERE kind = 'ductor.step' AND errors::text LIKE '%reported lost%')`).Scan(&p.started, &p.carried, &p.lost, &p.jobsLost)
	if err != nil {
		return p, fmt.Errorf("count paths: %w", err)
	}
	return p, nil
}
