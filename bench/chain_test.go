package bench

import (
	"testing"
	"time"
)

// BenchmarkChain runs many concurrent runs of 10 no-op task steps and
// reports steps per second against River's raw rate (goal ≥ 0.5×: a step
// is a job plus a tick), and the process's peak memory meanwhile.
func BenchmarkChain(b *testing.B) {
	const steps = 10
	baseline := riverRate(b)
	runs := size("BENCH_RUNS", 500, 50)
	d := startDuctor(b, schema(b))
	d.publish(b, taskChain("chain", steps))
	var rates, heaps, rsss []float64
	b.ResetTimer()
	for range b.N {
		before, err := costsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		counts := statementCounts()
		tables, err := tableStatsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		mem := sampleMemory()
		start := time.Now()
		d.startMany(b, "chain", runs)
		d.waitIdle(b, 10*time.Minute)
		elapsed := time.Since(start)
		heap, rss := mem.finish()
		after, err := costsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		record(b, "chain-cost", "chain per step: %s", perUnit(before, after, runs*steps))
		record(b, "chain-statements", "chain statements per step: %s", topStatements(counts, statementCounts(), runs*steps, 30))
		tablesAfter, err := tableStatsNow(d.ctx, d.pool)
		if err != nil {
			b.Fatal(err)
		}
		record(b, "chain-rows", "chain rows written per step: %s", writesPer(tables, tablesAfter, runs*steps))
		record(b, "chain-indexes", "chain index scans per step: %s", indexScansPer(tables, tablesAfter, runs*steps))
		rates = append(rates, float64(runs*steps)/elapsed.Seconds())
		heaps, rsss = append(heaps, heap), append(rsss, rss)
	}
	b.StopTimer()
	rate, heap, rss := spreadOf(rates), spreadOf(heaps), spreadOf(rsss)
	ratio := rate.median / baseline
	b.ReportMetric(rate.median, "steps/s")
	b.ReportMetric(ratio, "x-river")
	b.ReportMetric(rss.median, "peak-rss-MiB")
	b.ReportMetric(heap.median, "peak-heap-MiB")
	record(b, "chain", "chain: %s steps/s = %.2f× River raw %.0f jobs/s (goal ≥ 0.5×: %s; %d runs × %d task steps)",
		rate, ratio, baseline, verdict(ratio >= 0.5), runs, steps)
	record(b, "chain-memory", "chain memory: peak RSS %s MiB, peak Go heap %s MiB (whole process, %d runs × %d steps; spec caps the 10,000-way scatter at 300 MiB)",
		rss, heap, runs, steps)
}
