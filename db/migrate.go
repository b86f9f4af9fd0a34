// Package db holds Ductor's schema: append-only SQL migrations under
// migrations/ (also sqlc's schema input) and the migrator that applies them
// together with River's own migrations.
//
// A migration that has landed is never edited, renumbered or deleted:
// installed databases record each version they have applied and will not
// run a file again, so a change to the schema is always a new file,
// numbered above the highest landed one. The test in landed_test.go pins
// the sha256 of every landed file and fails on an edited file or on a new
// one numbered too low; a new file's line joins that table when it lands.
//
// The numbering has gaps (0014, 0016, 0018, 0022, 0025 to 0027, 0031,
// 0032, 0038), numbers no landed file uses. They stay: renumbering
// landed files to close them would make installed databases skip or
// re-run migrations. The migrator only needs versions to be unique and
// ascending.
package db

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// lockKey serialises concurrent migrators (several replicas starting at once).
const lockKey = 0x6475_6374_6f72 // "ductor"

// ErrNotCurrent is returned by Check when migrations are pending.
var ErrNotCurrent = errors.New("database migrations are not current")

// Migration is one of Ductor's schema files.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists Ductor's migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m, err := readMigration(e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

func readMigration(name string) (Migration, error) {
	num, _, ok := strings.Cut(name, "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil {
		return Migration{}, fmt.Errorf("migration %q: name must start with a number and an underscore", name)
	}
	sql, err := fs.ReadFile(migrationFS, path.Join("migrations", name))
	if err != nil {
		return Migration{}, fmt.Errorf("read migration %q: %w", name, err)
	}
	return Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(sql)}, nil
}

// Migrate applies River's and Ductor's pending migrations. It is
// idempotent: a second call applies nothing. A session advisory lock keeps
// replicas that start together from migrating at once. River's migrations
// each run in their own transaction (some cannot share one); Ductor's run
// together in one.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]string, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockKey) }()

	applied, err := migrateRiver(ctx, pool, log)
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		own, err := migrateOwn(ctx, tx)
		applied = append(applied, own...)
		return err
	})
	return applied, err
}

func riverMigrator(pool *pgxpool.Pool, log *slog.Logger) (*rivermigrate.Migrator[pgx.Tx], error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: log})
}

func migrateRiver(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]string, error) {
	m, err := riverMigrator(pool, log)
	if err != nil {
		return nil, fmt.Errorf("river migrator: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	var names []string
	for _, v := range res.Versions {
		names = append(names, fmt.Sprintf("river %03d_%s", v.Version, v.Name))
	}
	return names, nil
}

const createVersionTable = `CREATE TABLE IF NOT EXISTS ductor_migration (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

func migrateOwn(ctx context.Context, tx pgx.Tx) ([]string, error) {
	if _, err := tx.Exec(ctx, createVersionTable); err != nil {
		return nil, fmt.Errorf("create ductor_migration: %w", err)
	}
	done, err := appliedVersions(ctx, tx)
	if err != nil {
		return nil, err
	}
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, m := range all {
		if done[m.Version] {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO ductor_migration (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return nil, fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		names = append(names, m.Name)
	}
	return names, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func appliedVersions(ctx context.Context, q querier) (map[int]bool, error) {
	rows, err := q.Query(ctx, "SELECT version FROM ductor_migration")
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	done := make(map[int]bool, len(versions))
	for _, v := range versions {
		done[v] = true
	}
	return done, nil
}

// Check returns ErrNotCurrent unless every River and Ductor migration has
// been applied. It is what /readyz asks.
func Check(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		m, err := riverMigrator(nil, nil)
		if err != nil {
			return err
		}
		res, err := m.ValidateTx(ctx, tx, nil)
		if err != nil {
			return fmt.Errorf("validate river migrations: %w", err)
		}
		if !res.OK {
			return fmt.Errorf("%w: %s", ErrNotCurrent, strings.Join(res.Messages, "; "))
		}
		return checkOwn(ctx, tx)
	})
}

func checkOwn(ctx context.Context, tx pgx.Tx) error {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('ductor_migration') IS NOT NULL").Scan(&exists); err != nil {
		return fmt.Errorf("check ductor_migration: %w", err)
	}
	if !exists {
		return fmt.Errorf("%w: no Ductor migrations applied", ErrNotCurrent)
	}
	done, err := appliedVersions(ctx, tx)
	if err != nil {
		return err
	}
	all, err := Migrations()
	if err != nil {
		return err
	}
	for _, m := range all {
		if !done[m.Version] {
			return fmt.Errorf("%w: %s pending", ErrNotCurrent, m.Name)
		}
	}
	return nil
}
