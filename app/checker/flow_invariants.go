package checker

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Flow control's invariants, read from what runs and steps did rather
// than from flow control's own rows: the checker's definitions under a
// concurrency rule key their runs by input.key (RunLimits: definition →
// limit), and its pooled steps name their pool in input.flow_key
// (StepLimits: key → limit), which StepHandler records.
var (
	RunLimits  = map[string]int{"chk-flow": 1}
	StepLimits = map[string]int{"chk-pool": 1}
)

// FlowLimits checks, at this moment, that no key of a definition under
// a concurrency rule has more runs going than its limit: running or
// waiting, or pending once flow control let them go (not held). It holds
// at every commit, so it can be watched while the workload runs.
func FlowLimits(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	for def, limit := range RunLimits {
		found, err := lines(ctx, db, `SELECT format('%s key %s: %s runs going at once (%s), limit %s', definition_key, input->>'key',
		       count(*), string_agg(id::text || ' ' || status, ', '), $2::int)
			FROM run
			WHERE definition_key = $1 AND (status IN ('running', 'waiting')
			      OR status = 'pending' AND NOT coalesce((state->>'held')::boolean, false))
			GROUP BY definition_key, input->>'key'
			HAVING count(*) > $2::int`, def, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// interval is one run's or execution's time going.
type interval struct {
	group      string
	start, end time.Time
}

// FlowOverlaps checks, once runs have ended, that the runs of each key of
// a definition under a concurrency rule never overlapped more than its
// limit (from each run's start to its end), and that the executions of
// each pooled step key never overlapped more than the pool's limit.
func FlowOverlaps(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	for def, limit := range RunLimits {
		spans, err := intervals(ctx, db, `SELECT coalesce(input->>'key', ''), (state->>'started_at')::timestamptz, finished_at
			FROM run WHERE definition_key = $1 AND state->>'started_at' IS NOT NULL AND finished_at IS NOT NULL`, def)
		if err != nil {
			return nil, err
		}
		out = append(out, overlaps(def+" runs of key", spans, limit)...)
	}
	for key, limit := range StepLimits {
		spans, err := intervals(ctx, db, `SELECT flow_key, started_at, finished_at FROM checker_execution
			WHERE flow_key = $1 AND finished_at IS NOT NULL`, key)
		if err != nil {
			return nil, err
		}
		out = append(out, overlaps("steps of pool key", spans, limit)...)
	}
	return out, nil
}

func intervals(ctx context.Context, db *pgxpool.Pool, sql string, arg any) ([]interval, error) {
	rows, err := db.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("flow overlaps: %w", err)
	}
	defer rows.Close()
	var out []interval
	for rows.Next() {
		var i interval
		if err := rows.Scan(&i.group, &i.start, &i.end); err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// overlaps reports each group whose intervals overlap more than limit
// at some instant.
func overlaps(what string, spans []interval, limit int) []string {
	var out []string
	for g, peak := range Peaks(spans) {
		if peak > limit {
			out = append(out, fmt.Sprintf("%s %q: %d at once, limit %d", what, g, peak, limit))
		}
	}
	return out
}

// Peaks is, for each group, the most of its intervals that overlap at
// one instant (one ending as another starts do not).
func Peaks(spans []interval) map[string]int {
	type edge struct {
		at    time.Time
		delta int
	}
	byGroup := map[string][]edge{}
	for _, s := range spans {
		byGroup[s.group] = append(byGroup[s.group], edge{s.start, 1}, edge{s.end, -1})
	}
	out := map[string]int{}
	for g, edges := range byGroup {
		sort.Slice(edges, func(i, j int) bool {
			if edges[i].at.Equal(edges[j].at) {
				return edges[i].delta < edges[j].delta // ends first
			}
			return edges[i].at.Before(edges[j].at)
		})
		n := 0
		for _, e := range edges {
			n += e.delta
			out[g] = max(out[g], n)
		}
	}
	return out
}

// FlowLeaks checks, once every run has ended, that flow control holds
// nothing: no slot of a run that has not ended, no run held back, no
// debounce open on a pending run, and no step its pool held back that
// was never offered again.
func FlowLeaks(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	for _, q := range []string{
		`SELECT format('run %s (%s) holds or waits for a slot of key %s', s.run_id, r.status, s.key)
			FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
			WHERE r.status NOT IN ` + terminal,
		`SELECT format('run %s (%s) still held back: %s', h.run_id, r.status, h.stage)
			FROM flow_hold h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
			WHERE r.status NOT IN ` + terminal,
		`SELECT format('step %s of run %s held back by its pool, never offered again', node, run_id) FROM run_dispatch`,
	} {
		found, err := lines(ctx, db, q)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}
