package cli

import (
	"context"
	"errors"

	"github.com/ductor/ductor/app/logging"
	"github.com/ductor/ductor/db"
)

// runServe is production: everything its roles ask for, against
// DATABASE_URL, which must already be migrated (`ductor migrate`).
func runServe(ctx context.Context, env Env, args []string) error {
	cfg, _, err := loadConfig(newFlags("serve", env), args, env, ":8080")
	if err != nil {
		return err
	}
	if err := cfg.RequireForServe(); err != nil {
		return err
	}
	pool, err := requireDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.Check(ctx, pool); err != nil {
		if errors.Is(err, db.ErrNotCurrent) {
			return errors.New("database migrations are not current: run `ductor migrate` first")
		}
		return err
	}
	log, gate, err := newLogger(env, cfg, logging.JSON)
	if err != nil {
		return err
	}
	return process{cfg: cfg, pool: pool, log: log, gate: gate, env: env}.run(ctx)
}
