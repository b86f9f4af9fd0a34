// Package bench measures Ductor's speed figures next to River's raw no-op
// job rate, measured in the same run on the same database, and prints each
// figure with its goal and its ratio to that baseline.
//
// The package holds only benchmarks:
//
//	go test -run '^$' -bench . -benchtime 1x ./bench          # the full sizes
//	go test -run '^$' -bench . -benchtime 1x -short ./bench   # CI: small sizes
//
// Each test binary starts one durable PostgreSQL cluster of its own with
// app/pgcluster in a temporary directory (fsync and synchronous_commit on,
// as the spec requires), unless BENCH_DATABASE_URL names a database to use
// instead; TEST_DATABASE_URL is deliberately ignored, since the test
// cluster runs with durability off. Every benchmark works in a fresh
// schema, so River's job table starts empty each time.
//
// # Figures
//
//   - BenchmarkRiverRaw: N ductor.noop jobs inserted with InsertMany, then
//     burnt down by a plain River client tuned for throughput as River's
//     own benchmark tunes it (200 workers, 2 ms fetch cooldown). Jobs per
//     second is the baseline every ratio divides by; a benchmark that
//     needs it and runs alone measures it first.
//   - BenchmarkChain: concurrent runs of 10 no-op task steps; steps per
//     second, and the process's peak memory while they run.
//   - BenchmarkHop: one 100-step task chain; the hop from step N's result
//     to step N+1's start, from the database's own timestamps.
//   - BenchmarkTrigger: single-step runs started one after another; the
//     time from the run's creation to its step's start.
//   - BenchmarkTransformChain: a 1,000-step chain of transforms; the ticks
//     it took (the run's record_version) and the time to finish.
//   - BenchmarkScatter: a 10,000-way inline scatter of no-op tasks, end
//     to end: steps per second, ticks and conflicts, peak memory.
//   - BenchmarkScatterTickCost: single ticks applying one child's result,
//     in a scatter of 100 and one of 10,000 children.
//   - BenchmarkFairness: tenant B's single-step runs idle, under tenant A's
//     5,000-way scatter, and under the same flood with the fair tags off
//     (plain FIFO).
//   - BenchmarkCompile: compiling a 1,000-step definition, cold and with
//     the shared expression cache.
//
// Each iteration of a benchmark is one complete round; with -benchtime Nx
// the reported figure is the median of N rounds, and the spread is printed
// beside it. A summary of every figure is printed when the binary ends.
//
// Sizes can be overridden with BENCH_RUNS, BENCH_RAW_JOBS, BENCH_TRIGGERS
// and BENCH_SCATTER; BENCH_MAX_CONNS sets the pool size (default 40).
package bench
