package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ductor/ductor/app/usage"
)

// BenchmarkUsageMonth reads a month of every tenant's use, as `ductor
// usage` and billing do, with 10,000 tenants (1,000 in -short mode) that
// each used three definitions on every day of the month, folded, plus a
// few deltas not folded yet. Goal: under 100 ms.
func BenchmarkUsageMonth(b *testing.B) {
	tenants := size("BENCH_USAGE_TENANTS", 10_000, 1_000)
	pool := schema(b)
	ctx := context.Background()
	month := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, err := pool.Exec(ctx, `INSERT INTO tenant (id, slug, name)
		 SELECT gen_random_uuid(), 'u-' || lpad(g::text, 6, '0'), '' FROM generate_series(1, $1::int) g`, tenants); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_delta (tenant_id, day, definition_key, runs_started, runs_succeeded, steps, step_us, events, stored_bytes)
		 SELECT t.id, $1::date + d, 'def-' || k, 10, 9, 100, 1000000, 3, 2048
		 FROM tenant t, generate_series(0, 30) d, generate_series(1, 3) k`, month); err != nil {
		b.Fatal(err)
	}
	svc := usage.New(usage.Config{Pool: pool})
	folded, err := svc.Fold(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_delta (tenant_id, day, steps)
		SELECT id, $1::date + 5, 1 FROM tenant ORDER BY slug LIMIT 100`, month); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE usage_month, usage_delta, tenant`); err != nil {
		b.Fatal(err)
	}
	var samples []float64
	b.ResetTimer()
	for range b.N {
		for range 5 {
			start := time.Now()
			rows, err := svc.Month(ctx, month)
			took := time.Since(start)
			if err != nil || len(rows) != tenants || rows[0].Steps != 93*100+1 {
				b.Fatalf("read %d rows (%v), want %d", len(rows), err, tenants)
			}
			samples = append(samples, float64(took.Microseconds())/1000)
		}
	}
	b.StopTimer()
	slices.Sort(samples)
	p50 := percentile(samples, 0.5)
	b.ReportMetric(p50, "ms/read")
	record(b, "usage-month", "usage: a month of %d tenants (%d deltas folded, 100 not): p50 %.1f ms, max %.1f ms (goal ≤ 100 ms: %s)",
		tenants, folded, p50, samples[len(samples)-1], verdict(p50 <= 100))
}

// meteringTriggers are the statement triggers of migration 0045.
var meteringTriggers = map[string][]string{
	"run":         {"run_usage_insert", "run_usage_update"},
	"run_attempt": {"run_attempt_usage_insert", "run_attempt_usage_update", "run_attempt_usage_delete"},
	"run_input":   {"run_input_usage_insert", "run_input_usage_delete"},
	"event":       {"event_usage_insert"},
	"run_signal":  {"run_signal_usage_insert"},
	"webhook":     {"webhook_usage_update"},
}

// BenchmarkUsageMeteringCost runs the chain benchmark's workload (runs of
// 10 no-op task steps) on two schemas, one with the metering triggers
// switched off, in alternating rounds, and reports what metering adds to
// the CPU (Go and Postgres) of a step. Goal: under 5 %. The two schemas
// share one Postgres and one process, so the figure is as noisy as a
// round's CPU is; run it with -benchtime 4x or more.
func BenchmarkUsageMeteringCost(b *testing.B) {
	const steps = 10
	runs := size("BENCH_RUNS", 500, 50)
	on, off := startDuctor(b, schema(b)), startDuctor(b, schema(b))
	for table, names := range meteringTriggers {
		for _, name := range names {
			if _, err := off.pool.Exec(off.ctx, "ALTER TABLE "+table+" DISABLE TRIGGER "+name); err != nil {
				b.Fatal(err)
			}
		}
	}
	on.publish(b, taskChain("chain", steps))
	off.publish(b, taskChain("chain", steps))
	cpu := map[*ductor]time.Duration{}
	round := func(d *ductor) {
		before, err := costsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		d.startMany(b, "chain", runs)
		d.waitIdle(b, 10*time.Minute)
		after, err := costsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		cpu[d] += after.goCPU - before.goCPU + after.pgCPU - before.pgCPU
	}
	b.ResetTimer()
	for i := range b.N { // alternating which goes first, as the first of a pair runs on a colder cache
		if i%2 == 0 {
			round(off)
			round(on)
		} else {
			round(on)
			round(off)
		}
	}
	b.StopTimer()
	n := time.Duration(b.N * runs * steps)
	perOn, perOff := cpu[on]/n, cpu[off]/n
	overhead := 100 * (float64(perOn) - float64(perOff)) / float64(perOff)
	b.ReportMetric(overhead, "metering-%cpu")
	record(b, "usage-metering", "usage metering: CPU per chain step %s with, %s without (%+.1f %%; goal < 5 %%: %s)",
		perOn, perOff, overhead, verdict(overhead < 5))
}
