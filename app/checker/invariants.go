package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/store"
)

// The invariants are read from the database alone, after the workload (or
// while it runs, for those that hold at every commit): what the engine
// promises must be visible in the rows, whatever the processes believed.
// Each check returns the violations it found, one line each; none is the
// pass.

// terminal lists the statuses a run ends in, for SQL.
const terminal = `('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')`

// Unfinished lists the runs that have not ended: every acknowledged
// trigger, child and successor must end.
func Unfinished(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return lines(ctx, db, `SELECT format('run %s never ended: %s (version %s)', id, status, record_version)
		FROM run WHERE status NOT IN `+terminal+` ORDER BY created_at`)
}

// ScatterCounters checks every scatter node's counters against its
// children's real states: while it runs, succeeded, failed and in_flight
// count its children that succeeded, ended otherwise and are under way;
// once it succeeded, every child is counted. A tick that wrote a stale
// scatter node back (a lost update) breaks this at the commit that did
// it, so the check can run at any moment.
func ScatterCounters(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT s.run_id, s.node, s.state, s.data->'scatter',
		       count(c.node) FILTER (WHERE c.state = 'succeeded'),
		       count(c.node) FILTER (WHERE c.state IN ('failed', 'cancelled', 'skipped')),
		       count(c.node) FILTER (WHERE c.state IN ('ready', 'running', 'waiting'))
		FROM run_node s
		LEFT JOIN run_node c ON c.tenant_id = s.tenant_id AND c.run_id = s.run_id AND c.scatter = s.node
		     AND coalesce((c.data->>'generation')::int, 0) = coalesce((s.data->>'generation')::int, 0)
		WHERE s.scatter IS NULL AND jsonb_typeof(s.data->'scatter') = 'object'
		GROUP BY s.tenant_id, s.run_id, s.node, s.state, s.data`)
	if err != nil {
		return nil, fmt.Errorf("scatter counters: %w", err)
	}
	var out []string
	for rows.Next() {
		var c scatterRow
		var raw []byte
		if err := rows.Scan(&c.run, &c.node, &c.state, &raw, &c.ok, &c.bad, &c.live); err != nil {
			rows.Close()
			return nil, err
		}
		if err := json.Unmarshal(raw, &c.sc); err != nil {
			rows.Close()
			return nil, err
		}
		if v := c.violation(); v != "" {
			out = append(out, v)
		}
	}
	rows.Close()
	return out, rows.Err()
}

type scatterRow struct {
	run           uuid.UUID
	node, state   string
	ok, bad, live int
	sc            engine.ScatterState
}

func (c scatterRow) violation() string {
	counted := c.sc.Succeeded == c.ok && c.sc.Failed == c.bad
	switch c.state {
	case "running", "waiting":
		if counted && c.sc.InFlight == c.live {
			return ""
		}
	case "succeeded":
		if counted && c.live == 0 && c.ok+c.bad == c.sc.Total {
			return ""
		}
	default:
		return "" // failed or cancelled: its children are stopped after it
	}
	return fmt.Sprintf("run %s scatter %s (%s) counts %d succeeded, %d failed, %d in flight of %d; its children: %d succeeded, %d ended otherwise, %d under way",
		c.run, c.node, c.state, c.sc.Succeeded, c.sc.Failed, c.sc.InFlight, c.sc.Total, c.ok, c.bad, c.live)
}

// History checks each run's history: gap-free, as long as the run's
// transition count, and with no node transition recorded twice (the same
// node, generation, attempt, from and to), which is also no node
// succeeding twice for one attempt.
func History(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	gaps, err := lines(ctx, db, `SELECT format('run %s: %s history entries, seq %s to %s, %s transitions counted', r.id,
		       count(h.seq), min(h.seq), max(h.seq), r.transition_count)
		FROM run r LEFT JOIN run_history h ON h.tenant_id = r.tenant_id AND h.run_id = r.id
		GROUP BY r.tenant_id, r.id, r.transition_count
		HAVING count(h.seq) <> r.transition_count OR coalesce(max(h.seq), 0) <> r.transition_count
		    OR coalesce(min(h.seq), 1) <> 1`)
	if err != nil {
		return nil, err
	}
	twice, err := lines(ctx, db, `SELECT format('run %s: node %s %s → %s (generation %s, attempt %s) recorded %s times',
		       run_id, node, from_state, to_state, generation, attempt, count(*))
		FROM run_history WHERE node <> ''
		GROUP BY tenant_id, run_id, node, generation, attempt, from_state, to_state
		HAVING count(*) > 1`)
	return append(gaps, twice...), err
}

// Stalled lists the runs that have not ended and whose history has not
// moved for the given time: in a workload where every run is driven to
// its end at once (no long timers, every signal sent), a run that stops
// moving lost an update that would have moved it (an input consumed and
// then written over, so nothing will ever tick it again). Unfinished
// says the same once the workload is over; Stalled says it while it runs.
func Stalled(ctx context.Context, db *pgxpool.Pool, still time.Duration) ([]string, error) {
	return lines(ctx, db, `SELECT format('run %s (%s) is %s and has not moved for %s s', r.id, r.definition_key, r.status, $1::bigint)
		FROM run r
		WHERE r.status NOT IN `+terminal+`
		  AND coalesce((SELECT max(b.at) FROM run_history_batch b WHERE b.tenant_id = r.tenant_id AND b.run_id = r.id), r.created_at)
		      < ductor_now() - make_interval(secs => $1::bigint)
		ORDER BY r.created_at`, int64(still/time.Second))
}

// Executions lists attempts whose handler ran more than once: at-least-once
// allows that only when the attempt was lost, so with no process killed
// and no lease run out there must be none. It needs StepHandler's table.
func Executions(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return lines(ctx, db, `SELECT format('run %s: node %s attempt %s executed %s times (processes %s)',
		       run_id, node, attempt, count(*), string_agg(pid::text, ', '))
		FROM checker_execution
		GROUP BY run_id, node, attempt, idempotency_key
		HAVING count(*) > 1`)
}

// Inputs lists inputs never consumed by runs that ended: every input
// delivered is drained by a tick (an ended run's too, which discards it).
// The consumption itself is guarded (a consumed input is never consumed
// again), and History catches what a second use of one would have done.
func Inputs(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return lines(ctx, db, `SELECT format('run %s (%s): input %s (%s) never consumed', r.id, r.status, i.id, i.kind)
		FROM run_input i JOIN run r ON r.tenant_id = i.tenant_id AND r.id = i.run_id
		WHERE i.consumed_at IS NULL AND r.status IN `+terminal)
}

// Jobs lists River jobs of Ductor's still waiting or running once every
// run has ended: a job left behind is work lost or about to be done twice.
func Jobs(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return store.New(db).JobsLeft(ctx)
}

// Signals lists acknowledged signals that no run consumed, in chains
// whose last run succeeded.
func Signals(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return lines(ctx, db, `SELECT format('signal %s (%s) of chain %s is %s in run %s (%s)',
		       s.request_id, s.name, s.chain_run_id, s.status, s.run_id, r.status)
		FROM run_signal s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
		WHERE s.status <> 'consumed' AND r.status = 'succeeded'`)
}

// Versions finds a run whose step nodes are not those of the version it
// is on: a node of a step that version does not have (left by a tick
// that decided on another version, or by an upgrade that lost it), or a
// step of the version without a node in a run that has nodes. Every node
// is in the state of one version, the run's.
func Versions(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return lines(ctx, db, `
		SELECT format('run %s on version %s of %s has node %s, which that version does not have', r.id, r.definition_version, r.definition_key, n.node)
		FROM run r
		JOIN definition_version v ON v.tenant_id = r.tenant_id AND v.key = r.definition_key AND v.version = r.definition_version
		JOIN run_node n ON n.tenant_id = r.tenant_id AND n.run_id = r.id AND n.scatter IS NULL
		WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v.manifest->'steps') s WHERE s->>'ref' = n.ref)
		UNION ALL
		SELECT format('run %s on version %s of %s has no node of step %s', r.id, r.definition_version, r.definition_key, s->>'ref')
		FROM run r
		JOIN definition_version v ON v.tenant_id = r.tenant_id AND v.key = r.definition_key AND v.version = r.definition_version
		CROSS JOIN jsonb_array_elements(v.manifest->'steps') s
		WHERE EXISTS (SELECT 1 FROM run_node n WHERE n.tenant_id = r.tenant_id AND n.run_id = r.id)
		  AND NOT EXISTS (SELECT 1 FROM run_node n WHERE n.tenant_id = r.tenant_id AND n.run_id = r.id AND n.node = s->>'ref')`)
}

// Check runs every check that holds once all runs have ended.
func Check(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	var out []string
	for _, check := range []func(context.Context, *pgxpool.Pool) ([]string, error){
		Unfinished, ScatterCounters, History, Executions, Inputs, Jobs, Signals, FlowLimits, FlowOverlaps, FlowLeaks, Versions, Usage,
	} {
		found, err := check(ctx, db)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

func lines(ctx context.Context, db *pgxpool.Pool, sql string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Dump describes a run's rows, for a failure message.
func Dump(ctx context.Context, db *pgxpool.Pool, id uuid.UUID) string {
	var b strings.Builder
	for _, q := range []string{
		`SELECT status, record_version, tick_requested, updated_at FROM run WHERE id = $1`,
		`SELECT node, state, updated_at FROM run_node WHERE run_id = $1 AND scatter IS NULL ORDER BY node`,
		`SELECT node, generation, attempt, started_at, finished_at, lease_until, error FROM run_attempt WHERE run_id = $1 ORDER BY node, attempt`,
		`SELECT id, kind, consumed_at, payload->>'Node' FROM run_input WHERE run_id = $1 ORDER BY id`,
		`SELECT node, attempt, pid, started_at FROM checker_execution WHERE run_id = $1 ORDER BY id`,
		store.RunJobsDump,
	} {
		fmt.Fprintf(&b, "%s\n", q)
		rows, err := db.Query(ctx, q, id)
		if err != nil {
			fmt.Fprintf(&b, "  error: %v\n", err)
			continue
		}
		for rows.Next() {
			vals, _ := rows.Values()
			fmt.Fprintf(&b, "  %v\n", vals)
		}
		rows.Close()
	}
	return b.String()
}
