package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/db"
	"github.com/ductor/ductor/workers"
)

// Postgres crashes (pg_ctl stop -m immediate) while runs are being
// triggered and worked (many of them in a 300 ms step), then comes back. Triggers fail fast during the
// outage; the same process recovers without a restart, and every trigger
// that was answered without error ends, succeeded: none is lost.
func TestPostgresCrashUnderLoadLosesNoAcknowledgedRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ductor-crash-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the postgres user runs the server when we are root
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	opts := pgcluster.Options{Dir: filepath.Join(dir, "pg"), Database: "ductor"} // durable: not Fast
	cluster, err := pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Destroy(context.Background()) })
	cfg, err := pgxpool.ParseConfig(cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := db.Migrate(ctx, pool, nil); err != nil {
		t.Fatal(err)
	}
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	testdb.Definition(t, s, tenant.ID, `
key: three
steps:
  - { ref: a, type: task, with: { handler: builtin.noop }, timeout: 2s }
  - { ref: b, type: task, with: { handler: builtin.sleep, input_expr: '{"ms": 300}' }, timeout: 2s }
  - { ref: c, type: task, with: { handler: builtin.noop }, timeout: 2s }
edges:
  - { from: a, to: b }
  - { from: b, to: c }
`)

	log := slog.New(slog.DiscardHandler)
	exec := steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{})
	coord, err := workers.New(workers.Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles, RescueWindow: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	client, err := workers.NewClient(pool, workers.Options{Coordinator: true, Steps: true, Runtime: coord, Logger: log,
		Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); coord.Sweep(sweepCtx) }()
	t.Cleanup(func() {
		stopSweep()
		<-swept
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stop)
		coord.Close()
	})

	// The load: triggers one after another, each acknowledged or failed.
	var mu sync.Mutex
	var acked []uuid.UUID
	var failed int
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked), failed
	}
	stopLoad := make(chan struct{})
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		for {
			select {
			case <-stopLoad:
				return
			default:
			}
			callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			run, _, err := coord.Runs.Start(callCtx, runs.Trigger{TenantID: tenant.ID, Definition: "three"}, nil)
			cancel()
			mu.Lock()
			if err == nil {
				acked = append(acked, run.ID)
			} else {
				failed++
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-loaded:
		default:
			close(stopLoad)
			<-loaded
		}
	})

	testwait.Eventually(t, 60*time.Second, "50 acknowledged triggers", func() bool { n, _ := counts(); return n >= 50 })
	if err := cluster.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	crashed, _ := counts()
	testwait.Eventually(t, 30*time.Second, "a trigger to fail while Postgres is down", func() bool { _, f := counts(); return f > 0 })
	if _, err := pgcluster.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 60*time.Second, "50 more acknowledged triggers after the restart", func() bool {
		n, _ := counts()
		return n >= crashed+50
	})
	close(stopLoad)
	<-loaded

	mu.Lock()
	ids := append([]uuid.UUID(nil), acked...)
	mu.Unlock()
	for _, id := range ids {
		var run store.Run
		if !testwait.Until(context.Background(), 90*time.Second, func() bool {
			run, err = s.RunGet(ctx, tenant.ID, id)
			return err == nil && run.Status.Terminal()
		}) {
			t.Fatalf("run %s has not ended 90 s after the restart:\n%s", id, dumpRun(ctx, pool, id))
		}
		if run.Status != engine.RunSucceeded {
			t.Errorf("acknowledged run %s ended %s", id, run.Status)
		}
	}
	var lost int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM run_attempt WHERE error->>'code' = 'worker_lost'`).Scan(&lost); err != nil {
		t.Fatal(err)
	}
	_, f := counts()
	t.Logf("%d triggers acknowledged (%d before the crash), %d refused during the outage, %d attempts retried as lost; all acknowledged runs succeeded",
		len(ids), crashed, f, lost)
}

// dumpRun describes a run's rows, for a failure message.
func dumpRun(ctx context.Context, pool *pgxpool.Pool, id uuid.UUID) string {
	var b strings.Builder
	queries := []string{
		`SELECT status, record_version, tick_requested, updated_at FROM run WHERE id = $1`,
		`SELECT node, state, updated_at FROM run_node WHERE run_id = $1 ORDER BY node`,
		`SELECT node, generation, attempt, started_at, finished_at, lease_until, error FROM run_attempt WHERE run_id = $1 ORDER BY node, attempt`,
		`SELECT id, kind, consumed_at FROM run_input WHERE run_id = $1 ORDER BY id`,
		`SELECT id, kind, state, attempt, attempted_at, metadata FROM river_job WHERE args->>'run_id' = $1::text ORDER BY id`,
	}
	for _, q := range queries {
		fmt.Fprintf(&b, "%s\n", q)
		rows, err := pool.Query(ctx, q, id)
		if err != nil {
			fmt.Fprintf(&b, "  error: %v\n", err)
			continue
		}
		for rows.Next() {
			vals, _ := rows.Values()
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}
