package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// statements counts every statement any benchmark pool sends, in all and
// by name, and roundTrips the round trips that carried them: a pgx tracer,
// so statements per step are measured rather than guessed. A statement
// queued in a batch counts as a statement; the batch is one round trip.
var (
	statements atomic.Int64
	roundTrips atomic.Int64
	byName     sync.Map // statement name → *atomic.Int64
)

type countingTracer struct{}

func (countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	roundTrips.Add(1)
	countStatement(data.SQL)
	return ctx
}

func (countingTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	roundTrips.Add(1)
	return ctx
}

func (countingTracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	countStatement(data.SQL)
}

func (countingTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func countStatement(sql string) {
	statements.Add(1)
	n, _ := byName.LoadOrStore(statementName(sql), new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// statementName is a sqlc query's name (River's and Ductor's queries both
// start with "-- name: X"), or the statement's first words.
func statementName(sql string) string {
	sql = strings.TrimSpace(sql)
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		return strings.Fields(rest)[0]
	}
	f := strings.Fields(sql)
	return strings.Join(f[:min(len(f), 2)], " ")
}

// statementCounts snapshots the counts by name.
func statementCounts() map[string]int64 {
	out := map[string]int64{}
	byName.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// topStatements lists the statements sent most per unit between two
// snapshots of statementCounts.
func topStatements(before, after map[string]int64, n, top int) string {
	type count struct {
		name string
		n    int64
	}
	var cs []count
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			cs = append(cs, count{k, d})
		}
	}
	slices.SortFunc(cs, func(a, b count) int { return cmp.Compare(b.n, a.n) })
	var parts []string
	for _, c := range cs[:min(len(cs), top)] {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.name, float64(c.n)/float64(n)))
	}
	return strings.Join(parts, ", ")
}

func (countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// tracer is what a pool's tracer is to Ductor: a query and a batch tracer.
type tracer interface {
	pgx.QueryTracer
	pgx.BatchTracer
}

// bothTracers counts statements (countingTracer) without taking the
// place of the tracer store.ConfigurePool gave the pool (the one that
// drops connections a read-only server refused).
type bothTracers struct {
	count countingTracer
	next  pgx.QueryTracer
}

func (t bothTracers) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	ctx = t.count.TraceQueryStart(ctx, c, d)
	if t.next != nil {
		ctx = t.next.TraceQueryStart(ctx, c, d)
	}
	return ctx
}

func (t bothTracers) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, c, d)
	}
}

func (t bothTracers) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	ctx = t.count.TraceBatchStart(ctx, c, d)
	if n, ok := t.next.(tracer); ok {
		ctx = n.TraceBatchStart(ctx, c, d)
	}
	return ctx
}

func (t bothTracers) TraceBatchQuery(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	t.count.TraceBatchQuery(ctx, c, d)
	if n, ok := t.next.(tracer); ok {
		n.TraceBatchQuery(ctx, c, d)
	}
}

func (t bothTracers) TraceBatchEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchEndData) {
	if n, ok := t.next.(tracer); ok {
		n.TraceBatchEnd(ctx, c, d)
	}
}

// costs is a snapshot of what the work so far has cost: statements sent,
// transactions committed, WAL written, and CPU spent by this process and
// by the cluster's server processes (only when this binary started it).
type costs struct {
	statements int64
	roundTrips int64
	commits    int64
	walBytes   float64
	goCPU      time.Duration
	pgCPU      time.Duration
}

func costsNow(ctx context.Context, pool *pgxpool.Pool) (costs, error) {
	c := costs{statements: statements.Load(), roundTrips: roundTrips.Load(), goCPU: processCPU(), pgCPU: serverCPU()}
	err := pool.QueryRow(ctx, `SELECT xact_commit, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.commits, &c.walBytes)
	return c, err
}

// perUnit is what each of n units of work cost between two snapshots.
// pg_stat_database lags by up to a second, so commits are approximate.
func perUnit(before, after costs, n int) string {
	f := float64(n)
	s := fmt.Sprintf("%.2f statements in %.2f round trips, %.2f commits, %.1f KiB WAL, %.2f ms Go CPU",
		float64(after.statements-before.statements)/f, float64(after.roundTrips-before.roundTrips)/f,
		float64(after.commits-before.commits)/f,
		(after.walBytes-before.walBytes)/f/1024, float64(after.goCPU-before.goCPU)/f/float64(time.Millisecond))
	if after.pgCPU > 0 {
		s += fmt.Sprintf(", %.2f ms Postgres CPU", float64(after.pgCPU-before.pgCPU)/f/float64(time.Millisecond))
	}
	return s
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU sums the CPU time of the postmaster, its live children and
// the children it reaped, from /proc (clock ticks of 10 ms).
func serverCPU() time.Duration {
	if server.cluster == nil {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(server.cluster.Dir(), "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pm, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	entries, _ := os.ReadDir("/proc")
	var ticks int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, own, reaped := procTimes(pid)
		switch {
		case pid == pm:
			ticks += own + reaped
		case ppid == pm:
			ticks += own
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// procTimes reads a process's parent, its own CPU ticks and its reaped
// children's, from /proc/PID/stat.
func procTimes(pid int) (ppid int, own, reaped int64) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	if len(f) < 15 {
		return 0, 0, 0
	}
	num := func(i int) int64 { n, _ := strconv.ParseInt(f[i-3], 10, 64); return n }
	return int(num(4)), num(14) + num(15), num(16) + num(17)
}
