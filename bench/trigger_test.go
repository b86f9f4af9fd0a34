package bench

import (
	"testing"
	"time"
)

// BenchmarkTrigger starts single-step runs one after another and reports
// the time from the run's creation to its step's start (goal p50 ≤ 15 ms),
// both on the database's clock. created_at is the start of the trigger's
// transaction, so the figure includes the trigger's own commit.
func BenchmarkTrigger(b *testing.B) {
	n := size("BENCH_TRIGGERS", 200, 30)
	d := startDuctor(b, schema(b))
	d.publish(b, taskChain("single", 1))
	var waits []time.Duration
	b.ResetTimer()
	for range b.N {
		for range n {
			waits = append(waits, d.triggerWait(b, "single"))
		}
	}
	b.StopTimer()
	l := latencyOf(waits)
	b.ReportMetric(l.p50, "start-p50-ms")
	b.ReportMetric(l.p99, "start-p99-ms")
	record(b, "trigger", "trigger accepted → first step started: %s (goal p50 ≤ 15 ms: %s)", l, verdict(l.p50 <= 15))
}
