package pgcluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ensureDatabase creates the cluster's database unless it exists.
func (c *Cluster) ensureDatabase(ctx context.Context) error {
	if c.database == "postgres" {
		return nil
	}
	admin := *c
	admin.database = "postgres"
	conn, err := pgx.Connect(ctx, admin.URL())
	if err != nil {
		return fmt.Errorf("pgcluster: connecting to %s: %w", admin.URL(), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", c.database).Scan(&exists)
	if err != nil || exists {
		return wrapf(err, "checking database %q", c.database)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{c.database}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: created meanwhile
		return nil
	}
	return wrapf(err, "creating database %q", c.database)
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgcluster: "+format+": %w", append(args, err)...)
}
