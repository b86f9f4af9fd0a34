package bench

import (
	"github.com/google/uuid"

	"testing"
	"time"
)

// BenchmarkFairness measures tenant B's single-step runs, trigger → step
// started, first with the engine idle and then while tenant A has a
// 5,000-way scatter (-short 300) queued on the same tier; goal: B's p95
// under load ≤ 3 × its idle p95. The loaded phase takes samples for at
// most 2 minutes (-short 10 s); A's run is then cancelled.
func BenchmarkFairness(b *testing.B) {
	n := size("BENCH_SCATTER", 5_000, 300)
	samples := size("BENCH_TRIGGERS", 30, 10)
	a := startDuctor(b, schema(b))
	a.publish(b, scatter("fan", n))
	bb := *a
	bb.tenant = a.newTenant(b)
	bb.publish(b, taskChain("single", 1))
	var idle, loaded []time.Duration
	b.ResetTimer()
	for range b.N {
		for range samples {
			idle = append(idle, bb.triggerWait(b, "single"))
		}
		id, err := a.start("fan", map[string]any{"items": items(n)})
		if err != nil {
			b.Fatal(err)
		}
		a.waitTicked(b, id)
		budget := time.Now().Add(deadline(2*time.Minute, 10*time.Second))
		for i := 0; i < samples && time.Now().Before(budget); i++ {
			loaded = append(loaded, bb.triggerWait(b, "single"))
		}
		a.cancel(b, id)
	}
	b.StopTimer()
	i, l := latencyOf(idle), latencyOf(loaded)
	ratio := l.p95 / i.p95
	b.ReportMetric(i.p95, "idle-p95-ms")
	b.ReportMetric(l.p95, "loaded-p95-ms")
	b.ReportMetric(ratio, "x-idle")
	record(b, "fairness", "fairness: tenant B p95 %.0f ms behind A's %d-way scatter vs %.0f ms idle = %.1f× (goal ≤ 3×: %s; %d loaded, %d idle samples)",
		l.p95, n, i.p95, ratio, verdict(ratio <= 3), l.n, i.n)
}

// triggerWait starts a single-step run, waits for it to end and returns
// the time from its creation to its step's start (database clock).
func (d *ductor) triggerWait(b *testing.B, key string) time.Duration {
	b.Helper()
	id, err := d.start(key, nil)
	if err != nil {
		b.Fatal(err)
	}
	run := d.waitRun(b, id, deadline(5*time.Minute, 30*time.Second))
	attempts, err := d.store.RunAttempts(d.ctx, d.tenant.ID, id)
	if err != nil || len(attempts) == 0 {
		b.Fatalf("attempts of %s: %v (%d)", id, err, len(attempts))
	}
	return attempts[0].StartedAt.Sub(run.CreatedAt)
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
