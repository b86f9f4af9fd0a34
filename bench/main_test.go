package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/db"
)

// server is the database every benchmark of this binary shares: a cluster
// started on first use, or BENCH_DATABASE_URL.
var server struct {
	once    sync.Once
	url     string
	err     error
	cluster *pgcluster.Cluster
	tmp     string
	// settings are the durability settings, read on the first schema.
	settings     string
	settingsOnce sync.Once
}

func TestMain(m *testing.M) {
	code := m.Run()
	printSummary(os.Stdout)
	if server.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := server.cluster.Destroy(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stopping the cluster:", err)
		}
		cancel()
		_ = os.RemoveAll(server.tmp)
	}
	os.Exit(code)
}

// databaseURL returns the shared database, starting the cluster once.
func databaseURL(b *testing.B) string {
	b.Helper()
	server.once.Do(func() {
		if u := os.Getenv("BENCH_DATABASE_URL"); u != "" {
			server.url = u
			return
		}
		server.url, server.err = startCluster()
	})
	if server.err != nil {
		b.Fatalf("benchmark database: %v", server.err)
	}
	return server.url
}

// startCluster starts a durable cluster in a temporary directory that the
// postgres user can traverse when this process is root.
func startCluster() (string, error) {
	tmp, err := os.MkdirTemp("", "ductor-bench-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	server.tmp = tmp
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(tmp, "pg"), Database: "bench"})
	if err != nil {
		return "", err
	}
	server.cluster = c
	return c.URL(), nil
}

// schema creates a fresh, migrated schema and returns a pool using it; the
// schema is dropped when the benchmark ends. params are run-time settings
// of the pool's sessions, name=value.
func schema(b *testing.B, params ...string) *pgxpool.Pool {
	b.Helper()
	ctx := context.Background()
	url := databaseURL(b)
	admin, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	name := "bench_" + randomHex(5)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		admin.Close()
		b.Fatalf("create schema: %v", err)
	}
	pool, err := openPool(ctx, url, name, params...)
	if err != nil {
		admin.Close()
		b.Fatal(err)
	}
	server.settingsOnce.Do(func() { server.settings = durability(b, pool) })
	b.Cleanup(func() {
		pool.Close()
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
		admin.Close()
	})
	return pool
}

func openPool(ctx context.Context, url, schema string, params ...string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	cfg.MaxConns = int32(envInt("BENCH_MAX_CONNS", 40))
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	store.ConfigurePool(cfg) // as every Ductor process does
	cfg.ConnConfig.Tracer = bothTracers{countingTracer{}, cfg.ConnConfig.Tracer}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := db.Migrate(ctx, pool, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if q := os.Getenv("BENCH_EXPERIMENT_SQL"); q != "" {
		if _, err := pool.Exec(ctx, q); err != nil {
			pool.Close()
			return nil, fmt.Errorf("experiment: %w", err)
		}
	}
	return pool, nil
}

// durability reads the settings the spec fixes, to print beside figures.
func durability(b *testing.B, pool *pgxpool.Pool) string {
	b.Helper()
	var sync, fsync string
	err := pool.QueryRow(context.Background(),
		"SELECT current_setting('synchronous_commit'), current_setting('fsync')").Scan(&sync, &fsync)
	if err != nil {
		b.Fatal(err)
	}
	return "synchronous_commit=" + sync + " fsync=" + fsync
}

// size picks the full or the -short size of a workload, or the env var.
func size(name string, full, short int) int {
	if testing.Short() {
		return envInt(name, short)
	}
	return envInt(name, full)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func randomHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}
