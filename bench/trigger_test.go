package bench

import (
	"testing"
	"time"
)

// BenchmarkTrigger starts single-step runs one after another and reports
// the time from the trigger's call to its step's handler running (goal
// p50 ≤ 15 ms), on the process's clock, so the figure includes the
// trigger's own commit, and a local step's launch after it.
func BenchmarkTrigger(b *testing.B) {
	n := size("BENCH_TRIGGERS", 200, 30)
	d := startDuctor(b, schema(b))
	d.publish(b, markedOne("single"))
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
