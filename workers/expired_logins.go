package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
)

const (
	// ExpiredLoginsEvery is how often a coordinator process deletes
	// expired dashboard sessions and OIDC login attempts.
	ExpiredLoginsEvery = time.Minute
	// expiredLoginsBatch bounds one delete; a full batch goes round again
	// at once.
	expiredLoginsBatch = 1000
)

// DeleteExpiredLogins deletes expired dashboard sessions and login
// attempts, by the database's clock, every ExpiredLoginsEvery until ctx
// ends. Every coordinator process runs it; replicas deleting the same
// rows at once is harmless.
func DeleteExpiredLogins(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) {
	t := time.NewTicker(ExpiredLoginsEvery)
	defer t.Stop()
	for {
		if err := ExpiredLoginsOnce(ctx, pool); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "delete expired logins", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ExpiredLoginsOnce deletes every expired session and login attempt, a
// batch at a time.
func ExpiredLoginsOnce(ctx context.Context, pool *pgxpool.Pool) error {
	s := store.New(pool)
	for {
		sessions, attempts, err := s.ExpiredLoginsDelete(ctx, expiredLoginsBatch)
		if err != nil || max(sessions, attempts) < expiredLoginsBatch {
			return err
		}
	}
}
