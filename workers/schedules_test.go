package workers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
	"github.com/ductor/ductor/workers"
)

const noopDef = "key: tick\nsteps:\n  - {ref: a, type: task, with: {handler: builtin.noop}}\n"

// slowDef waits for a signal "go": its runs run until the test lets them end.
const slowDef = "key: slow\nsteps:\n  - {ref: w, type: signal, with: {name: go}}\n"

// newSchedule creates a schedule of def every interval.
func (b testBundle) newSchedule(t *testing.T, id, def string, every time.Duration, o schedule.Overlap) store.Schedule {
	t.Helper()
	sc, err := b.coord.Runs.Schedules.Create(b.ctx, store.Schedule{
		TenantID: b.tenant.ID, ID: id, Definition: def, Spec: schedule.Spec{Interval: schedule.Duration(every)},
		Overlap: o, CatchupWindow: time.Hour, Input: map[string]any{"from": id},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// runsOf lists the runs a schedule started, newest first.
func (b testBundle) runsOf(t *testing.T, id string) []store.Run {
	t.Helper()
	runs, err := b.store.RunList(b.ctx, b.tenant.ID, store.RunFilter{Attributes: map[string]any{"schedule_id": id}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// passAt sets the database clock to read at and runs one schedule pass.
// The shift is taken from the database's own unshifted clock the moment
// before, so the pass sees at (plus the few milliseconds it takes to
// begin) however long the test took to get there.
func (b testBundle) passAt(t *testing.T, c *workers.Runtime, at time.Time) {
	t.Helper()
	var real time.Time
	if err := b.pool.QueryRow(b.ctx, `SELECT clock_timestamp()`).Scan(&real); err != nil {
		t.Fatal(err)
	}
	b.shift(t, at.Sub(real))
	if _, err := c.Runs.Schedules.Once(b.ctx); err != nil {
		t.Fatal(err)
	}
}

func (b testBundle) schedule(t *testing.T, id string) store.Schedule {
	t.Helper()
	sc, err := b.store.ScheduleGet(b.ctx, b.tenant.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// runSchedules runs the coordinator's firing loop until the test ends.
func runSchedules(t *testing.T, c *workers.Runtime) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Runs.Schedules.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// An interval schedule fires each second, close to its scheduled time,
// with runs carrying schedule_id and scheduled_at, and stops when paused.
func TestIntervalScheduleFiresOnTimeAndStopsWhenPaused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	b.newSchedule(t, "every-second", "tick", time.Second, schedule.OverlapAllowAll)
	runSchedules(t, b.coord)
	if !testwait.Until(b.ctx, 20*time.Second, func() bool { return len(b.runsOf(t, "every-second")) >= 2 }) {
		t.Fatalf("the schedule started %d runs in 20 s", len(b.runsOf(t, "every-second")))
	}
	for _, r := range b.runsOf(t, "every-second") {
		at, err := time.Parse(time.RFC3339Nano, r.SearchAttributes["scheduled_at"].(string))
		if err != nil || at.Nanosecond() != 0 {
			t.Fatalf("scheduled_at %v (%v) is not a whole second", r.SearchAttributes["scheduled_at"], err)
		}
		if late := r.CreatedAt.Sub(at); late < 0 || late > 900*time.Millisecond {
			t.Errorf("run for %v started %v after it", at, late)
		}
		if r.State.Input.(map[string]any)["from"] != "every-second" {
			t.Errorf("input = %v", r.State.Input)
		}
	}
	paused, err := b.coord.Runs.Schedules.Update(b.ctx, b.tenant.ID, "every-second", func(s *store.Schedule) error {
		s.Paused, s.Note = true, "maintenance"
		return nil
	}, nil)
	if err != nil || !paused.Paused {
		t.Fatal(paused, err)
	}
	n := len(b.runsOf(t, "every-second"))
	now, _ := b.store.Now(b.ctx)
	b.passAt(t, b.coord, now.Add(10*time.Second))
	if got := len(b.runsOf(t, "every-second")); got > n+1 { // one pass may have been under way
		t.Errorf("a paused schedule started %d more runs", got-n)
	}
}

// Stepping the database clock: the schedule acts exactly at its times.
func TestScheduleActsAtItsTimeByTheDatabaseClock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	sc := b.newSchedule(t, "minutely", "tick", time.Minute, schedule.OverlapAllowAll)
	b.passAt(t, b.coord, sc.NextAt.Add(-5*time.Second))
	if got := b.runsOf(t, "minutely"); len(got) != 0 {
		t.Fatalf("acted %d times before its time", len(got))
	}
	b.passAt(t, b.coord, sc.NextAt.Add(50*time.Millisecond))
	runs := b.runsOf(t, "minutely")
	if len(runs) != 1 || runs[0].SearchAttributes["scheduled_at"] != sc.NextAt.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("runs = %+v, want one at %v", runs, sc.NextAt)
	}
	if got := b.schedule(t, "minutely"); !got.NextAt.Equal(sc.NextAt.Add(time.Minute)) || got.Actions != 1 {
		t.Errorf("after one action: next %v, actions %d", got.NextAt, got.Actions)
	}
}

// skip never starts a second run while one runs; buffer_one keeps one
// action and starts it when the run ends. Minutely, so that a pass that
// begins late on a loaded machine is still far from the next time.
func TestSkipNeverOverlapsWhileBufferOneQueuesOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, slowDef)
	skip := b.newSchedule(t, "skip", "slow", time.Minute, schedule.OverlapSkip)
	b.newSchedule(t, "buffer", "slow", time.Minute, schedule.OverlapBufferOne)
	first := skip.NextAt
	for i := range 4 {
		b.passAt(t, b.coord, first.Add(time.Duration(i)*time.Minute+10*time.Millisecond))
	}
	if n := len(b.runsOf(t, "skip")); n != 1 {
		t.Fatalf("skip started %d runs over 4 min of a slow run, want 1", n)
	}
	if n := len(b.runsOf(t, "buffer")); n != 1 {
		t.Fatalf("buffer_one started %d runs while one ran, want 1", n)
	}
	if s := b.schedule(t, "skip"); s.Skipped != 3 || s.Actions != 1 {
		t.Errorf("skip: actions %d, skipped %d; want 1, 3", s.Actions, s.Skipped)
	}
	if s := b.schedule(t, "buffer"); s.Skipped != 2 {
		t.Errorf("buffer_one skipped %d, want 2 (one buffered)", s.Skipped)
	}
	for _, id := range []string{"skip", "buffer"} {
		r := b.runsOf(t, id)[0]
		if _, err := b.coord.Runs.Signal(b.ctx, b.tenant.ID, r.ID, engine.Signal{RequestID: "end", Name: "go"}); err != nil {
			t.Fatal(err)
		}
		b.finish(t, r.ID, engine.RunSucceeded)
	}
	b.passAt(t, b.coord, first.Add(3*time.Minute+20*time.Millisecond)) // no new time is due: only settling
	if n := len(b.runsOf(t, "buffer")); n != 2 {
		t.Errorf("buffer_one started %d runs after the first ended, want 2", n)
	}
	if n := len(b.runsOf(t, "skip")); n != 1 {
		t.Errorf("skip started %d runs after the first ended with nothing due, want 1", n)
	}
}

// Two coordinators (two pools, as two processes would have) race over
// one schedule while the clock jumps: every scheduled time starts exactly
// one run.
func TestTwoReplicasNeverStartAScheduledTimeTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other, err := pgxpool.New(b.ctx, testdb.SearchPathURL(t, b.pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	replica := startCoordinator(t, other)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	b.newSchedule(t, "raced", "tick", time.Second, schedule.OverlapAllowAll)
	for step := 1; step <= 5; step++ {
		b.shift(t, time.Duration(step)*10*time.Second)
		var wg sync.WaitGroup
		for _, c := range []*workers.Runtime{b.coord, replica, b.coord, replica} {
			wg.Go(func() {
				for range 3 {
					if _, err := c.Runs.Schedules.Once(b.ctx); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
	}
	runs := b.runsOf(t, "raced")
	seen := map[any]uuid.UUID{}
	for _, r := range runs {
		at := r.SearchAttributes["scheduled_at"]
		if prev, dup := seen[at]; dup {
			t.Errorf("scheduled time %v started runs %s and %s", at, prev, r.ID)
		}
		seen[at] = r.ID
	}
	sc := b.schedule(t, "raced")
	if len(runs) < 45 || int64(len(runs)) != sc.Actions {
		t.Errorf("%d runs, %d actions counted, over 50 s of a 1 s schedule", len(runs), sc.Actions)
	}
}

// After an outage longer than an interval, the actions within the
// catchup window run; older ones are counted as missed.
func TestCatchupAfterAnOutage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	sc, err := b.coord.Runs.Schedules.Create(b.ctx, store.Schedule{
		TenantID: b.tenant.ID, ID: "catchup", Definition: "tick", Spec: schedule.Spec{Interval: schedule.Duration(time.Minute)},
		Overlap: schedule.OverlapAllowAll, CatchupWindow: 5 * time.Minute,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.passAt(t, b.coord, sc.NextAt.Add(30*time.Minute+time.Second)) // down for half an hour
	got := b.schedule(t, "catchup")
	runs := b.runsOf(t, "catchup")
	if len(runs) != 5 || got.Actions != 5 || got.Missed != 26 {
		t.Errorf("after 30 min down: %d runs, %d actions, %d missed; want 5, 5, 26", len(runs), got.Actions, got.Missed)
	}
	if !got.NextAt.Equal(sc.NextAt.Add(31 * time.Minute)) {
		t.Errorf("next = %v, want %v", got.NextAt, sc.NextAt.Add(31*time.Minute))
	}
}

// A backfill starts the nominal times of a range once, whatever the
// catchup window; again, it starts nothing.
func TestBackfill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, noopDef)
	_, err := b.coord.Runs.Schedules.Create(b.ctx, store.Schedule{
		TenantID: b.tenant.ID, ID: "hourly", Definition: "tick", Spec: schedule.Spec{Cron: "@hourly"},
		Overlap: schedule.OverlapSkip, CatchupWindow: time.Hour,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	acts, err := b.coord.Runs.Schedules.Backfill(b.ctx, b.tenant.ID, "hourly", from, from.Add(3*time.Hour), schedule.OverlapAllowAll)
	if err != nil || len(acts) != 3 {
		t.Fatalf("backfill = %+v, %v", acts, err)
	}
	times := map[any]bool{}
	for _, r := range b.runsOf(t, "hourly") {
		times[r.SearchAttributes["scheduled_at"]] = true
	}
	if len(times) != 3 || !times["2024-03-01T00:00:00Z"] || !times["2024-03-01T02:00:00Z"] {
		t.Fatalf("backfilled times = %v", times)
	}
	again, err := b.coord.Runs.Schedules.Backfill(b.ctx, b.tenant.ID, "hourly", from, from.Add(3*time.Hour), schedule.OverlapAllowAll)
	if err != nil || len(again) != 3 || again[0].State != "duplicate" || len(b.runsOf(t, "hourly")) != 3 {
		t.Errorf("backfill again = %+v, %v; %d runs", again, err, len(b.runsOf(t, "hourly")))
	}
	if _, err := b.coord.Runs.Schedules.Backfill(b.ctx, b.tenant.ID, "hourly", from, from.AddDate(1, 0, 0), ""); err == nil {
		t.Errorf("a backfill of a year of hours was accepted")
	}
}

// Trigger now starts a run at once, under the overlap policy.
func TestTriggerNow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, slowDef)
	b.newSchedule(t, "manual", "slow", time.Hour, schedule.OverlapSkip)
	a, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "manual", "")
	if err != nil || a.State != store.ActionRunning || a.RunID == nil || a.Source != runs.SourceTrigger {
		t.Fatalf("trigger = %+v, %v", a, err)
	}
	if again, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "manual", ""); err != nil || again.State != "skipped" {
		t.Errorf("trigger while its run runs (skip) = %+v, %v", again, err)
	}
	if third, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "manual", schedule.OverlapAllowAll); err != nil || third.RunID == nil {
		t.Errorf("trigger with allow_all = %+v, %v", third, err)
	}
	if n := len(b.runsOf(t, "manual")); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

// pause_on_failure pauses the schedule when a run it started fails.
func TestPauseOnFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	testdb.Definition(t, b.store, b.tenant.ID, "key: fails\nsteps:\n  - {ref: a, type: transform, with: {expr: '1 / 0'}}\n")
	_, err := b.coord.Runs.Schedules.Create(b.ctx, store.Schedule{
		TenantID: b.tenant.ID, ID: "fragile", Definition: "fails", Spec: schedule.Spec{Interval: schedule.Duration(time.Hour)},
		Overlap: schedule.OverlapSkip, CatchupWindow: time.Hour, PauseOnFailure: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := b.coord.Runs.Schedules.Trigger(b.ctx, b.tenant.ID, "fragile", "")
	if err != nil || a.RunID == nil {
		t.Fatal(a, err)
	}
	b.finish(t, *a.RunID, engine.RunFailed)
	if _, err := b.coord.Runs.Schedules.Once(b.ctx); err != nil {
		t.Fatal(err)
	}
	if sc := b.schedule(t, "fragile"); !sc.Paused || sc.Note == "" {
		t.Errorf("after a failed run: paused %v, note %q", sc.Paused, sc.Note)
	}
}
