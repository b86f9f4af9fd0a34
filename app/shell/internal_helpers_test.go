package shell

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// shellOn builds a shell on a fresh schema, with no River client working
// its queues: jobs are inserted, never worked.
func shellOn(t *testing.T, opts ...func(*Config)) (*Shell, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.Schema(t)
	cfg := Config{Pool: pool, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg)
	}
	sh, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh, pool
}

// startRun creates a run of the latest version of definition and ticks
// it in the same transaction, as runs.Service.Start does.
func startRun(ctx context.Context, sh *Shell, tenantID uuid.UUID, definition string) (store.Run, bool, error) {
	var run store.Run
	var created bool
	err := store.WithTx(ctx, sh.Writer.pool, func(tx pgx.Tx) error {
		v, err := sh.Writer.Version(ctx, store.New(tx), tenantID, definition, 0)
		if err != nil {
			return err
		}
		var startNow bool
		run, created, startNow, err = sh.Writer.CreateRun(ctx, tx, v.Manifest, NewRootRun(v, uuid.New(), nil, "", nil, nil), true)
		if err != nil || !startNow {
			return err
		}
		if ticked, err := sh.Ticker.TickNew(ctx, tx, run); err != nil || ticked {
			return err
		}
		return sh.Writer.Wake(ctx, tx, tenantID, run.ID)
	})
	return run, created, err
}
