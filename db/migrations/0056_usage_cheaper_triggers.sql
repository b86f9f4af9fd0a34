-- Two metering triggers made cheaper.
--
-- The attempt update trigger's query is static again, its plan kept for
-- the session like the other metering triggers', and made with nested
-- loops off, so the plan made for the first statement's rows joins any
-- number of them in one pass (a hash or merge join of the old and new
-- rows). Planned for every statement (EXECUTE, since 0054) it cost more
-- to plan than to run: about half of the time metering spent in it.
--
-- A run's insert is counted by a row trigger: runs are inserted one a
-- statement, and a statement trigger copied the run's row, state and
-- all, into a transition table for one delta (about 100 µs of CPU a run
-- more than the row trigger, measured with pgbench on the run table).
-- The common case, a run that starts on the day it is created, writes
-- its start and its input's bytes as one row without aggregating.
CREATE OR REPLACE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql SET enable_nestloop = off AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    WITH pairs AS (
        SELECT n.tenant_id, n.run_id, coalesce(n.definition_key, o.definition_key) AS definition_key,
               n.started_at AS n_started, n.finished_at AS n_finished,
               o.started_at AS o_started, o.finished_at AS o_finished,
               coalesce(n.step_type, 'unknown') AS n_type, coalesce(o.step_type, 'unknown') AS o_type,
               CASE WHEN n.output IS DISTINCT FROM o.output THEN ductor_json_bytes(n.output) - ductor_json_bytes(o.output) ELSE 0 END
             + CASE WHEN n.error IS DISTINCT FROM o.error THEN ductor_json_bytes(n.error) - ductor_json_bytes(o.error) ELSE 0 END
             + CASE WHEN n.input IS DISTINCT FROM o.input THEN ductor_json_bytes(n.input) - ductor_json_bytes(o.input) ELSE 0 END AS bytes
        FROM new_rows n JOIN old_rows o USING (tenant_id, run_id, node, generation, attempt)
        WHERE n.started_at IS DISTINCT FROM o.started_at OR n.finished_at IS DISTINCT FROM o.finished_at
           OR n.output IS DISTINCT FROM o.output OR n.error IS DISTINCT FROM o.error
           OR n.input IS DISTINCT FROM o.input OR n.step_type IS DISTINCT FROM o.step_type),
    changed AS (
        SELECT tenant_id, run_id, definition_key, ductor_utc_day(coalesce(n_started, n_finished, now())) AS day, n_type AS step_type,
               (n_started IS NOT NULL)::int AS steps, ductor_step_us(n_started, n_finished) AS step_us, bytes
        FROM pairs
        UNION ALL
        SELECT tenant_id, run_id, definition_key, ductor_utc_day(coalesce(o_started, o_finished, now())), o_type,
               -(o_started IS NOT NULL)::int, -ductor_step_us(o_started, o_finished), 0
        FROM pairs),
    per_run AS (
        SELECT tenant_id, run_id, definition_key, day, step_type, sum(steps) AS steps, sum(step_us) AS step_us, sum(bytes) AS bytes
        FROM changed GROUP BY 1, 2, 3, 4, 5
        HAVING sum(steps) <> 0 OR sum(step_us) <> 0 OR sum(bytes) <> 0)
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT p.tenant_id, p.day,
           coalesce(p.definition_key, (SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           p.step_type, sum(p.steps), sum(p.step_us), sum(p.bytes)
    FROM per_run p GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_run_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    final boolean := NEW.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated');
    bytes bigint := ductor_json_bytes(NEW.input);
BEGIN
    IF NOT final AND ductor_utc_day(NEW.created_at) = ductor_utc_day(now()) THEN
        INSERT INTO usage_delta (tenant_id, day, definition_key, runs_started, stored_bytes)
        VALUES (NEW.tenant_id, ductor_utc_day(NEW.created_at), NEW.definition_key, 1, bytes);
        RETURN NULL;
    END IF;
    INSERT INTO usage_delta (tenant_id, day, definition_key, runs_started, runs_succeeded, runs_failed,
                             runs_cancelled, runs_timed_out, runs_terminated, stored_bytes)
    SELECT NEW.tenant_id, v.day, NEW.definition_key, sum(v.started), sum(v.succeeded), sum(v.failed),
           sum(v.cancelled), sum(v.timed_out), sum(v.terminated), sum(v.bytes)
    FROM (VALUES
        (true, ductor_utc_day(NEW.created_at), 1, 0, 0, 0, 0, 0, 0::bigint),
        (final, ductor_utc_day(coalesce(NEW.finished_at, NEW.created_at)), 0,
         (NEW.status = 'succeeded')::int, (NEW.status = 'failed')::int, (NEW.status = 'cancelled')::int,
         (NEW.status = 'timed_out')::int, (NEW.status = 'terminated')::int, 0::bigint),
        (NEW.input IS NOT NULL, ductor_utc_day(now()), 0, 0, 0, 0, 0, 0, bytes)
    ) AS v(keep, day, started, succeeded, failed, cancelled, timed_out, terminated, bytes)
    WHERE v.keep
    GROUP BY v.day;
    RETURN NULL;
END $$;

DROP TRIGGER run_usage_insert ON run;
CREATE TRIGGER run_usage_insert AFTER INSERT ON run FOR EACH ROW EXECUTE FUNCTION ductor_usage_run_insert();
