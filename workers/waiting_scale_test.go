package workers_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// 1,000 runs wait on 1,000 event names; each event finds its one run
// through the (tenant, name) index of waiting nodes, never by looking at
// the other runs, and all 1,000 runs are woken and finish.
func TestThousandRunsWokenByThousandEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 runs")
	}
	t.Parallel()
	b := setup(t)
	const n = 1000
	ids := make([]uuid.UUID, n)
	for i := range n {
		b.publishYAML(t, fmt.Sprintf("key: wait-%d\nsteps:\n  - { ref: e, type: event, with: { name: evt-%d } }\n", i, i))
		ids[i] = b.start(t, fmt.Sprintf("wait-%d", i), nil)
	}
	for _, id := range ids {
		b.waitRunStatus(t, id, engine.RunWaiting)
	}
	if _, err := b.pool.Exec(b.ctx, "ANALYZE event_wait"); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := b.pool.Query(b.ctx, "EXPLAIN SELECT DISTINCT run_id FROM event_wait WHERE tenant_id = $1 AND name = $2 ORDER BY run_id", b.tenant.ID, "evt-7")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		_ = rows.Scan(&line)
		plan = append(plan, line)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "Index") || strings.Contains(text, "Seq Scan") {
		t.Fatalf("matching an event scans the waiting nodes:\n%s", text)
	}
	for i := range n {
		name := fmt.Sprintf("evt-%d", i)
		runs, err := b.store.EventWaitingRuns(b.ctx, b.tenant.ID, name)
		if err != nil || len(runs) != 1 || runs[0] != ids[i] {
			t.Fatalf("event %s finds runs %v (%v), want just %s", name, runs, err, ids[i])
		}
		b.event(t, name, map[string]any{"i": i})
	}
	for i, id := range ids {
		if out := b.finish(t, id, engine.RunSucceeded)["e"].Output; out.(map[string]any)["i"] != int64(i) {
			t.Fatalf("run %d took %v", i, out)
		}
	}
	var left int
	_ = b.pool.QueryRow(b.ctx, "SELECT count(*) FROM event_wait").Scan(&left)
	if left != 0 {
		t.Errorf("%d waiting-node rows left after every node consumed its event", left)
	}
}

// startStoppable runs a coordinator process (River client and sweep) on
// pool and returns how to stop it, as a process exit would.
func startStoppable(t *testing.T, pool *pgxpool.Pool) (*workers.Runtime, func()) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	coord, err := workers.New(workers.Config{Pool: pool, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	client, err := workers.NewClient(pool, workers.Options{
		Coordinator: true, Steps: true, Logger: log, Runtime: coord,
		Executor: steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	swept := make(chan struct{})
	go func() { defer close(swept); coord.Sweep(ctx) }()
	var stopped bool
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-swept
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = client.Stop(stopCtx)
	}
	t.Cleanup(stop)
	return coord, stop
}

// Runs waiting on a timer, a signal, an event and an approval survive the
// process stopping: a new process on the same schema completes them.
func TestRestartWhileRunsWait(t *testing.T) {
	t.Parallel()
	pool := testdb.Schema(t)
	s := store.New(pool)
	b := testBundle{ctx: context.Background(), pool: pool, store: s, tenant: testdb.Tenant(t, s, nil)}
	var stop func()
	b.coord, stop = startStoppable(t, pool)
	b.publishYAML(t, `
key: all-waits
steps:
  - { ref: timer, type: wait, with: { duration: 1h } }
  - { ref: sig, type: signal, with: { name: go } }
  - { ref: ev, type: event, with: { name: paid } }
  - { ref: ok, type: approval, with: { approvers: [ "ann@example.com" ] } }
`)
	id := b.start(t, "all-waits", nil)
	for _, ref := range []string{"timer", "sig", "ev", "ok"} {
		b.waitNode(t, id, ref, engine.NodeWaiting)
	}
	stop()

	b.coord, _ = startStoppable(t, pool)
	if err := b.signal(t, id, "r1", "go", "ready"); err != nil {
		t.Fatal(err)
	}
	b.event(t, "paid", map[string]any{"ok": true})
	as, err := s.ApprovalsOfRun(b.ctx, b.tenant.ID, id)
	if err != nil || len(as) != 1 {
		t.Fatalf("approvals %v %v", as, err)
	}
	if err := b.decide(as[0].ID, "ann@example.com", true); err != nil {
		t.Fatal(err)
	}
	b.shift(t, time.Hour+time.Second)
	nodes := b.finish(t, id, engine.RunSucceeded)
	if nodes["sig"].Output != "ready" || nodes["ok"].Outcome != "approved" {
		t.Errorf("sig %v, ok %s", nodes["sig"].Output, nodes["ok"].Outcome)
	}
}
