package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

func onePool(t *testing.T, url string, params map[string]string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// A connection whose server refuses its writes as read-only (a primary
// demoted under it) is unavailable, and the pool drops it on release
// rather than hand it out again.
func TestPoolDropsAConnectionThatMetAReadOnlyServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, url := testdb.SchemaURL(t)
	pool := onePool(t, url, nil)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var before int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE read_only_probe (x int)`)
	if err == nil || !store.Unavailable(err) {
		t.Fatalf("a write on a read-only connection: %v, want an error Unavailable holds for", err)
	}
	conn.Release()
	var after int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Error("the pool handed out again the connection that met a read-only server")
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE read_only_probe (x int)`); err != nil {
		t.Errorf("a write on the next connection: %v", err)
	}
}

// A new connection is only to a server that accepts writes: one whose
// sessions are read-only (a standby) is refused, as unavailable.
func TestPoolRefusesAReadOnlyServer(t *testing.T) {
	t.Parallel()
	_, url := testdb.SchemaURL(t)
	pool := onePool(t, url, map[string]string{"default_transaction_read_only": "on"})
	err := pool.Ping(context.Background())
	if err == nil || !store.Unavailable(err) {
		t.Fatalf("connecting to a read-only server: %v, want an error Unavailable holds for", err)
	}
}
