package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ductor/ductor/workers"
)

// raw holds every River raw-rate sample of this binary: the baseline the
// Ductor figures divide by is their median.
var raw struct {
	mu      sync.Mutex
	samples []float64
}

// BenchmarkRiverRaw measures River alone: ductor.noop jobs inserted with
// InsertMany, then worked by a River client tuned for throughput until
// none is left.
func BenchmarkRiverRaw(b *testing.B) {
	n := size("BENCH_RAW_JOBS", 20_000, 5_000)
	var mine []float64
	b.ResetTimer()
	for range b.N {
		rate := measureRaw(b, n)
		mine = append(mine, rate)
		raw.mu.Lock()
		raw.samples = append(raw.samples, rate)
		raw.mu.Unlock()
	}
	s := spreadOf(mine)
	b.ReportMetric(s.median, "jobs/s")
	record(b, "raw", "river raw: %s jobs/s (%d no-op jobs burnt down, %s)", s, n, server.settings)
}

// riverRate is the baseline: the median of the raw samples so far,
// measuring one first when this benchmark runs without BenchmarkRiverRaw.
func riverRate(b *testing.B) float64 {
	b.Helper()
	raw.mu.Lock()
	empty := len(raw.samples) == 0
	raw.mu.Unlock()
	if empty {
		rate := measureRaw(b, size("BENCH_RAW_JOBS", 20_000, 5_000))
		record(b, "raw", "river raw: %.0f jobs/s (measured once for the ratios, %s)", rate, server.settings)
		raw.mu.Lock()
		raw.samples = append(raw.samples, rate)
		raw.mu.Unlock()
	}
	raw.mu.Lock()
	defer raw.mu.Unlock()
	return spreadOf(raw.samples).median
}

// measureRaw inserts n no-op jobs, then times the burn-down from the
// client's start to the last completion event.
func measureRaw(b *testing.B, n int) float64 {
	b.Helper()
	ctx := context.Background()
	pool := schema(b)
	client := rawClient(b, pool)
	const batch = 5_000
	params := make([]river.InsertManyParams, 0, batch)
	for i := range n {
		params = append(params, river.InsertManyParams{Args: workers.NoopArgs{}})
		if len(params) == batch || i == n-1 {
			if _, err := client.InsertMany(ctx, params); err != nil {
				b.Fatal(err)
			}
			params = params[:0]
		}
	}
	// Statistics on the filled table keep River's fetch on its index: on a
	// never-analysed table the plan can be ~10× slower (river.md, appendix).
	if _, err := pool.Exec(ctx, "ANALYZE river_job"); err != nil {
		b.Fatal(err)
	}
	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: n + 1000, Kinds: []river.EventKind{river.EventKindJobCompleted},
	})
	defer cancel()
	before, err := costsNow(ctx, pool)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	timeout := time.After(5 * time.Minute)
	for done := 0; done < n; done++ {
		select {
		case <-events:
		case <-timeout:
			b.Fatalf("only %d of %d jobs completed in 5 minutes", done, n)
		}
	}
	elapsed := time.Since(start)
	after, err := costsNow(ctx, pool)
	if err != nil {
		b.Fatal(err)
	}
	record(b, "raw-cost", "river raw per job: %s", perUnit(before, after, n))
	stopCtx, stop := context.WithTimeout(ctx, 15*time.Second)
	defer stop()
	_ = client.Stop(stopCtx)
	return float64(n) / elapsed.Seconds()
}

// rawClient is River on its own, tuned for throughput as River's own
// benchmark tunes it (many workers, a short fetch cooldown): the baseline
// must not inherit Ductor's per-queue worker bound.
func rawClient(b *testing.B, pool *pgxpool.Pool) *river.Client[pgx.Tx] {
	b.Helper()
	ws := river.NewWorkers()
	river.AddWorker(ws, &workers.NoopWorker{})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:  logger(),
		Workers: ws,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {
			MaxWorkers: 200, FetchCooldown: 2 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return client
}
