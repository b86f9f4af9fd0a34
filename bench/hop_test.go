package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// BenchmarkHop runs one chain of 100 no-op task steps and reports the hop
// from step N's result to step N+1's start (goal p50 ≤ 10 ms, p99 ≤ 50 ms),
// from the database's timestamps: the worker's delivery of N's result
// (run_input.created_at, or the tick's time when the worker ticked the run
// inline and stored no input), the tick that applied it (the attempt's
// finished_at) and N+1's start (its attempt's started_at).
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
	record(b, "hop", "hop (result delivered → next step started): %s (goal p50 ≤ 10 ms, p99 ≤ 50 ms: %s)",
		l, verdict(l.p50 <= 10 && l.p99 <= 50))
	t, f := latencyOf(toTick), latencyOf(fromTick)
	b.ReportMetric(f.p50, "tick-to-start-p50-ms")
	record(b, "hop-parts", "hop parts: delivered → tick applied %s; tick applied (attempt finished_at) → next started %s", t, f)
}

// hopTimes are a chain's hops and their two parts.
type hopTimes struct{ full, toTick, fromTick []time.Duration }

// hops reads the chain's attempts and result inputs; steps are ref(0..n-1).
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
	delivered := d.deliveries(b, id)
	var h hopTimes
	for i := 0; i+1 < n; i++ {
		cur, next := ref(i), ref(i+1)
		if started[next].IsZero() || finished[cur].IsZero() {
			b.Fatalf("step %s or %s has no timestamps", cur, next)
		}
		if delivered[cur].IsZero() {
			// Ticked inline: the result went straight to the engine in the
			// worker's own transaction, at the tick's time.
			delivered[cur] = finished[cur]
		}
		h.full = append(h.full, started[next].Sub(delivered[cur]))
		h.toTick = append(h.toTick, finished[cur].Sub(delivered[cur]))
		h.fromTick = append(h.fromTick, started[next].Sub(finished[cur]))
	}
	return h
}

// deliveries maps each node to when its last result was stored.
func (d *ductor) deliveries(b *testing.B, id uuid.UUID) map[string]time.Time {
	b.Helper()
	rows, err := d.pool.Query(d.ctx, `SELECT dedup_key, created_at FROM run_input
		WHERE tenant_id = $1 AND run_id = $2 AND kind = 'result' ORDER BY id`, d.tenant.ID, id)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var key string
		var at time.Time
		if err := rows.Scan(&key, &at); err != nil {
			b.Fatal(err)
		}
		// dedup_key is result:NODE:GENERATION:ATTEMPT
		parts := strings.Split(key, ":")
		out[strings.Join(parts[1:len(parts)-2], ":")] = at
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}
