package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/db"
)

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t) // already migrated once by the helper
	applied, err := db.Migrate(ctx, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("second migrate applied %v, want nothing", applied)
	}
	if err := db.Check(ctx, pool); err != nil {
		t.Fatalf("Check after migrate: %v", err)
	}
}

func TestCheckReportsPendingMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t)
	if _, err := pool.Exec(ctx, "DELETE FROM ductor_migration WHERE version = (SELECT max(version) FROM ductor_migration)"); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(ctx, pool); !errors.Is(err, db.ErrNotCurrent) {
		t.Fatalf("Check with a pending migration = %v, want ErrNotCurrent", err)
	}
}

func TestMigrationsAreNumberedAndOrdered(t *testing.T) {
	t.Parallel()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	// Versions are unique and ascending; a gap is allowed (the migrator
	// records each applied version, so branches can claim numbers apart).
	for i, m := range ms {
		if m.Version < 1 || (i > 0 && m.Version == ms[i-1].Version) {
			t.Fatalf("migration %s has version %d: versions must be positive and unique", m.Name, m.Version)
		}
	}
}
