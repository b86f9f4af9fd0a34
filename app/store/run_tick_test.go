package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// The interleaving behind lost updates, made to happen: a tick's load
// starts (its snapshot is taken) and pauses before it locks; meanwhile
// another tick, holding the run, moves a node on and commits; then the
// load locks the run. The load must return the node as that commit left
// it, beside the run row it locked. The old single statement returned the
// newest run row (so its record_version passed the guard) beside the node
// from its snapshot: the tick would have written the stale node back.
func TestRunTickLoadReadsAfterItsLock(t *testing.T) {
	t.Parallel()
	for name, sameStatement := range map[string]bool{"lock then read": false, "same statement": true} {
		t.Run(name, func(t *testing.T) {
			var opts []store.Option
			if sameStatement {
				opts = append(opts, store.SameStatementTickLoad())
			}
			run, node, version := staleWindow(t, opts...)
			if sameStatement {
				if node.State != engine.NodeRunning || version != 2 {
					t.Fatalf("the single statement read %s at version %d; the window did not open", node.State, version)
				}
				return // it read the node from before the commit: the bug this test guards against
			}
			if node.State != engine.NodeSucceeded || version != 2 {
				t.Fatalf("run %s loaded at version %d with node %s, want version 2 with the committed node (succeeded)", run, version, node.State)
			}
		})
	}
}

// staleWindow opens the window: it returns what a load that paused between
// its snapshot and its lock read of a node another transaction moved from
// running to succeeded, committing during the pause.
func staleWindow(t *testing.T, opts ...store.Option) (uuid.UUID, *engine.Node, int64) {
	t.Helper()
	ctx := context.Background()
	pool := testdb.Schema(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	run := tickRun(t, s, tenant.ID)
	bumpNode(t, pool, run, engine.NodeRunning, nil) // version 1

	writer, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Rollback(ctx)
	bumpNode(t, pool, run, engine.NodeSucceeded, writer) // version 2, uncommitted

	loader, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer loader.Rollback(ctx)
	var pid int
	if err := loader.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := loader.Exec(ctx, `SET LOCAL ductor.fault_pause_ms = '1000'`); err != nil {
		t.Fatal(err)
	}
	type loaded struct {
		l   map[store.RunKey]store.TickLoad
		err error
	}
	done := make(chan loaded, 1)
	key := store.RunKey{TenantID: tenant.ID, ID: run.ID}
	go func() {
		l, err := store.New(loader, opts...).RunTickLoad(ctx, []store.RunKey{key}, nil)
		done <- loaded{l, err}
	}()
	waitPaused(t, pool, pid)
	if err := writer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	l, ok := got.l[key]
	if !ok || len(l.Nodes) != 1 {
		t.Fatalf("the load did not lock the run once the writer had committed: %+v", got.l)
	}
	return run.ID, l.Nodes[0], l.Run.RecordVersion
}

// waitPaused polls until backend pid sleeps in ductor_fault_pause.
func waitPaused(t *testing.T, pool *pgxpool.Pool, pid int) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, "the load pauses", func() bool {
		var sleeping bool
		err := pool.QueryRow(context.Background(),
			`SELECT coalesce(wait_event = 'PgSleep', false) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&sleeping)
		if err != nil {
			t.Fatal(err)
		}
		return sleeping
	})
}

func tickRun(t testing.TB, s *store.Store, tenantID uuid.UUID) store.Run {
	t.Helper()
	id := uuid.New()
	run, _, err := s.RunCreate(context.Background(), store.NewRun{
		TenantID: tenantID, ID: id, DefinitionKey: "d", DefinitionVersion: 1, ManifestHash: "h", RootRunID: id,
		State: engine.Run{ID: id.String(), Status: engine.RunRunning},
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// bumpNode writes node "a" in state st and moves the run's version on, as
// a tick holding the run does, in tx (committed at once when tx is nil).
func bumpNode(t *testing.T, pool *pgxpool.Pool, run store.Run, st engine.NodeState, tx pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	write := func(tx pgx.Tx) error {
		s := store.New(tx)
		if err := s.RunLock(ctx, run.TenantID, run.ID); err != nil {
			return err
		}
		cur, err := s.RunGet(ctx, run.TenantID, run.ID)
		if err != nil {
			return err
		}
		var w store.RunWrites
		if err := w.Nodes(store.RunKey{TenantID: run.TenantID, ID: run.ID}, []*engine.Node{{ID: "a", Ref: "a", State: st}}); err != nil {
			return err
		}
		if err := w.Update(cur, cur.State); err != nil {
			return err
		}
		return s.RunWritesFlush(ctx, &w)
	}
	var err error
	if tx == nil {
		err = pgx.BeginFunc(ctx, pool, write)
	} else {
		err = write(tx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRunTickLoad measures a group tick's load, lock then read in one
// round trip against the old single statement, for groups of 1 and 64
// runs of 10 nodes and 5 pending inputs each.
func BenchmarkRunTickLoad(b *testing.B) {
	for _, runs := range []int{1, 64} {
		for name, same := range map[string]bool{"lock-then-read": false, "same-statement": true} {
			b.Run(fmt.Sprintf("%s/%d", name, runs), func(b *testing.B) {
				var opts []store.Option
				if same {
					opts = append(opts, store.SameStatementTickLoad())
				}
				pool := testdb.Schema(b)
				keys := tickRuns(b, pool, runs)
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
						l, err := store.New(tx, opts...).RunTickLoad(ctx, keys, nil)
						if err == nil && len(l) != runs {
							err = fmt.Errorf("loaded %d runs of %d", len(l), runs)
						}
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// tickRuns makes runs of 10 nodes and 5 pending inputs.
func tickRuns(tb testing.TB, pool *pgxpool.Pool, n int) []store.RunKey {
	tb.Helper()
	ctx := context.Background()
	s := store.New(pool)
	tenant := testdb.Tenant(tb, s, nil)
	var keys []store.RunKey
	for range n {
		run := tickRun(tb, s, tenant.ID)
		var nodes []*engine.Node
		for i := range 10 {
			nodes = append(nodes, &engine.Node{ID: fmt.Sprint("n", i), Ref: fmt.Sprint("n", i), State: engine.NodeRunning})
		}
		if err := s.RunNodesUpsert(ctx, tenant.ID, run.ID, nodes); err != nil {
			tb.Fatal(err)
		}
		for i := range 5 {
			if _, err := s.RunInputAdd(ctx, tenant.ID, run.ID, engine.StepResult{Node: fmt.Sprint("n", i), Attempt: 1}); err != nil {
				tb.Fatal(err)
			}
		}
		keys = append(keys, store.RunKey{TenantID: tenant.ID, ID: run.ID})
	}
	return keys
}

// A load that names the record version its caller holds gets the run
// without its state and nodes while the run is at that version, and whole
// once any write has moved it on; under SameStatementTickLoad, always
// whole.
func TestRunTickLoadCachedAtItsVersion(t *testing.T) {
	ctx := context.Background()
	pool := testdb.Schema(t)
	s := store.New(pool)
	tenant := testdb.Tenant(t, s, nil)
	run := tickRun(t, s, tenant.ID)
	bumpNode(t, pool, run, engine.NodeRunning, nil) // version 1
	k := store.RunKey{TenantID: tenant.ID, ID: run.ID}
	load := func(version int64, opts ...store.Option) store.TickLoad {
		t.Helper()
		var l store.TickLoad
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			loads, err := store.New(tx, opts...).RunTickLoadCached(ctx, []store.RunKey{k}, nil, map[store.RunKey]int64{k: version})
			l = loads[k]
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := load(1); !l.Cached || l.Nodes != nil || l.Run.State.ID != "" || l.Run.RecordVersion != 1 {
		t.Fatalf("at the cached version: cached %v, %d nodes, state %+v, version %d", l.Cached, len(l.Nodes), l.Run.State, l.Run.RecordVersion)
	}
	bumpNode(t, pool, run, engine.NodeSucceeded, nil) // version 2, as another process's tick
	l := load(1)
	if l.Cached || len(l.Nodes) != 1 || l.Nodes[0].State != engine.NodeSucceeded || l.Run.State.ID != run.ID.String() || l.Run.RecordVersion != 2 {
		t.Fatalf("moved on: cached %v, nodes %+v, state %+v, version %d", l.Cached, l.Nodes, l.Run.State, l.Run.RecordVersion)
	}
	if l := load(2, store.SameStatementTickLoad()); l.Cached || len(l.Nodes) != 1 {
		t.Fatalf("same statement: cached %v, %d nodes", l.Cached, len(l.Nodes))
	}
}
