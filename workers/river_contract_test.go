package workers

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// contractArgs drives contractWorker: fail returns an error, snooze snoozes
// the first time and completes the next.
type contractArgs struct {
	Mode string `json:"mode"`
}

func (contractArgs) Kind() string { return "ductor.contract" }

type contractWorker struct {
	river.WorkerDefaults[contractArgs]
	snoozed atomic.Bool
}

func (w *contractWorker) Work(_ context.Context, job *river.Job[contractArgs]) error {
	switch {
	case job.Args.Mode == "fail":
		return errors.New("boom")
	case job.Args.Mode == "snooze" && !w.snoozed.Swap(true):
		return river.JobSnooze(10 * time.Millisecond)
	}
	return nil
}

// This pins the River behaviour lost-step detection relies on. A step job
// has one River attempt: when its worker fails before the attempt's start
// is recorded, River must leave it discarded with finalized_at set, which
// the sweep looks for; and a step whose start could not be recorded
// snoozes, which must not use up that single attempt.
func TestRiverSingleAttemptJobsDiscardOnErrorAndSurviveSnooze(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Schema(t)
	ws := river.NewWorkers()
	river.AddWorker(ws, &contractWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:  slog.New(slog.DiscardHandler),
		Workers: ws,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2, FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.StopAndCancel(stop)
	})
	one := &river.InsertOpts{MaxAttempts: 1}
	failed, err := client.Insert(ctx, contractArgs{Mode: "fail"}, one)
	if err != nil {
		t.Fatal(err)
	}
	snoozed, err := client.Insert(ctx, contractArgs{Mode: "snooze"}, one)
	if err != nil {
		t.Fatal(err)
	}
	state := func(id int64) (string, bool) {
		var s string
		var finalized bool
		err := pool.QueryRow(ctx, `SELECT state::text, finalized_at IS NOT NULL FROM river_job WHERE id = $1`, id).Scan(&s, &finalized)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		return s, finalized
	}
	// A short snooze makes the job available again at once, its attempt
	// given back.
	completed := testwait.Until(ctx, 20*time.Second, func() bool {
		s, _ := state(snoozed.Job.ID)
		return s == "completed"
	})
	if !completed {
		s, _ := state(snoozed.Job.ID)
		var attempt, max int
		_ = pool.QueryRow(ctx, `SELECT attempt, max_attempts FROM river_job WHERE id = $1`, snoozed.Job.ID).Scan(&attempt, &max)
		t.Fatalf("the snoozed single-attempt job is %s after 20s (attempt %d of %d), want completed", s, attempt, max)
	}
	if s, finalized := state(failed.Job.ID); s != "discarded" || !finalized {
		t.Errorf("a single-attempt job whose worker failed is %s (finalized %v), want discarded with finalized_at", s, finalized)
	}
}
