package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/pgcluster"
	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// A run that starts before midnight UTC, by the database's clock, and
// ends after it is metered on both days as the tables record it: started
// and its first step on the first day, its last step and its success on
// the second. The database runs under libfaketime about 25 s before a
// midnight, the worker process on the machine's clock.
func TestUsageSplitsAtMidnightByTheDatabaseClock(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	midnight := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
	c := startCluster(t, pgcluster.Options{Fast: true, ClockOffset: midnight.Sub(now) - 25*time.Second})
	testdb.Definition(t, c.store, c.tenant, `
key: day-span
steps:
  - {ref: before, type: task, with: {handler: builtin.noop}}
  - {ref: nap, type: wait, with: {duration: 10s}}
  - {ref: after, type: task, with: {handler: builtin.noop}}
edges:
  - {from: before, to: nap}
  - {from: nap, to: after}
`)
	StartWorker(t, c.cluster.URL(), WorkerOptions{})
	// Start it 8 s or less before the database's midnight.
	var left float64
	if !testwait.Until(c.ctx, 40*time.Second, func() bool {
		err := c.pool.QueryRow(c.ctx, `SELECT extract(epoch FROM date_trunc('day', now() AT TIME ZONE 'UTC') + interval '1 day' - (now() AT TIME ZONE 'UTC'))`).Scan(&left)
		return err == nil && left <= 8
	}) || left < 2 {
		t.Fatalf("the database's clock is %.1f s before midnight, want 2 to 8 s", left)
	}
	id := c.start(t, "day-span", nil)
	if run := c.waitRun(t, id, 60*time.Second, ended); run.Status != engine.RunSucceeded {
		t.Fatalf("the run ended %s", run.Status)
	}

	var started, finished, first, last time.Time
	if err := c.pool.QueryRow(c.ctx, `SELECT ductor_utc_day(r.created_at), ductor_utc_day(r.finished_at),
		       (SELECT ductor_utc_day(started_at) FROM run_attempt WHERE run_id = r.id AND node = 'before'),
		       (SELECT ductor_utc_day(started_at) FROM run_attempt WHERE run_id = r.id AND node = 'after')
		FROM run r WHERE r.id = $1`, id).Scan(&started, &finished, &first, &last); err != nil {
		t.Fatal(err)
	}
	if !finished.After(started) || !first.Equal(started) || !last.Equal(finished) {
		t.Fatalf("the run did not cross midnight as planned: created %s, ended %s, steps started %s and %s", started, finished, first, last)
	}
	metered := func() map[string]string {
		rows, err := c.pool.Query(c.ctx, `SELECT day, sum(runs_started), sum(runs_succeeded), sum(steps) FROM (
			SELECT day, runs_started, runs_succeeded, steps FROM usage_delta WHERE tenant_id = $1
			UNION ALL SELECT day, runs_started, runs_succeeded, steps FROM usage_day WHERE tenant_id = $1) u
			GROUP BY day`, c.tenant)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var day time.Time
			var rs, su, st int64
			if err := rows.Scan(&day, &rs, &su, &st); err != nil {
				t.Fatal(err)
			}
			out[day.Format(time.DateOnly)] = fmt.Sprintf("started %d, succeeded %d, steps %d", rs, su, st)
		}
		return out
	}
	want := map[string]string{
		started.Format(time.DateOnly):  "started 1, succeeded 0, steps 1",
		finished.Format(time.DateOnly): "started 0, succeeded 1, steps 1",
	}
	check := func(when string) {
		got := metered()
		for day, w := range want {
			if got[day] != w {
				t.Errorf("%s, %s: metered %q, want %q (all: %v)", when, day, got[day], w, got)
			}
		}
	}
	check("before the fold")
	if _, err := c.coord.Usage.Fold(c.ctx); err != nil {
		t.Fatal(err)
	}
	check("after the fold")
}
