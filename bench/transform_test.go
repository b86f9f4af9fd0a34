package bench

import (
	"testing"
	"time"
)

// BenchmarkTransformChain runs a 1,000-step chain of transforms: pure
// steps are evaluated inside the tick, so the run should finish in a
// handful of ticks. Ticks are the run's record_version (one per committed
// tick); the time is from calling Start to seeing the run finished (wall
// clock, polled every 2 ms), since the run's finished_at is the start of
// its last tick, not its commit.
func BenchmarkTransformChain(b *testing.B) {
	const steps, handful = 1000, 5
	d := startDuctor(b, schema(b))
	d.publish(b, transformChain("pure", steps))
	var ticks, millis []float64
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		id, err := d.start("pure", nil)
		if err != nil {
			b.Fatal(err)
		}
		run := d.waitRun(b, id, 5*time.Minute)
		millis = append(millis, float64(time.Since(start))/float64(time.Millisecond))
		ticks = append(ticks, float64(run.RecordVersion))
	}
	b.StopTimer()
	t, ms := spreadOf(ticks), spreadOf(millis)
	b.ReportMetric(t.median, "ticks")
	b.ReportMetric(ms.median, "run-ms")
	record(b, "transform", "1,000-transform chain: %s ticks, %s ms trigger → finished (goal: a handful of ticks, ≤ %d: %s)",
		t, ms, handful, verdict(t.max <= handful))
}
