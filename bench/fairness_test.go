package bench

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/workers"
)

// BenchmarkFairness measures tenant B's single-step runs, trigger → step
// started, first with the engine idle and then while tenant A has a
// 5,000-way scatter (-short 2,000) queued on the same tier; goal: B's p95
// under load ≤ 3 × its idle p95. The same loaded phase then runs again
// with the fair queue's tags off (plain FIFO, River's insertion order), to
// show what they are for: there B's step waits behind A's whole backlog,
// so that phase usually gets a single sample before the flood is over. A
// loaded phase samples only while A has steps queued, for at most 2
// minutes (-short 10 s); A's run is then cancelled and its queued steps
// drained.
func BenchmarkFairness(b *testing.B) {
	n := size("BENCH_SCATTER", 5_000, 2_000)
	samples := size("BENCH_TRIGGERS", 30, 10)
	var plainFIFO atomic.Bool // the baseline: no fair tags
	a := startDuctor(b, schema(b), func(c *workers.Config) { c.Testing.PlainFIFO = &plainFIFO })
	a.publish(b, scatter("fan", n))
	bb := *a
	bb.tenant = a.newTenant(b)
	bb.publish(b, markedOne("single"))
	var idle, loaded, fifo []time.Duration
	var idleStages, loadedStages stages
	flood := func(into *[]time.Duration, st *stages) {
		id, err := a.start("fan", map[string]any{"items": items(n)})
		if err != nil {
			b.Fatal(err)
		}
		a.waitTicked(b, id)
		budget := time.Now().Add(deadline(2*time.Minute, 10*time.Second))
		for i := 0; i < samples && time.Now().Before(budget) && a.flooding(b); i++ {
			d, s := bb.triggerStages(b, "single")
			*into = append(*into, d)
			if st != nil {
				st.add(s)
			}
		}
		a.cancel(b, id)
		a.waitStepsDrained(b)
	}
	b.ResetTimer()
	for range b.N {
		for range samples {
			d, s := bb.triggerStages(b, "single")
			idle = append(idle, d)
			idleStages.add(s)
		}
		flood(&loaded, &loadedStages)
		plainFIFO.Store(true)
		flood(&fifo, nil)
		plainFIFO.Store(false)
	}
	b.StopTimer()
	i, l, f := latencyOf(idle), latencyOf(loaded), latencyOf(fifo)
	if l.n == 0 {
		b.Fatal("no sample of tenant B was taken while A's flood was queued")
	}
	ratio := l.p95 / i.p95
	b.ReportMetric(i.p95, "idle-p95-ms")
	b.ReportMetric(l.p95, "loaded-p95-ms")
	b.ReportMetric(ratio, "x-idle")
	b.ReportMetric(f.p95/i.p95, "fifo-x-idle")
	record(b, "fairness", "fairness: tenant B p95 %.0f ms behind A's %d-way scatter vs %.0f ms idle = %.1f× (goal ≤ 3×: %s; %d loaded, %d idle samples)",
		l.p95, n, i.p95, ratio, verdict(ratio <= 3), l.n, i.n)
	record(b, "fairness-stages", "fairness, tenant B's stages p50/p95 (ms), idle → loaded: %s",
		idleStages.versus(loadedStages))
	record(b, "fairness-fifo", "fairness with plain FIFO (fair tags off), same flood: tenant B p95 %.0f ms = %.1f× idle (%d samples taken while A had steps queued)",
		f.p95, f.p95/i.p95, f.n)
}

// flooding reports whether step jobs are waiting to be fetched.
func (d *ductor) flooding(b *testing.B) bool {
	b.Helper()
	var queued bool
	err := d.pool.QueryRow(d.ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE kind = 'ductor.step' AND state = 'available')`).Scan(&queued)
	if err != nil {
		b.Fatal(err)
	}
	return queued
}

// waitStepsDrained waits until no step job is queued or running, so the
// next phase starts from an empty queue.
func (d *ductor) waitStepsDrained(b *testing.B) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var n int
		err := d.pool.QueryRow(d.ctx, `SELECT count(*) FROM river_job
			WHERE kind = 'ductor.step' AND state IN ('available', 'running', 'scheduled', 'retryable')`).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d step jobs still queued after 5 minutes", n)
		}
		time.Sleep(5 * time.Millisecond) // poll interval
	}
}

// stage is one sample of tenant B's path, split where the database
// records a time: the trigger's transaction (until Start returns), its
// step job waiting to be fetched (River's attempted_at), and the fetched
// job waiting for its attempt's start to be recorded.
type stage struct{ trigger, fetch, start time.Duration }

type stages struct{ trigger, fetch, start []time.Duration }

func (s *stages) add(x stage) {
	s.trigger = append(s.trigger, x.trigger)
	s.fetch = append(s.fetch, x.fetch)
	s.start = append(s.start, x.start)
}

func (s stages) versus(l stages) string {
	part := func(name string, a, b []time.Duration) string {
		x, y := latencyOf(a), latencyOf(b)
		return fmt.Sprintf("%s %.1f/%.1f → %.1f/%.1f", name, x.p50, x.p95, y.p50, y.p95)
	}
	return part("trigger", s.trigger, l.trigger) + "; " + part("fetch", s.fetch, l.fetch) + "; " + part("start", s.start, l.start)
}

// triggerStages starts a one-step run of markedOne, waits for it to end
// and returns the time from the trigger's call to its handler's run (the
// process's clock), split into its stages: the trigger's call, the step
// job's fetch (none for a local step) and the start.
func (d *ductor) triggerStages(b *testing.B, key string) (time.Duration, stage) {
	b.Helper()
	sent := time.Now()
	id, err := d.start(key, nil)
	if err != nil {
		b.Fatal(err)
	}
	started := time.Now()
	d.waitRun(b, id, deadline(5*time.Minute, 30*time.Second))
	ran := markOf(b, id)
	var fetched time.Time
	err = d.pool.QueryRow(d.ctx, `SELECT attempted_at FROM river_job
		WHERE kind = 'ductor.step' AND args->>'run_id' = $1 ORDER BY id LIMIT 1`, id.String()).Scan(&fetched)
	if errors.Is(err, pgx.ErrNoRows) { // a local step: no job, nothing fetched
		return ran.Sub(sent), stage{trigger: started.Sub(sent), start: ran.Sub(started)}
	}
	if err != nil {
		b.Fatal(err)
	}
	return ran.Sub(sent), stage{trigger: started.Sub(sent), fetch: fetched.Sub(started), start: ran.Sub(fetched)}
}

// triggerWait starts a single-step run, waits for it to end and returns
// the time from its creation to its step's start (database clock).
func (d *ductor) triggerWait(b *testing.B, key string) time.Duration {
	b.Helper()
	total, _ := d.triggerStages(b, key)
	return total
}

// waitTicked waits until the run's first tick committed, so its children
// are queued.
func (d *ductor) waitTicked(b *testing.B, id uuid.UUID) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		run, err := d.store.RunGet(d.ctx, d.tenant.ID, id)
		if err != nil {
			b.Fatal(err)
		}
		if run.RecordVersion > 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("run %x not ticked after 5 minutes", id)
		}
		time.Sleep(2 * time.Millisecond) // poll interval
	}
}
