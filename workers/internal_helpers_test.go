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
func coordinatorOn(t *testing.T, work bool) (*Coordinator, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.Schema(t)
	log := slog.New(slog.DiscardHandler)
	c, err := NewCoordinator(pool, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	client, err := NewClient(pool, Options{Coordinator: work, Steps: work, C: c, Logger: log,
		Executor: steps.NewExecutor(steps.NewRegistry(), steps.HTTPOptions{})})
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
