package workers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/workers"
)

// arrivals records when each http step's request came, by run.
type arrivals struct {
	mu  sync.Mutex
	got map[string][]time.Time
	n   int
}

func (a *arrivals) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// A bulk cancel of runs whose http steps are running or queued closes
// every attempt of every run (none is left open for ever), and no http
// step sends its request after its run was cancelled.
func TestBulkCancelClosesAttemptsAndStopsHTTPSteps(t *testing.T) {
	t.Parallel()
	seen := &arrivals{got: map[string][]time.Time{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		run, _, _ := strings.Cut(r.Header.Get("Idempotency-Key"), ":")
		seen.mu.Lock()
		seen.got[run] = append(seen.got[run], time.Now())
		seen.n++
		seen.mu.Unlock()
		<-r.Context().Done() // answers nothing until its step is cancelled
	}))
	t.Cleanup(srv.Close)
	pool := testdb.Schema(t)
	b := testBundle{ctx: context.Background(), pool: pool, store: store.New(pool)}
	const maxWorkers = 4
	b.coord = startWith(t, pool, roles{steps: true, maxWorkers: maxWorkers, http: steps.HTTPOptions{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		config: func(c *workers.Config) { c.StepBatchMax = 1 }})
	b.tenant = testdb.Tenant(t, b.store, nil)
	b.publishYAML(t, `
key: calls
steps:
  - {ref: a, type: http, with: {url_expr: 'input.base + "/a"'}}
  - {ref: b, type: http, with: {url_expr: 'input.base + "/b"'}}
`)
	var runs []uuid.UUID
	for range 8 {
		runs = append(runs, b.start(t, "calls", map[string]any{"base": srv.URL}))
	}
	b.poll(t, func() bool { return seen.count() >= maxWorkers })
	batch, err := b.coord.Runs.Batches.Create(b.ctx, store.Batch{TenantID: b.tenant.ID, ID: uuid.New(), Action: store.BatchCancel, Actor: "key:ops", RunIDs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if done := b.waitBatch(t, batch.ID); done.Done != len(runs) {
		t.Fatalf("batch %+v, want all %d runs cancelled", done, len(runs))
	}
	for _, id := range runs {
		r := b.waitTerminal(t, id)
		if r.Status != engine.RunCancelled || r.FinishedAt == nil {
			t.Fatalf("run %s: %s", id, r.Status)
		}
		b.poll(t, func() bool {
			attempts, err := b.store.RunAttempts(b.ctx, b.tenant.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range attempts {
				if a.FinishedAt.IsZero() {
					return false
				}
			}
			return true
		})
		// The run's finished_at is its cancelling transaction's start; the
		// slack covers that transaction's own length.
		seen.mu.Lock()
		for _, at := range seen.got[id.String()] {
			if at.After(r.FinishedAt.Add(200 * time.Millisecond)) {
				t.Errorf("run %s: an http step sent its request %s after the run was cancelled", id, at.Sub(*r.FinishedAt))
			}
		}
		seen.mu.Unlock()
	}
}
