package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// BenchmarkScatter runs one run with an inline scatter of no-op tasks
// (10,000 children; -short 300) and reports children per second against
// River's raw rate (goal ≥ 0.7×: ticks coalesce) and the process's peak
// memory (goal ≤ 300 MiB). A run still going at the deadline (5 minutes;
// -short 15 s) is reported from the children finished so far, marked
// incomplete, so the suite stays bounded in time.
func BenchmarkScatter(b *testing.B) {
	baseline := riverRate(b)
	n := size("BENCH_SCATTER", 10_000, 300)
	d := startDuctor(b, schema(b))
	d.publish(b, scatter("fan", n))
	input := map[string]any{"items": items(n)}
	var rates, rsss, ticks []float64
	incomplete := ""
	b.ResetTimer()
	for range b.N {
		before, err := costsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		tables, err := tableStatsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		mem := sampleMemory()
		start := time.Now()
		id, err := d.start("fan", input)
		if err != nil {
			b.Fatal(err)
		}
		run, done := d.waitRunUntil(b, id, start.Add(deadline(5*time.Minute, 15*time.Second)))
		elapsed := time.Since(start)
		if !done {
			done := d.childrenDone(b, id)
			incomplete = fmt.Sprintf("; INCOMPLETE: %d of %d children done after %s, run %s, tick jobs %v, last tick error %q",
				done, n, elapsed.Round(time.Second), run.Status, d.tickJobs(b), d.lastTickError(b))
			rates = append(rates, float64(done)/elapsed.Seconds())
			d.cancel(b, id)
		} else {
			rates = append(rates, float64(n)/elapsed.Seconds())
		}
		_, rss := mem.finish()
		if done {
			after, err := costsNow(d.ctx, d.pool)
			if err != nil {
				b.Fatal(err)
			}
			tablesAfter, err := tableStatsNow(d.ctx, d.pool)
			if err != nil {
				b.Fatal(err)
			}
			record(b, "scatter-cost", "scatter per child: %s", perUnit(before, after, n))
			record(b, "scatter-rows", "scatter rows written per child: %s", writesPer(tables, tablesAfter, n))
		}
		rsss, ticks = append(rsss, rss), append(ticks, float64(run.RecordVersion))
	}
	b.StopTimer()
	rate, rss, t := spreadOf(rates), spreadOf(rsss), spreadOf(ticks)
	ratio := rate.median / baseline
	b.ReportMetric(rate.median, "steps/s")
	b.ReportMetric(ratio, "x-river")
	b.ReportMetric(rss.median, "peak-rss-MiB")
	b.ReportMetric(t.median, "ticks")
	record(b, "scatter", "scatter: %s steps/s = %.3f× River raw (goal ≥ 0.7×: %s; one run, %d-way inline scatter, %s ticks, %d tick conflicts%s)",
		rate, ratio, verdict(ratio >= 0.7), n, t, d.coord.Ticker.Conflicts.Load(), incomplete)
	record(b, "scatter-memory", "scatter memory: peak RSS %s MiB (goal ≤ 300 MiB: %s; %d-way scatter)", rss, verdict(rss.max <= 300), n)
}

// BenchmarkScatterTickCost times single ticks, each applying one child's
// result, in a scatter of 100 children and in one of 10,000 (-short
// 2,000): the tick should load and write what changed, not the whole run
// (goal ≤ 2×). Ticks run directly, with no worker, so nothing else runs.
func BenchmarkScatterTickCost(b *testing.B) {
	const samples = 30
	large := size("BENCH_SCATTER", 10_000, 2_000)
	pool := schema(b)
	coord, client := newClient(b, pool) // inserts only: never started
	d := &ductor{ctx: context.Background(), pool: pool, coord: coord, client: client}
	d.store = storeOf(pool)
	d.tenant = d.newTenant(b)
	var small, big []time.Duration
	b.ResetTimer()
	for range b.N {
		small = append(small, d.childTicks(b, 100, samples)...)
		big = append(big, d.childTicks(b, large, samples)...)
	}
	b.StopTimer()
	s, l := latencyOf(small), latencyOf(big)
	ratio := l.p50 / s.p50
	b.ReportMetric(s.p50, "tick-100-ms")
	b.ReportMetric(l.p50, fmt.Sprintf("tick-%d-ms", large))
	b.ReportMetric(ratio, "x-tick")
	record(b, "tick-cost", "tick per child completion: %.1f ms at %d children vs %.1f ms at 100 = %.1f× (goal ≤ 2×: %s)",
		l.p50, large, s.p50, ratio, verdict(ratio <= 2))
}

// childTicks starts an n-way scatter with one tick, then delivers results
// of k children one at a time and times the tick that applies each.
func (d *ductor) childTicks(b *testing.B, n, k int) []time.Duration {
	b.Helper()
	key := fmt.Sprintf("fan%d", n)
	d.publish(b, scatter(key, n))
	id, err := d.start(key, map[string]any{"items": items(n)})
	if err != nil {
		b.Fatal(err)
	}
	if err := d.coord.Ticker.Tick(d.ctx, d.tenant.ID, id); err != nil {
		b.Fatal(err)
	}
	var out []time.Duration
	for i := range k {
		node := fmt.Sprintf("fan[%d]", i*(n/k))
		d.deliver(b, id, node)
		start := time.Now()
		if err := d.coord.Ticker.Tick(d.ctx, d.tenant.ID, id); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// deliver stores a successful result for a running child, as its worker would.
func (d *ductor) deliver(b *testing.B, runID uuid.UUID, node string) {
	b.Helper()
	nodes, err := d.store.RunNodesByName(d.ctx, d.tenant.ID, runID, []string{node})
	if err != nil || len(nodes) != 1 {
		b.Fatalf("node %s: %v (%d found)", node, err, len(nodes))
	}
	n := nodes[0]
	if n.State != engine.NodeRunning {
		b.Fatalf("node %s is %s, want running", node, n.State)
	}
	res := engine.StepResult{Node: node, Generation: n.Generation, Attempt: n.Attempt, Output: map[string]any{}}
	err = pgx.BeginFunc(d.ctx, d.pool, func(tx pgx.Tx) error {
		return d.coord.Writer.Deliver(d.ctx, tx, d.tenant.ID, runID, res)
	})
	if err != nil {
		b.Fatal(err)
	}
}

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// waitRunUntil polls the run until it ends or the deadline passes; done
// reports that it ended. A run that ended other than succeeded fails the
// benchmark.
func (d *ductor) waitRunUntil(b *testing.B, id uuid.UUID, deadline time.Time) (store.Run, bool) {
	b.Helper()
	for {
		run, err := d.store.RunGet(d.ctx, d.tenant.ID, id)
		if err != nil {
			b.Fatal(err)
		}
		if run.Status.Terminal() {
			if run.Status != engine.RunSucceeded {
				b.Fatalf("run %s ended %s: %+v", id, run.Status, run.State.Error)
			}
			return run, true
		}
		if time.Now().After(deadline) {
			return run, false
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// deadline is the full or the -short time budget of a phase.
func deadline(full, short time.Duration) time.Duration {
	if testing.Short() {
		return short
	}
	return full
}

// childrenDone counts a run's scatter children that finished.
func (d *ductor) childrenDone(b *testing.B, id uuid.UUID) int {
	b.Helper()
	var n int
	err := d.pool.QueryRow(d.ctx, `SELECT count(*) FROM run_node
		WHERE tenant_id = $1 AND run_id = $2 AND scatter IS NOT NULL AND state = 'succeeded'`, d.tenant.ID, id).Scan(&n)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// cancel asks a run to stop, so it does not load the next round.
func (d *ductor) cancel(b *testing.B, id uuid.UUID) {
	b.Helper()
	if err := d.coord.Runs.Control(d.ctx, d.tenant.ID, id, engine.Cancel{RequestID: uuid.NewString(), Reason: "benchmark deadline"}); err != nil {
		b.Fatal(err)
	}
}

func (d *ductor) tickJobs(b *testing.B) map[string]int {
	b.Helper()
	rows, err := d.pool.Query(d.ctx, `SELECT state::text, count(*) FROM river_job WHERE kind = 'ductor.tick' GROUP BY 1`)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			b.Fatal(err)
		}
		out[state] = n
	}
	return out
}

func (d *ductor) lastTickError(b *testing.B) string {
	b.Helper()
	var msg string
	_ = d.pool.QueryRow(d.ctx, `SELECT coalesce(errors[array_length(errors, 1)]->>'error', '') FROM river_job
		WHERE kind = 'ductor.tick' AND errors IS NOT NULL ORDER BY id DESC LIMIT 1`).Scan(&msg)
	return msg
}
