package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// tableStats is a snapshot of the benchmark schema's row writes by table
// and index scans by index (pg_stat_user_tables, pg_stat_user_indexes):
// which tables a step writes, how many of its updates are HOT (no new
// index entries), and which indexes the workload never reads. The server
// flushes these counters about once a second, so a figure may miss the
// last second's work.
type tableStats struct {
	tables  map[string]tableWrites
	indexes map[string]int64 // "table.index" → idx_scan
}

type tableWrites struct{ ins, upd, hot, del int64 }

func tableStatsNow(ctx context.Context, pool *pgxpool.Pool) (tableStats, error) {
	s := tableStats{tables: map[string]tableWrites{}, indexes: map[string]int64{}}
	rows, err := pool.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
		FROM pg_stat_user_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return s, err
	}
	for rows.Next() {
		var name string
		var w tableWrites
		if err := rows.Scan(&name, &w.ins, &w.upd, &w.hot, &w.del); err != nil {
			rows.Close()
			return s, err
		}
		s.tables[name] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s, err
	}
	rows, err = pool.Query(ctx, `SELECT relname || '.' || indexrelname, idx_scan
		FROM pg_stat_user_indexes WHERE schemaname = current_schema()`)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var scans int64
		if err := rows.Scan(&name, &scans); err != nil {
			return s, err
		}
		s.indexes[name] = scans
	}
	return s, rows.Err()
}

// writesPer lists, per unit of work, the rows each table had inserted,
// updated (of which HOT) and deleted between two snapshots.
func writesPer(before, after tableStats, n int) string {
	f := float64(n)
	var parts []string
	for _, name := range sortedKeys(after.tables) {
		a, b := after.tables[name], before.tables[name]
		ins, upd, hot, del := a.ins-b.ins, a.upd-b.upd, a.hot-b.hot, a.del-b.del
		if ins+upd+del == 0 {
			continue
		}
		p := name + ":"
		if ins > 0 {
			p += fmt.Sprintf(" %.2f ins", float64(ins)/f)
		}
		if upd > 0 {
			p += fmt.Sprintf(" %.2f upd (%.0f%% HOT)", float64(upd)/f, 100*float64(hot)/float64(upd))
		}
		if del > 0 {
			p += fmt.Sprintf(" %.2f del", float64(del)/f)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// indexScansPer lists the scans per unit of each index of a table the
// work wrote, and names the indexes it never scanned.
func indexScansPer(before, after tableStats, n int) string {
	written := map[string]bool{}
	for name, a := range after.tables {
		b := before.tables[name]
		written[name] = a.ins+a.upd+a.del > b.ins+b.upd+b.del
	}
	var used, unused []string
	for _, name := range sortedKeys(after.indexes) {
		if !written[strings.SplitN(name, ".", 2)[0]] {
			continue
		}
		if d := after.indexes[name] - before.indexes[name]; d > 0 {
			used = append(used, fmt.Sprintf("%s %.2f", name, float64(d)/float64(n)))
		} else {
			unused = append(unused, name)
		}
	}
	return strings.Join(used, ", ") + "; never scanned: " + strings.Join(unused, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
