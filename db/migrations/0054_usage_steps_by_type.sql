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

CREATE OR REPLACE FUNCTION ductor_usage_attempt_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(coalesce(a.started_at, a.finished_at, now())),
           coalesce(r.definition_key, ''), coalesce(a.step_type, 'unknown'),
           count(*) FILTER (WHERE a.started_at IS NOT NULL),
           coalesce(sum(ductor_step_us(a.started_at, a.finished_at)), 0),
           coalesce(sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input)), 0)
    FROM new_rows a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
    GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH pairs AS (
        SELECT n.tenant_id, n.run_id,
               n.started_at AS n_started, n.finished_at AS n_finished,
               o.started_at AS o_started, o.finished_at AS o_finished,
               coalesce(n.step_type, 'unknown') AS n_type, coalesce(o.step_type, 'unknown') AS o_type,
               ductor_json_bytes(n.output) + ductor_json_bytes(n.error) + ductor_json_bytes(n.input) AS n_bytes,
               ductor_json_bytes(o.output) + ductor_json_bytes(o.error) + ductor_json_bytes(o.input) AS o_bytes
        FROM new_rows n JOIN old_rows o USING (tenant_id, run_id, node, generation, attempt)
        WHERE n.started_at IS DISTINCT FROM o.started_at OR n.finished_at IS DISTINCT FROM o.finished_at
           OR n.output IS DISTINCT FROM o.output OR n.error IS DISTINCT FROM o.error
           OR n.input IS DISTINCT FROM o.input OR n.step_type IS DISTINCT FROM o.step_type),
    changed AS (
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(n_started, n_finished, now())) AS day, n_type AS step_type,
               (n_started IS NOT NULL)::int AS steps, ductor_step_us(n_started, n_finished) AS step_us,
               n_bytes AS bytes
        FROM pairs
        UNION ALL
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(o_started, o_finished, now())), o_type,
               -(o_started IS NOT NULL)::int, -ductor_step_us(o_started, o_finished), -o_bytes
        FROM pairs)
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT c.tenant_id, c.day, coalesce(r.definition_key, ''), c.step_type, sum(c.steps), sum(c.step_us), sum(c.bytes)
    FROM changed c LEFT JOIN run r ON r.tenant_id = c.tenant_id AND r.id = c.run_id
    GROUP BY 1, 2, 3, 4
    HAVING sum(c.steps) <> 0 OR sum(c.step_us) <> 0 OR sum(c.bytes) <> 0;
    RETURN NULL;
END $$;
