package checker

import (
	"cmp"
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

// interval is one run's or execution's time going; what says which it
// is, for a violation to name.
type interval struct {
	group      string
	start, end time.Time
	what       string
}

// FlowOverlaps checks, once runs have ended, that the runs of each key of
// a definition under a concurrency rule never overlapped more than its
// limit (from the commit that started each run to the commit that ended
// it: see spans.go), and that the executions of each pooled step key
// never overlapped more than the pool's limit. A violation names the
// runs or executions going at the first instant there were too many.
func FlowOverlaps(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	for def, limit := range RunLimits {
		spans, err := runSpans(ctx, db, def)
		if err != nil {
			return nil, err
		}
		out = append(out, overlaps(def+" runs of key", spans, limit)...)
	}
	for key, limit := range StepLimits {
		spans, err := intervals(ctx, db, `SELECT flow_key, started_at, finished_at,
			format('execution %s of run %s step %s attempt %s (pid %s)', execution, run_id, node, attempt, pid)
			FROM checker_execution WHERE flow_key = $1 AND finished_at IS NOT NULL`, key)
		if err != nil {
			return nil, err
		}
		out = append(out, overlaps("steps of pool key", spans, limit)...)
	}
	return out, nil
}

// runSpans are the spans of a definition's runs, from the commit that
// started each to the commit that ended it (spans.go), each named with
// its run's own times and how it ended.
func runSpans(ctx context.Context, db *pgxpool.Pool, def string) ([]interval, error) {
	return intervals(ctx, db, `SELECT s.key, s.started_at, s.finished_at,
		format('run %s from %s to %s (created %s, started_at %s, finished_at %s, %s: %s)', s.run_id,
		       s.started_at, s.finished_at, r.created_at, r.state->>'started_at', r.finished_at, s.ended_as, s.reason)
		FROM checker_run_span s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
		WHERE s.definition_key = $1 AND s.finished_at IS NOT NULL`, def)
}

// intervals reads (group, start, end) rows, and a fourth column saying
// what each is when the query has one.
func intervals(ctx context.Context, db *pgxpool.Pool, sql string, arg any) ([]interval, error) {
	rows, err := db.Query(ctx, sql, arg)
	if err != nil {
		return nil, fmt.Errorf("flow overlaps: %w", err)
	}
	defer rows.Close()
	var out []interval
	for rows.Next() {
		var i interval
		dest := []any{&i.group, &i.start, &i.end}
		if len(rows.FieldDescriptions()) > 3 {
			dest = append(dest, &i.what)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// overlaps reports each group whose intervals overlap more than limit
// at some instant, with the intervals going at the first such instant.
func overlaps(what string, spans []interval, limit int) []string {
	var out []string
	for g, p := range peaks(spans) {
		if p.n > limit {
			v := fmt.Sprintf("%s %q: %d at once, limit %d; at %s:", what, g, p.n, limit, p.over.Format(time.RFC3339Nano))
			for _, s := range p.open {
				v += "\n    " + cmp.Or(s.what, "from "+s.start.Format(time.RFC3339Nano)+" to "+s.end.Format(time.RFC3339Nano))
			}
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// Peaks is, for each group, the most of its intervals that overlap at
// one instant (one ending as another starts do not).
func Peaks(spans []interval) map[string]int {
	out := map[string]int{}
	for g, p := range peaks(spans) {
		out[g] = p.n
	}
	return out
}

// peak is a group's most intervals at once: how many, first when, and
// which.
type peak struct {
	n    int
	over time.Time
	open []interval
}

// peaks sweeps each group's intervals in time order. At one instant the
// ends of intervals come before the starts, so that a slot handed over at
// one instant is not counted twice, except the end of an interval that
// starts at that instant too (it went, however briefly, beside the
// others).
func peaks(spans []interval) map[string]peak {
	type edge struct {
		at   time.Time
		rank int // 0 an end, 1 a start, 2 the end of an instant's interval
		span int
	}
	byGroup := map[string][]edge{}
	for i, s := range spans {
		end := 0
		if s.end.Equal(s.start) {
			end = 2
		}
		byGroup[s.group] = append(byGroup[s.group], edge{s.start, 1, i}, edge{s.end, end, i})
	}
	out := map[string]peak{}
	for g, edges := range byGroup {
		sort.Slice(edges, func(i, j int) bool {
			if edges[i].at.Equal(edges[j].at) {
				return edges[i].rank < edges[j].rank
			}
			return edges[i].at.Before(edges[j].at)
		})
		open := map[int]bool{}
		p := peak{}
		for _, e := range edges {
			open[e.span] = e.rank == 1
			if e.rank != 1 {
				delete(open, e.span)
			}
			if len(open) > p.n {
				p = peak{n: len(open), over: e.at}
				for i := range open {
					p.open = append(p.open, spans[i])
				}
				sort.Slice(p.open, func(i, j int) bool { return p.open[i].start.Before(p.open[j].start) })
			}
		}
		out[g] = p
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
