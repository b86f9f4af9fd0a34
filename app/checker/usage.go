package checker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Usage checks metering against the tables it counts: per tenant and
// UTC day, every figure (runs started and ended by status, steps and step
// time in total, by step type and by definition, events, signals) equals
// what the run, run_attempt, event and run_signal rows say, and each
// tenant's stored bytes equal the bytes its rows hold. It holds at every
// commit (the counting is done by the statements that write), so it can
// run at any moment, and once a
// workload is over it catches a delta lost or counted twice. A prune
// deletes what the counts of events count, so after one only
// StoredBytes holds.
func Usage(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return usageDiff(ctx, db, func(string) bool { return true })
}

// StoredBytes is Usage's check of the stored bytes alone.
func StoredBytes(ctx context.Context, db *pgxpool.Pool) ([]string, error) {
	return usageDiff(ctx, db, func(k string) bool { return strings.HasSuffix(k, "/stored_bytes") })
}

func usageDiff(ctx context.Context, db *pgxpool.Pool, keep func(string) bool) ([]string, error) {
	want, err := readFigures(ctx, db, fromTables)
	if err != nil {
		return nil, err
	}
	got, err := readFigures(ctx, db, fromUsage)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, v := range want {
		if keep(k) && got[k] != v {
			out = append(out, fmt.Sprintf("usage %s: metered %d, the tables say %d", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; keep(k) && !ok {
			out = append(out, fmt.Sprintf("usage %s: metered %d, the tables say 0", k, v))
		}
	}
	return out, nil
}

// readFigures reads (tenant, day, metric, value) rows into figures keyed
// "tenant/day/metric", zeros left out.
func readFigures(ctx context.Context, db *pgxpool.Pool, sql string) (map[string]int64, error) {
	rows, err := db.Query(ctx, sql)
	if err != nil {
		return nil, fmt.Errorf("usage check: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var tenant uuid.UUID
		var day time.Time
		var metric string
		var v int64
		if err := rows.Scan(&tenant, &day, &metric, &v); err != nil {
			return nil, fmt.Errorf("usage check: %w", err)
		}
		if v != 0 {
			out[fmt.Sprintf("%s/%s/%s", tenant, day.Format(time.DateOnly), metric)] = v
		}
	}
	return out, rows.Err()
}

// fromTables is what the database's own tables hold, per tenant and day.
const fromTables = `
SELECT tenant_id, ductor_utc_day(created_at), 'runs_started', count(*) FROM run GROUP BY 1, 2
UNION ALL
SELECT tenant_id, ductor_utc_day(finished_at), 'runs_' || status, count(*) FROM run
WHERE status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated') GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, ductor_utc_day(started_at), 'steps', count(*) FROM run_attempt WHERE started_at IS NOT NULL GROUP BY 1, 2
UNION ALL
SELECT tenant_id, ductor_utc_day(started_at), 'step_us', sum(ductor_step_us(started_at, finished_at))::bigint
FROM run_attempt WHERE started_at IS NOT NULL GROUP BY 1, 2
UNION ALL
SELECT tenant_id, ductor_utc_day(started_at), 'steps.' || coalesce(step_type, 'unknown'), count(*)
FROM run_attempt WHERE started_at IS NOT NULL GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, ductor_utc_day(started_at), 'step_us.' || coalesce(step_type, 'unknown'),
       sum(ductor_step_us(started_at, finished_at))::bigint
FROM run_attempt WHERE started_at IS NOT NULL GROUP BY 1, 2, 3
UNION ALL
SELECT a.tenant_id, ductor_utc_day(a.started_at), 'steps@' || r.definition_key, count(*)
FROM run_attempt a JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
WHERE a.started_at IS NOT NULL GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, ductor_utc_day(created_at), 'events', count(*) FROM event WHERE name NOT LIKE 'ductor.%' GROUP BY 1, 2
UNION ALL
SELECT tenant_id, ductor_utc_day(created_at), 'signals', count(*) FROM run_signal GROUP BY 1, 2
UNION ALL
SELECT tenant_id, '2000-01-01'::date, 'stored_bytes', sum(b)::bigint FROM (
    SELECT tenant_id, ductor_json_bytes(output) + ductor_json_bytes(error) + ductor_json_bytes(input) AS b FROM run_attempt
    UNION ALL SELECT tenant_id, ductor_json_bytes(payload) FROM run_input
    UNION ALL SELECT tenant_id, ductor_json_bytes(input) FROM run
    UNION ALL SELECT tenant_id, ductor_json_bytes(transitions) FROM run_history_batch) s GROUP BY 1`

// fromUsage is what metering counted: the rollups plus the deltas not
// folded yet (stored bytes over all time, as the tables hold them now).
const fromUsage = `
WITH u AS (
    SELECT tenant_id, day, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out,
           runs_terminated, steps, step_us, events, signals, stored_bytes FROM usage_day
    UNION ALL
    SELECT tenant_id, day, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out,
           runs_terminated, steps, step_us, events, signals, stored_bytes FROM usage_delta),
d AS (
    SELECT tenant_id, day, sum(runs_started) rs, sum(runs_succeeded) su, sum(runs_failed) fa,
           sum(runs_cancelled) ca, sum(runs_timed_out) tio, sum(runs_terminated) te, sum(steps) st,
           sum(step_us) us, sum(events) ev, sum(signals) si
    FROM u GROUP BY 1, 2)
SELECT tenant_id, day, m, v::bigint FROM d, LATERAL (VALUES ('runs_started', rs), ('runs_succeeded', su),
    ('runs_failed', fa), ('runs_cancelled', ca), ('runs_timed_out', tio), ('runs_terminated', te),
    ('steps', st), ('step_us', us), ('events', ev), ('signals', si)) AS x(m, v)
UNION ALL
SELECT tenant_id, day, m || '.' || step_type, sum(v)::bigint FROM (
    SELECT tenant_id, day, step_type, steps, step_us FROM usage_day_step
    UNION ALL
    SELECT tenant_id, day, step_type, steps, step_us FROM usage_delta WHERE step_type <> '') s,
    LATERAL (VALUES ('steps', steps), ('step_us', step_us)) AS x(m, v)
GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, day, 'steps@' || definition_key, sum(steps)::bigint FROM (
    SELECT tenant_id, day, definition_key, steps FROM usage_day
    UNION ALL
    SELECT tenant_id, day, definition_key, steps FROM usage_delta) s
GROUP BY 1, 2, 3
UNION ALL
SELECT tenant_id, '2000-01-01'::date, 'stored_bytes', sum(stored_bytes)::bigint FROM u GROUP BY 1`

// assertStoredBytesMatchTables checks the stored bytes alone: the other
// figures count what happened, which a prune does not take back.
