package runs

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/testdb"
)

// serviceOn builds the runs service and its shell on a fresh schema; with
// ticks set it also starts a River client working the tick queue (no step
// queue) until the test ends.
func serviceOn(t *testing.T, ticks bool) (*Service, *shell.Shell, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	sh, err := shell.New(shell.Config{Pool: pool, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	svc := New(Config{Pool: pool, Logger: log, Shell: sh})
	if !ticks {
		return svc, sh, pool
	}
	cfg := shell.InsertConfig(log)
	cfg.Workers = river.NewWorkers()
	river.AddWorker(cfg.Workers, river.WorkFunc(func(ctx context.Context, job *river.Job[shell.TickArgs]) error {
		return sh.Ticker.Tick(ctx, job.Args.TenantID, job.Args.RunID)
	}))
	cfg.Queues = map[string]river.QueueConfig{shell.QueueCoordinator: {MaxWorkers: 4, FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}}
	client, err := river.NewClient[pgx.Tx](riverpgxv5.New(pool), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stop)
	})
	return svc, sh, pool
}
