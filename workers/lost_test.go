package workers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// A worker that takes an attempt and dies (no result, its River job stuck
// in running) is noticed when the attempt's lease runs out — the step's
// timeout plus the rescue window, not River's hour — and the step is
// retried on another worker.
func TestLostWorkerIsRetriedAfterItsLease(t *testing.T) {
	t.Parallel()
	retriedAfterDeath(t, func(b testBundle, id uuid.UUID, jobID int64) {
		if _, err := b.pool.Exec(b.ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, jobID); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.store.AttemptStart(b.ctx, b.tenant.ID, id, "work", 0, 1, 300*time.Millisecond+200*time.Millisecond); err != nil || !ok {
			t.Fatalf("take attempt: %v %v", ok, err)
		}
	})
}

// A worker that dies after River handed it the job but before it recorded
// the attempt's start leaves no lease to run out: the sweep notices the
// job running for longer than the step's timeout plus the rescue window
// (or discarded by River, as when the worker failed before the start) and
// the step is retried on another worker.
func TestWorkerLostBeforeItsStartIsRetried(t *testing.T) {
	t.Parallel()
	for name, fate := range map[string]string{
		"running":   `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`,
		"discarded": `UPDATE river_job SET state = 'discarded', attempt = 1, attempted_at = now(), finalized_at = now() WHERE id = $1`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			retriedAfterDeath(t, func(b testBundle, _ uuid.UUID, jobID int64) {
				if _, err := b.pool.Exec(b.ctx, fate, jobID); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// retriedAfterDeath starts a one-step run with no step workers, lets die
// leave its step job as a dead worker would, then starts a healthy worker:
// the step must be retried within seconds, attempt 1 lost and attempt 2
// successful.
func retriedAfterDeath(t *testing.T, die func(b testBundle, runID uuid.UUID, jobID int64)) {
	t.Helper()
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: false, // no step workers yet
		config: func(c *workers.Config) { c.RescueWindow = 200 * time.Millisecond }})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: doomed
steps:
  - {ref: work, type: task, with: {handler: builtin.noop}, timeout: 300ms}
`)
	id := b.start(t, "doomed", nil)

	var jobID int64
	b.poll(t, func() bool {
		return b.pool.QueryRow(b.ctx, `SELECT id FROM river_job WHERE kind = 'ductor.step' AND args->>'run_id' = $1`, id.String()).Scan(&jobID) == nil
	})
	die(b, id, jobID)
	taken := time.Now()

	startWith(t, pool, roles{steps: true}) // a healthy worker joins
	run := b.waitTerminal(t, id)
	if run.Status != engine.RunSucceeded {
		t.Fatalf("run %s", run.Status)
	}
	if waited := time.Since(taken); waited > 10*time.Second {
		t.Errorf("the lost attempt was retried after %s", waited)
	}
	attempts, _ := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
	if len(attempts) != 2 || attempts[0].Error == nil || attempts[0].Error.Code != "worker_lost" || attempts[1].Error != nil {
		t.Fatalf("attempts = %+v, want worker_lost then success", attempts)
	}
}

func TestHTTPStepOnPostgres(t *testing.T) {
	t.Parallel()
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("Idempotency-Key")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true, "path": "` + r.URL.Path + `"}`))
	}))
	t.Cleanup(srv.Close)
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	b.coord = startWith(t, pool, roles{steps: true, http: steps.HTTPOptions{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: call
steps:
  - {ref: get, type: http, with: {url_expr: 'input.base + "/orders/7"'}}
  - {ref: check, type: condition, with: {expr: 'steps.get.output.body.ok && steps.get.output.status == 200.0'}}
edges:
  - {from: get, to: check}
`)
	id := b.start(t, "call", map[string]any{"base": srv.URL})
	run := b.waitTerminal(t, id)
	nodes, _ := b.store.RunNodesByName(b.ctx, b.tenant.ID, id, []string{"check"})
	if run.Status != engine.RunSucceeded || len(nodes) != 1 || nodes[0].Outcome != "true" {
		t.Fatalf("run %s, check %+v", run.Status, nodes)
	}
	if !strings.HasPrefix(gotKey, id.String()+":get") {
		t.Errorf("Idempotency-Key %q, want %s:get", gotKey, id)
	}
}
