-- Steps are counted by step type as well as in total: an attempt records
-- the type it executes (a scatter child the type of its template), and
-- the metering triggers of run_attempt carry it into usage_delta. The
-- fold adds the deltas of each type into usage_day_step and
-- usage_month_step beside the totals of usage_day and usage_month, so
-- that the steps of every type add up to steps, and their step time to
-- step_us. An attempt written before its type was known (an attempt row
-- from before this migration) counts as 'unknown', and moves to its type
-- when the type is written.
ALTER TABLE run_attempt ADD COLUMN step_type text;

ALTER TABLE usage_delta ADD COLUMN step_type text NOT NULL DEFAULT '';

CREATE TABLE usage_day_step (
    tenant_id      uuid   NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    day            date   NOT NULL,
    definition_key text   NOT NULL,
    step_type      text   NOT NULL,
    steps          bigint NOT NULL DEFAULT 0,
    step_us        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, day, definition_key, step_type)
);

CREATE TABLE usage_month_step (
    tenant_id uuid   NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    month     date   NOT NULL,
    step_type text   NOT NULL,
    steps     bigint NOT NULL DEFAULT 0,
    step_us   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, month, step_type)
);

CREATE INDEX usage_month_step_month_idx ON usage_month_step (month);

-- What was counted before types were: 'unknown'.
INSERT INTO usage_day_step (tenant_id, day, definition_key, step_type, steps, step_us)
SELECT tenant_id, day, definition_key, 'unknown', steps, step_us FROM usage_day
WHERE steps <> 0 OR step_us <> 0;
INSERT INTO usage_month_step (tenant_id, month, step_type, steps, step_us)
SELECT tenant_id, month, 'unknown', steps, step_us FROM usage_month
WHERE steps <> 0 OR step_us <> 0;
UPDATE usage_delta SET step_type = 'unknown' WHERE steps <> 0 OR step_us <> 0;

-- A run's definition is looked up once a run, by its key (a scalar
-- subquery is always an index lookup): PL/pgSQL keeps the plan of a
-- trigger's static query from its first run in a session, and a join
-- planned for a statement of many rows goes on scanning the whole run
-- table for every later statement of one.
CREATE OR REPLACE FUNCTION ductor_usage_attempt_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    WITH per_run AS (
        SELECT a.tenant_id, a.run_id, ductor_utc_day(coalesce(a.started_at, a.finished_at, now())) AS day,
               coalesce(a.step_type, 'unknown') AS step_type,
               count(*) FILTER (WHERE a.started_at IS NOT NULL) AS steps,
               coalesce(sum(ductor_step_us(a.started_at, a.finished_at)), 0) AS step_us,
               coalesce(sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input)), 0) AS bytes
        FROM new_rows a GROUP BY 1, 2, 3, 4)
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT p.tenant_id, p.day,
           coalesce((SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           p.step_type, sum(p.steps), sum(p.step_us), sum(p.bytes)
    FROM per_run p GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH per_run AS (
        SELECT tenant_id, run_id, sum(ductor_json_bytes(output) + ductor_json_bytes(error) + ductor_json_bytes(input)) AS bytes
        FROM old_rows GROUP BY 1, 2)
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT p.tenant_id, ductor_utc_day(now()),
           coalesce((SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           -sum(p.bytes)
    FROM per_run p GROUP BY 1, 3
    HAVING sum(p.bytes) <> 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_history_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH per_run AS (
        SELECT tenant_id, run_id, sum(ductor_json_bytes(transitions)) AS bytes FROM new_rows GROUP BY 1, 2)
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT p.tenant_id, ductor_utc_day(now()),
           coalesce((SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           sum(p.bytes)
    FROM per_run p GROUP BY 1, 3;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_history_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The run may be gone already (its delete cascades here): its
    -- definition is then not known, and the bytes are the tenant's.
    WITH per_run AS (
        SELECT tenant_id, run_id, sum(ductor_json_bytes(transitions)) AS bytes FROM old_rows GROUP BY 1, 2)
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT p.tenant_id, ductor_utc_day(now()),
           coalesce((SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           -sum(p.bytes)
    FROM per_run p GROUP BY 1, 3;
    RETURN NULL;
END $$;

-- The update trigger's query is planned for each statement (EXECUTE),
-- with the sizes of that statement's transition tables: PL/pgSQL keeps
-- the plan of a static query from its first run in a session, and that
-- is mostly the sweep's statement that changes no row, whose plan joins
-- the transition tables row by row (a tick's statement of a few hundred
-- attempts then took tens of milliseconds in the trigger). A statement
-- that changed no row returns at once. The bytes of a value are taken
-- only when it changed (a finished attempt's kept input is not read
-- again).
CREATE OR REPLACE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    EXECUTE $q$
    WITH pairs AS (
        SELECT n.tenant_id, n.run_id,
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
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(n_started, n_finished, now())) AS day, n_type AS step_type,
               (n_started IS NOT NULL)::int AS steps, ductor_step_us(n_started, n_finished) AS step_us, bytes
        FROM pairs
        UNION ALL
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(o_started, o_finished, now())), o_type,
               -(o_started IS NOT NULL)::int, -ductor_step_us(o_started, o_finished), 0
        FROM pairs),
    per_run AS (
        SELECT tenant_id, run_id, day, step_type, sum(steps) AS steps, sum(step_us) AS step_us, sum(bytes) AS bytes
        FROM changed GROUP BY 1, 2, 3, 4
        HAVING sum(steps) <> 0 OR sum(step_us) <> 0 OR sum(bytes) <> 0)
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT p.tenant_id, p.day,
           coalesce((SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           p.step_type, sum(p.steps), sum(p.step_us), sum(p.bytes)
    FROM per_run p GROUP BY 1, 2, 3, 4
    $q$;
    RETURN NULL;
END $$;

-- A run's insert is metered by one trigger and one statement (its start,
-- a final status it is inserted with, and its input's bytes) instead of
-- two triggers and three statements. The attempt insert trigger, which
-- every upsert of attempts fires with only the rows it inserted (often
-- none), returns at once when there are none.
DROP TRIGGER run_input_bytes_insert ON run;
DROP FUNCTION ductor_usage_run_input_insert();

CREATE OR REPLACE FUNCTION ductor_usage_run_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, runs_started, runs_succeeded, runs_failed,
                             runs_cancelled, runs_timed_out, runs_terminated, stored_bytes)
    SELECT tenant_id, day, definition_key, sum(started), sum(succeeded), sum(failed), sum(cancelled),
           sum(timed_out), sum(terminated), sum(bytes)
    FROM (
        SELECT tenant_id, ductor_utc_day(created_at) AS day, definition_key, 1 AS started, 0 AS succeeded,
               0 AS failed, 0 AS cancelled, 0 AS timed_out, 0 AS terminated, 0::bigint AS bytes
        FROM new_rows
        UNION ALL
        SELECT tenant_id, ductor_utc_day(coalesce(finished_at, created_at)), definition_key, 0,
               (status = 'succeeded')::int, (status = 'failed')::int, (status = 'cancelled')::int,
               (status = 'timed_out')::int, (status = 'terminated')::int, 0
        FROM new_rows WHERE status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
        UNION ALL
        SELECT tenant_id, ductor_utc_day(now()), definition_key, 0, 0, 0, 0, 0, 0, ductor_json_bytes(input)
        FROM new_rows WHERE input IS NOT NULL) x
    GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;
