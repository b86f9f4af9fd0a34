package workers

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/testdb"
)

// coordinatorOn builds a coordinator on a fresh schema; with work set it
// also starts a River client working every queue until the test ends.
func coordinatorOn(t *testing.T, work bool, opts ...func(*Config)) (*Runtime, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	exec := steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{})
	cfg := Config{Pool: pool, Logger: log, LocalHandlers: exec.Handles}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	client, err := NewClient(pool, Options{Coordinator: work, Steps: work, Runtime: c, Logger: log,
		Executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	if !work {
		return c, pool
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stop)
	})
	return c, pool
}
