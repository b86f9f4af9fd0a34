package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/usage"
	"github.com/jackc/pgx/v5"
)

// BenchmarkUsageMonth reads a month of every tenant's use, as `ductor
// usage` and billing do, with 10,000 tenants (1,000 in -short mode) that
// each used three definitions (of a step type each) on every day of the
// month, folded, plus a few deltas not folded yet; with their steps by
// type. Goal: under 100 ms.
func BenchmarkUsageMonth(b *testing.B) {
	tenants := size("BENCH_USAGE_TENANTS", 10_000, 1_000)
	pool := schema(b)
	ctx := context.Background()
	month := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, err := pool.Exec(ctx, `INSERT INTO tenant (id, slug, name)
		 SELECT gen_random_uuid(), 'u-' || lpad(g::text, 6, '0'), '' FROM generate_series(1, $1::int) g`, tenants); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, runs_started, runs_succeeded, steps, step_us, events, stored_bytes)
		 SELECT t.id, $1::date + d, 'def-' || k, (ARRAY['task', 'http', 'transform'])[k], 10, 9, 100, 1000000, 3, 2048
		 FROM tenant t, generate_series(0, 30) d, generate_series(1, 3) k`, month); err != nil {
		b.Fatal(err)
	}
	svc := usage.New(usage.Config{Pool: pool})
	folded, err := svc.Fold(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO usage_delta (tenant_id, day, step_type, steps)
		SELECT id, $1::date + 5, 'task', 1 FROM tenant ORDER BY slug LIMIT 100`, month); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE usage_month, usage_month_step, usage_delta, tenant`); err != nil {
		b.Fatal(err)
	}
	var samples []float64
	b.ResetTimer()
	for range b.N {
		for range 5 {
			start := time.Now()
			rows, err := svc.Month(ctx, month)
			took := time.Since(start)
			if err != nil || len(rows) != tenants || rows[0].Steps != 93*100+1 || rows[0].StepsByType["task"].Steps != 31*100+1 {
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

// meteringTriggers are the metering triggers (migrations 0045, 0047,
// 0053, 0054, 0056).
var meteringTriggers = map[string][]string{
	"run":               {"run_usage_insert", "run_usage_status", "run_input_bytes_delete", "run_input_bytes_update"},
	"run_history_batch": {"run_history_usage_insert", "run_history_usage_delete"},
	"run_attempt":       {"run_attempt_usage_insert", "run_attempt_usage_update", "run_attempt_usage_delete"},
	"run_input":         {"run_input_usage_insert", "run_input_usage_delete"},
	"event":             {"event_usage_insert"},
	"run_signal":        {"run_signal_usage_insert"},
	"webhook":           {"webhook_usage_update"},
}

// BenchmarkUsageMeteringCost runs the chain benchmark's workload (runs of
// 10 no-op task steps) on two schemas, one with the metering triggers
// switched off, in alternating rounds, and reports what metering adds to
// the CPU (Go and Postgres) of a step, two ways. Goal: under 5 %.
//
// The difference between the two schemas is as noisy as a round's CPU
// is, so metering is also measured directly on the schema that meters:
// the time Postgres spends in the metering triggers (pg_stat_user_functions,
// the sessions tracking their PL/pgSQL functions), plus what folding the
// deltas they wrote costs (the same number of deltas folded alone, timed),
// against that schema's CPU per step. And side by side: both schemas run
// the workload at once, each one's Postgres CPU read from its own
// backends, which takes out most of the noise between rounds run one
// after the other.
func BenchmarkUsageMeteringCost(b *testing.B) {
	const steps = 10
	runs := size("BENCH_RUNS", 500, 50)
	on, off := startDuctor(b, schema(b, "track_functions=pl", "application_name=bench_metering_on")),
		startDuctor(b, schema(b, "application_name=bench_metering_off"))
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
	var triggers, active, pgCPU time.Duration
	var deltas int64
	round := func(d *ductor) {
		var t0 meteringStats
		if d == on { // settled before the round's CPU is taken, so the wait is not counted
			t0 = settledMetering(b, d)
		}
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
		if d == on {
			t1 := settledMetering(b, d)
			triggers += t1.triggers - t0.triggers
			deltas += t1.deltas - t0.deltas
			active += t1.active - t0.active
			pgCPU += after.pgCPU - before.pgCPU
		}
	}
	// Side by side: both schemas run the workload at once, under the same
	// load, and each one's Postgres CPU is read from its own backends
	// (application_name); the Go process serves both, and its CPU is
	// shared between them evenly. Which one's runs are started first
	// alternates, as the other's start while the first's run.
	// Each round's difference is kept too: one round can differ from the
	// next by several points, and the median of the rounds is the figure
	// that one slow round does not move.
	side := map[*ductor]time.Duration{}
	var sideGo time.Duration
	var sideRounds []float64
	together := func(first, second *ductor) {
		before := map[*ductor]time.Duration{on: backendCPU(b, on, "bench_metering_on"), off: backendCPU(b, off, "bench_metering_off")}
		g0 := processCPU()
		first.startMany(b, "chain", runs)
		second.startMany(b, "chain", runs)
		first.waitIdle(b, 10*time.Minute)
		second.waitIdle(b, 10*time.Minute)
		g := processCPU() - g0
		dOn := backendCPU(b, on, "bench_metering_on") - before[on]
		dOff := backendCPU(b, off, "bench_metering_off") - before[off]
		sideGo += g
		side[on] += dOn
		side[off] += dOff
		sideRounds = append(sideRounds, sideOverhead(dOn, dOff, g))
	}
	// A round on each first, not measured: every session compiles the
	// metering functions and plans their queries once, which a server's
	// long-lived sessions pay once an hour, not once a round.
	for _, d := range []*ductor{on, off} {
		d.startMany(b, "chain", runs)
		d.waitIdle(b, 10*time.Minute)
	}
	b.ResetTimer()
	for i := range b.N { // alternating which goes first, as the first of a pair runs on a colder cache
		if i%2 == 0 {
			round(off)
			round(on)
			together(on, off)
		} else {
			round(on)
			round(off)
			together(off, on)
		}
	}
	b.StopTimer()
	if side[on] > 0 && side[off] > 0 {
		n := time.Duration(b.N * runs * steps)
		goShare := sideGo / 2 / n
		withOn, withOff := side[on]/n+goShare, side[off]/n+goShare
		pct := sideOverhead(side[on], side[off], sideGo)
		median := spreadOf(sideRounds).median
		b.ReportMetric(pct, "metering-side-%cpu")
		b.ReportMetric(median, "metering-side-median-%cpu")
		record(b, "usage-metering-side", "usage metering, side by side: CPU per chain step %s with, %s without (Postgres %s and %s, Go %s each; %+.1f %%; rounds %s, median %+.1f %%; goal < 5 %%: %s)",
			withOn, withOff, side[on]/n, side[off]/n, goShare, pct, percents(sideRounds), median, verdict(median < 5))
	}
	n := time.Duration(b.N * runs * steps)
	perOn, perOff := cpu[on]/n, cpu[off]/n
	overhead := 100 * (float64(perOn) - float64(perOff)) / float64(perOff)
	b.ReportMetric(overhead, "metering-%cpu")
	record(b, "usage-metering", "usage metering: CPU per chain step %s with, %s without (%+.1f %%; goal < 5 %%: %s)",
		perOn, perOff, overhead, verdict(overhead < 5))
	if triggers == 0 {
		b.Logf("pg_stat_user_functions saw no metering trigger run (track_functions needs a superuser): no direct figure")
		return
	}
	// Over the whole benchmark on that schema: the warm-up round, and the
	// side-by-side rounds as many steps as the others.
	logMeteringFunctions(b, on, int64(2*n)+int64(runs*steps))
	fold := foldCost(b, deltas)
	direct := 100 * float64(triggers/n+fold/n) / float64(perOn)
	b.ReportMetric(direct, "metering-direct-%cpu")
	record(b, "usage-metering-direct", "usage metering, measured directly: triggers %s + fold %s a step (%.2f deltas a step) = %.1f %% of the step's %s (goal < 5 %%: %s)",
		triggers/n, fold/n, float64(deltas)/float64(n), direct, perOn, verdict(direct < 5))
	// The triggers' time is wall time, and so is the statements' active
	// time: their ratio to the server's CPU says how much waiting (for a
	// CPU, a lock) wall time holds, and scales the triggers' time down to
	// CPU by it. Statements that wait on locks inflate that ratio while
	// the triggers take none, so this figure errs low, as the wall-time
	// one errs high.
	if active > 0 && pgCPU > 0 {
		f := float64(active) / float64(pgCPU)
		scaled := time.Duration(float64(triggers) / f)
		est := 100 * float64(scaled/n+fold/n) / float64(perOn)
		b.ReportMetric(est, "metering-cpu-est-%cpu")
		record(b, "usage-metering-cpu", "usage metering, the triggers' time scaled to CPU (statements were active %.1f× the server's CPU): %s + fold %s a step = %.1f %% of the step's %s (goal < 5 %%: %s)",
			f, scaled/n, fold/n, est, perOn, verdict(est < 5))
	}
}

// sideOverhead is what metering adds, in percent, to the CPU of the
// schema that does not meter: each schema's Postgres CPU (on, off) and
// half the Go process's (goCPU serves both).
func sideOverhead(on, off, goCPU time.Duration) float64 {
	return 100 * (float64(on) - float64(off)) / (float64(off) + float64(goCPU)/2)
}

// percents formats figures in percent, as a list.
func percents(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%+.1f", x)
	}
	return strings.Join(parts, ", ")
}

// backendCPU sums the CPU time of the database backends of d's pool
// (those of application name app), from /proc: a backend's own, while it
// lives (the pool keeps its connections through the benchmark).
func backendCPU(b *testing.B, d *ductor, app string) time.Duration {
	b.Helper()
	rows, err := d.pool.Query(d.ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		b.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		b.Fatal(err)
	}
	var ticks int64
	for _, pid := range pids {
		_, own, _ := procTimes(int(pid))
		ticks += own
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

type meteringStats struct {
	triggers time.Duration // in the metering triggers' functions, nested statements included
	deltas   int64         // usage_delta rows written
	active   time.Duration // the database's statements' active time (pg_stat_database)
}

// settledMetering reads the schema's metering statistics once the deltas
// written stop moving: a session reports its statistics up to a second
// after its transactions. (The triggers' time never quite stops: the
// sweep's lease updates fire the attempt trigger a few times a second,
// on no row.)
func settledMetering(b *testing.B, d *ductor) meteringStats {
	b.Helper()
	read := func() meteringStats {
		var ms, activeMS float64
		var st meteringStats
		err := d.pool.QueryRow(d.ctx, `SELECT
			  (SELECT coalesce(sum(total_time), 0) FROM pg_stat_user_functions
			   WHERE schemaname = current_schema() AND funcname LIKE 'ductor\_usage\_%'),
			  (SELECT coalesce(sum(n_tup_ins), 0)::bigint FROM pg_stat_user_tables
			   WHERE schemaname = current_schema() AND relname = 'usage_delta'),
			  (SELECT coalesce(active_time, 0) FROM pg_stat_database WHERE datname = current_database())`).Scan(&ms, &st.deltas, &activeMS)
		if err != nil {
			b.Fatal(err)
		}
		st.triggers = time.Duration(ms * float64(time.Millisecond))
		st.active = time.Duration(activeMS * float64(time.Millisecond))
		return st
	}
	last, same := read(), 0
	tick := time.NewTicker(400 * time.Millisecond)
	defer tick.Stop()
	defer func(start time.Time) {
		if took := time.Since(start); took > 10*time.Second {
			b.Logf("metering statistics took %s to settle", took)
		}
	}(time.Now())
	for end := time.Now().Add(10 * time.Second); same < 4 && time.Now().Before(end); {
		<-tick.C
		now := read()
		if now.deltas == last.deltas {
			same++
		} else {
			same = 0
		}
		last = now
	}
	return last
}

// foldCost times folding n deltas of one tenant, day and definition into
// the rollups, as the coordinator folds a chain's deltas, on a schema of
// its own with nothing else running.
func foldCost(b *testing.B, n int64) time.Duration {
	b.Helper()
	pool := schema(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `WITH t AS (INSERT INTO tenant (id, slug, name) VALUES (gen_random_uuid(), 'fold', '') RETURNING id)
		INSERT INTO usage_delta (tenant_id, day, definition_key, steps, step_us, stored_bytes)
		SELECT t.id, '2026-12-01', 'chain', 1, 100, 64 FROM t, generate_series(1, $1::bigint)`, n); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE usage_delta`); err != nil {
		b.Fatal(err)
	}
	svc := usage.New(usage.Config{Pool: pool})
	start := time.Now()
	folded, err := svc.Fold(ctx)
	took := time.Since(start)
	if err != nil || folded != n {
		b.Fatalf("folded %d of %d deltas: %v", folded, n, err)
	}
	return took
}

// logMeteringFunctions logs each metering function's calls and time a
// step, over the whole benchmark (so a little of the idle sweep's too).
func logMeteringFunctions(b *testing.B, d *ductor, steps int64) {
	b.Helper()
	rows, err := d.pool.Query(d.ctx, `SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions
		WHERE schemaname = current_schema() AND funcname LIKE 'ductor\_%' ORDER BY total_time DESC`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var calls int64
		var total, self float64
		if err := rows.Scan(&name, &calls, &total, &self); err != nil {
			b.Fatal(err)
		}
		b.Logf("%-32s %6.2f calls a step, %5.1f µs a step (%5.1f µs self)", name,
			float64(calls)/float64(steps), 1000*total/float64(steps), 1000*self/float64(steps))
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}
