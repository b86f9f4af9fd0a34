// Package testdb gives tests a real Postgres: the cluster `make test`
// starts (TEST_DATABASE_URL), migrated once per test binary. Tests take a
// transaction rolled back when they end (Tx), or, when they must commit,
// listen for notifications or run River clients, a schema of their own that
// is dropped when they end (Schema).
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/db"
)

var (
	shared     *pgxpool.Pool
	sharedErr  error
	sharedOnce sync.Once
)

// URL returns TEST_DATABASE_URL or fails the test.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		tb.Fatal("TEST_DATABASE_URL is not set: run the tests with `make test`, or see the README for running one test")
	}
	return u
}

// Pool returns the shared pool on the migrated test database.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	url := URL(tb)
	sharedOnce.Do(func() {
		shared, sharedErr = open(context.Background(), url, "")
	})
	if sharedErr != nil {
		tb.Fatalf("test database: %v", sharedErr)
	}
	return shared
}

// Tx begins a transaction on the shared pool and rolls it back when the
// test ends, so tests share a database without seeing each other's rows.
func Tx(tb testing.TB) pgx.Tx {
	tb.Helper()
	ctx := context.Background()
	tx, err := Pool(tb).Begin(ctx)
	if err != nil {
		tb.Fatalf("begin test transaction: %v", err)
	}
	tb.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

// Schema creates a fresh schema holding every migration and returns a pool
// whose connections use it. The schema is dropped when the test ends.
func Schema(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, _ := SchemaURL(tb)
	return pool
}

// SchemaURL is Schema that also returns a connection URL selecting the
// schema, for code under test that opens its own connections.
func SchemaURL(tb testing.TB) (*pgxpool.Pool, string) {
	tb.Helper()
	ctx := context.Background()
	name := "test_" + randomHex(6)
	if _, err := Pool(tb).Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	pool, err := open(ctx, URL(tb), name)
	if err != nil {
		tb.Fatalf("schema %s: %v", name, err)
	}
	tb.Cleanup(func() {
		pool.Close()
		_, _ = Pool(tb).Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
	})
	return pool, withSearchPath(URL(tb), name)
}

func withSearchPath(raw, schema string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(ctx context.Context, url, schema string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse TEST_DATABASE_URL: %w", err)
	}
	cfg.MaxConns = 20
	if schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := db.Migrate(ctx, pool, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return pool, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SearchPathURL returns a URL selecting the schema pool's connections use,
// for opening a second, independent pool on the same schema.
func SearchPathURL(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	schema := pool.Config().ConnConfig.RuntimeParams["search_path"]
	if schema == "" {
		return URL(tb)
	}
	return withSearchPath(URL(tb), schema)
}
