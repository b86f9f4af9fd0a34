package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/prune"
	"github.com/ductor/ductor/app/store"
)

// runTables are the tables a finished run of a task chain leaves rows in
// (River's completed jobs go with River's own cleaner, after an hour).
var runTables = []string{"run", "run_node", "run_history", "run_attempt", "run_input", "river_job"}

// BenchmarkPrune measures what runs cost in storage and what deleting
// them costs the engine. A tenant runs 3-step task chains; their rows per
// run and bytes per run give the growth per million runs. Those rows are
// then copied until about a million rows of expired runs wait for the
// prune (20,000 in -short mode), and a 50-step chain's hop latency is
// measured idle and again while a prune pass deletes them: the pass must
// leave the hop as it was. It reports the prune's rate in rows and runs a
// second.
func BenchmarkPrune(b *testing.B) {
	runs, targetRows, hopSteps := 2000, 1_000_000, 50
	if testing.Short() {
		runs, targetRows, hopSteps = 100, 20_000, 20
	}
	d := startDuctor(b, schema(b))
	d.publish(b, taskChain("hop", hopSteps))
	old := *d
	old.tenant = d.newTenant(b)
	old.publish(b, taskChain("seed", 3))

	empty := tableSizes(b, d)
	old.startMany(b, "seed", runs)
	old.waitIdle(b, 10*time.Minute)
	grown := tableSizes(b, d)
	perRun := rowsPerRun(b, d, old.tenant, runs)
	reportGrowth(b, empty, grown, perRun, runs)

	copies := max(0, targetRows/max(1, perRun.total)/runs-1)
	copyRuns(b, d, old.tenant, copies)
	expire(b, d, old.tenant)
	waiting := countRows(b, d, old.tenant)

	b.ResetTimer()
	for range b.N {
		idle := d.hopSample(b, hopSteps, 4)
		st, during := d.hopsWhilePruning(b, hopSteps)
		i, p := latencyOf(idle), latencyOf(during)
		b.ReportMetric(float64(st.Rows)/st.Duration.Seconds(), "prune-rows/s")
		b.ReportMetric(p.p99/max(i.p99, 0.001), "hop-p99-ratio")
		record(b, "prune", "prune of %d expired runs (%d rows, waiting %d): %s, %.0f rows/s, %.0f runs/s",
			st.Runs, st.Rows, waiting, st.Duration.Round(time.Millisecond), float64(st.Rows)/st.Duration.Seconds(), float64(st.Runs)/st.Duration.Seconds())
		record(b, "prune-hop", "hop while pruning: %s; idle %s (p50 %.2f×, p99 %.2f× idle; goal: unaffected, within 1.25× and 1.5×: %s)",
			p, i, p.p50/max(i.p50, 0.001), p.p99/max(i.p99, 0.001), verdict(p.p50 <= 1.25*i.p50 && p.p99 <= 1.5*i.p99))
	}
	b.StopTimer()
	if left := countRows(b, d, old.tenant); left != 0 {
		b.Fatalf("%d rows of expired runs left after the prune", left)
	}
	after := tableSizes(b, d)
	if _, err := d.pool.Exec(d.ctx, "VACUUM "+strings.Join(runTables, ", ")); err != nil {
		b.Fatal(err)
	}
	record(b, "prune-size", "table sizes: %s before the runs, %s after %d runs ×%d, %s after the prune, %s after VACUUM (space reused, not returned)",
		mib(empty), mib(grown), runs, copies+1, mib(after), mib(tableSizes(b, d)))
}

// hopsWhilePruning runs hop chains one after another while a prune pass
// deletes the expired runs, and returns the pass and the hops.
func (d *ductor) hopsWhilePruning(b *testing.B, steps int) (prune.Stats, []time.Duration) {
	b.Helper()
	p := prune.New(d.pool, prune.Options{Logger: logger()})
	var st prune.Stats
	var err error
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		st, err = p.Pass(d.ctx)
	})
	var hops []time.Duration
	for first := true; first || !closed(done); first = false {
		hops = append(hops, d.hopSample(b, steps, 1)...)
	}
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return st, hops
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// hopSample runs the hop chain n times and returns its hops.
func (d *ductor) hopSample(b *testing.B, steps, n int) []time.Duration {
	b.Helper()
	var out []time.Duration
	for range n {
		id, err := d.start("hop", nil)
		if err != nil {
			b.Fatal(err)
		}
		d.waitRun(b, id, 5*time.Minute)
		out = append(out, d.hops(b, id, steps).full...)
	}
	return out
}

// perRunRows counts one run's rows by table.
type perRunRows struct {
	byTable map[string]float64
	total   int
}

func rowsPerRun(b *testing.B, d *ductor, tenant store.Tenant, runs int) perRunRows {
	b.Helper()
	out := perRunRows{byTable: map[string]float64{}}
	for table, n := range rowsByTable(b, d, tenant) {
		out.byTable[table] = float64(n) / float64(runs)
		out.total += n
	}
	out.total /= runs
	return out
}

// rowsByTable counts the tenant's rows in each run table (River's jobs by
// their args).
func rowsByTable(b *testing.B, d *ductor, tenant store.Tenant) map[string]int {
	b.Helper()
	out := map[string]int{}
	for _, table := range runTables {
		q := fmt.Sprintf("SELECT count(*) FROM %s WHERE tenant_id = $1", table)
		if table == "river_job" {
			q = "SELECT count(*) FROM river_job WHERE args->>'tenant_id' = $1::text"
		}
		var n int
		if err := d.pool.QueryRow(d.ctx, q, tenant.ID).Scan(&n); err != nil {
			b.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func countRows(b *testing.B, d *ductor, tenant store.Tenant) int {
	b.Helper()
	n := 0
	for table, c := range rowsByTable(b, d, tenant) {
		if table != "river_job" { // River's completed jobs are River's cleaner's
			n += c
		}
	}
	return n
}

// tableSizes is each run table's size on disk, indexes included, in bytes.
func tableSizes(b *testing.B, d *ductor) map[string]int64 {
	b.Helper()
	out := map[string]int64{}
	for _, table := range runTables {
		var n int64
		if err := d.pool.QueryRow(d.ctx, "SELECT pg_total_relation_size($1::regclass)", table).Scan(&n); err != nil {
			b.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func mib(sizes map[string]int64) string {
	var n int64
	for _, s := range sizes {
		n += s
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// reportGrowth records the rows and bytes a run adds, by table, and what
// a million runs add.
func reportGrowth(b *testing.B, before, after map[string]int64, rows perRunRows, runs int) {
	b.Helper()
	tables := append([]string(nil), runTables...)
	sort.Strings(tables)
	var parts []string
	var total float64
	for _, t := range tables {
		per := float64(after[t]-before[t]) / float64(runs)
		total += per
		parts = append(parts, fmt.Sprintf("%s %.1f rows %.0f B", t, rows.byTable[t], per))
	}
	b.ReportMetric(total, "bytes/run")
	record(b, "growth", "storage per finished 3-step run: %.0f B (%.1f GiB a million runs); %s",
		total, total*1e6/(1<<30), strings.Join(parts, ", "))
}

// copyRuns copies the tenant's runs and their rows copies times, each
// copy with ids of its own: many runs in little time, with the rows real
// runs leave.
func copyRuns(b *testing.B, d *ductor, tenant store.Tenant, copies int) {
	b.Helper()
	var ids []uuid.UUID
	rows, err := d.pool.Query(d.ctx, "SELECT id FROM run WHERE tenant_id = $1", tenant.ID)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for k := range copies {
		for _, q := range copyStatements {
			if _, err := d.pool.Exec(d.ctx, q, tenant.ID, ids, fmt.Sprint(k)); err != nil {
				b.Fatalf("copy runs: %v", err)
			}
		}
	}
}

// copyStatements copy a batch of runs ($2) and their rows under new ids
// derived from copy $3.
var copyStatements = []string{
	`INSERT INTO run SELECT (jsonb_populate_record(NULL::run, to_jsonb(r) || jsonb_build_object(
		'id', md5(r.id::text || $3)::uuid, 'root_run_id', md5(r.root_run_id::text || $3)::uuid, 'idempotency_key', NULL))).*
	 FROM run r WHERE r.tenant_id = $1 AND r.id = ANY($2)`,
	copyChild("run_node"), copyChild("run_history"), copyChild("run_attempt"),
	`INSERT INTO run_input OVERRIDING SYSTEM VALUE SELECT (jsonb_populate_record(NULL::run_input, to_jsonb(x) ||
		jsonb_build_object('run_id', md5(x.run_id::text || $3)::uuid))).* FROM run_input x WHERE x.tenant_id = $1 AND x.run_id = ANY($2)`,
}

func copyChild(table string) string {
	return fmt.Sprintf(`INSERT INTO %[1]s SELECT (jsonb_populate_record(NULL::%[1]s, to_jsonb(x) ||
		jsonb_build_object('run_id', md5(x.run_id::text || $3)::uuid))).* FROM %[1]s x WHERE x.tenant_id = $1 AND x.run_id = ANY($2)`, table)
}

// expire makes the tenant keep runs for a day and its runs two days old.
func expire(b *testing.B, d *ductor, tenant store.Tenant) {
	b.Helper()
	if _, err := d.store.TenantSetRetention(context.Background(), tenant.ID, 24*time.Hour); err != nil {
		b.Fatal(err)
	}
	if _, err := d.pool.Exec(d.ctx, `UPDATE run SET created_at = created_at - interval '2 days',
		finished_at = finished_at - interval '2 days' WHERE tenant_id = $1`, tenant.ID); err != nil {
		b.Fatal(err)
	}
}
