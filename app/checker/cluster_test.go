package checker

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/db"
	"github.com/ductor/ductor/workers"
)

// ownCluster is a Postgres cluster of a test's own, for faults that a
// shared cluster cannot take (a crash, a skewed clock), with Ductor
// migrated, a tenant and a driver: a coordinator that only inserts jobs,
// serving the API as well.
type ownCluster struct {
	ctx     context.Context
	opts    pgcluster.Options
	cluster *pgcluster.Cluster
	pool    *pgxpool.Pool
	store   *store.Store
	tenant  uuid.UUID
	coord   *workers.Runtime
	api     *httptest.Server
	key     string
}

// startCluster starts the cluster opts asks for (in a directory of its
// own) and the driver, and removes them when the test ends.
func startCluster(t *testing.T, opts pgcluster.Options) *ownCluster {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ductor-checker-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the postgres user runs the server when we are root
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	opts.Dir, opts.Database = filepath.Join(dir, "pg"), "ductor"
	cluster, err := pgcluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Destroy(context.Background()) })
	c := &ownCluster{ctx: ctx, opts: opts, cluster: cluster}
	c.open(t)
	return c
}

func (c *ownCluster) open(t *testing.T) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(c.cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 20
	if c.pool, err = pgxpool.NewWithConfig(c.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.pool.Close)
	if _, err := db.Migrate(c.ctx, c.pool, nil); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(c.ctx, c.pool); err != nil {
		t.Fatal(err)
	}
	c.store = store.New(c.pool)
	c.tenant = testdb.Tenant(t, c.store, nil).ID
	log := slog.New(slog.DiscardHandler)
	if c.coord, err = workers.New(workers.Config{Pool: c.pool, Logger: log}); err != nil {
		t.Fatal(err)
	}
	listen, stop := context.WithCancel(c.ctx)
	listened := make(chan struct{})
	go func() { defer close(listened); c.coord.Runs.Tasks.Listen(listen) }()
	c.api = httptest.NewServer(server.New(server.Deps{Pool: c.pool, Store: c.store, Logger: log, API: true, Runs: c.coord.Runs}))
	_, c.key = testdb.APIKey(t, c.store, store.Tenant{ID: c.tenant}, nil)
	t.Cleanup(func() {
		c.api.Close()
		stop()
		<-listened
		c.coord.Close()
	})
}

// start triggers a run.
func (c *ownCluster) start(t *testing.T, key string, input any) uuid.UUID {
	t.Helper()
	run, _, err := c.coord.Runs.Start(c.ctx, runs.Trigger{TenantID: c.tenant, Definition: key, Input: input}, nil)
	if err != nil {
		t.Fatalf("start %s: %v", key, err)
	}
	return run.ID
}

// waitRun polls the run until done holds or timeout passes.
func (c *ownCluster) waitRun(t *testing.T, id uuid.UUID, timeout time.Duration, done func(store.Run) bool) store.Run {
	t.Helper()
	var run store.Run
	var err error
	if !testwait.Until(context.Background(), timeout, func() bool {
		run, err = c.store.RunGet(c.ctx, c.tenant, id)
		return err == nil && done(run)
	}) {
		t.Fatalf("run %s: %s after %s (%v)", id, run.Status, timeout, err)
	}
	return run
}

func ended(r store.Run) bool { return r.Status.Terminal() }

// waiting holds once the run's node waits.
func (c *ownCluster) waiting(id uuid.UUID, node string) func(store.Run) bool {
	return func(store.Run) bool {
		nodes, err := c.store.RunNodesByName(c.ctx, c.tenant, id, []string{node})
		return err == nil && len(nodes) == 1 && nodes[0].State == engine.NodeWaiting
	}
}
