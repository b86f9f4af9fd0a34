package bench

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkHop runs one chain of 100 no-op task steps and reports the hop
// from step N's start to step N+1's start (goal p50 ≤ 10 ms, p99 ≤ 50 ms),
// from the database's timestamps (the attempts' started_at): a no-op step
// executes in microseconds, so this is the hop from one step's result to
// the next step's start, with nothing left out (the worker hands its result
// over without waiting, so no timestamp marks the result itself). Its two
// parts: from N's start to the tick that applied N's result (N's attempt's
// finished_at), and from that tick to N+1's start.
func BenchmarkHop(b *testing.B) {
	const steps = 100
	d := startDuctor(b, schema(b))
	d.publish(b, taskChain("hop", steps))
	var full, toTick, fromTick []time.Duration
	b.ResetTimer()
	for range b.N {
		id, err := d.start("hop", nil)
		if err != nil {
			b.Fatal(err)
		}
		d.waitRun(b, id, 5*time.Minute)
		h := d.hops(b, id, steps)
		full, toTick, fromTick = append(full, h.full...), append(toTick, h.toTick...), append(fromTick, h.fromTick...)
	}
	b.StopTimer()
	l := latencyOf(full)
	b.ReportMetric(l.p50, "hop-p50-ms")
	b.ReportMetric(l.p99, "hop-p99-ms")
	record(b, "hop", "hop (no-op step started → next step started): %s (goal p50 ≤ 10 ms, p99 ≤ 50 ms: %s)",
		l, verdict(l.p50 <= 10 && l.p99 <= 50))
	t, f := latencyOf(toTick), latencyOf(fromTick)
	b.ReportMetric(f.p50, "tick-to-start-p50-ms")
	record(b, "hop-parts", "hop parts: started → tick applied its result %s; tick applied (attempt finished_at) → next started %s", t, f)
}

// hopTimes are a chain's hops and their two parts.
type hopTimes struct{ full, toTick, fromTick []time.Duration }

// hops reads the chain's attempts; steps are ref(0..n-1).
func (d *ductor) hops(b *testing.B, id uuid.UUID, n int) hopTimes {
	b.Helper()
	attempts, err := d.store.RunAttempts(d.ctx, d.tenant.ID, id)
	if err != nil {
		b.Fatal(err)
	}
	started, finished := map[string]time.Time{}, map[string]time.Time{}
	for _, a := range attempts { // ordered by attempt: the last one wins
		started[a.Node], finished[a.Node] = a.StartedAt, a.FinishedAt
	}
	var h hopTimes
	for i := 0; i+1 < n; i++ {
		cur, next := ref(i), ref(i+1)
		if started[cur].IsZero() || started[next].IsZero() || finished[cur].IsZero() {
			b.Fatalf("step %s or %s has no timestamps", cur, next)
		}
		h.full = append(h.full, started[next].Sub(started[cur]))
		h.toTick = append(h.toTick, finished[cur].Sub(started[cur]))
		h.fromTick = append(h.fromTick, started[next].Sub(finished[cur]))
	}
	return h
}
