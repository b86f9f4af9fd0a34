package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/db"
)

// defaultMaxConns is the pool size unless DATABASE_URL sets pool_max_conns.
const defaultMaxConns = 40

// connect opens a pool on url and checks that it answers.
func connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, &config.Error{Setting: "DATABASE_URL", Problem: err.Error()}
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx defaults to max(4, CPUs): far too few for the workers of five
		// queues. pool_max_conns in DATABASE_URL overrides this.
		cfg.MaxConns = defaultMaxConns
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// requireDatabase connects to the configured database or names the setting.
func requireDatabase(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	if cfg.DatabaseURL == "" {
		return nil, &config.Error{Setting: "DATABASE_URL", Problem: "required (`ductor dev` prints the URL of its own database)"}
	}
	return connect(ctx, cfg.DatabaseURL)
}

// migrate applies pending migrations and logs what it applied.
func migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]string, error) {
	applied, err := db.Migrate(ctx, pool, log)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return applied, nil
}
