-- An attempt and a history batch carry their run's definition, written
-- with them, so that the metering triggers read it from the rows they
-- meter instead of looking the run up. A lookup by the run's key from a
-- trigger's query cost most of what metering cost: PL/pgSQL plans the
-- query once a session, and a plan made while run was small could take
-- run_subject_idx (tenant_id first, id fourth) for the lookup and scan
-- the tenant's every run for each run metered, for the rest of the
-- session. Rows written before this migration (definition_key NULL) are
-- still looked up. The insert triggers aggregate their rows once, not
-- once a run and again a definition as the lookup needed.
ALTER TABLE run_attempt ADD COLUMN definition_key text;
ALTER TABLE run_history_batch ADD COLUMN definition_key text;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    INSERT INTO usage_delta (tenant_id, day, definition_key, step_type, steps, step_us, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(coalesce(a.started_at, a.finished_at, now())),
           coalesce(a.definition_key, (SELECT r.definition_key FROM run r WHERE r.tenant_id = a.tenant_id AND r.id = a.run_id), ''),
           coalesce(a.step_type, 'unknown'),
           count(*) FILTER (WHERE a.started_at IS NOT NULL),
           coalesce(sum(ductor_step_us(a.started_at, a.finished_at)), 0),
           coalesce(sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input)), 0)
    FROM new_rows a GROUP BY 1, 2, 3, 4;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH per_run AS (
        SELECT tenant_id, run_id, definition_key,
               sum(ductor_json_bytes(output) + ductor_json_bytes(error) + ductor_json_bytes(input)) AS bytes
        FROM old_rows GROUP BY 1, 2, 3)
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT p.tenant_id, ductor_utc_day(now()),
           coalesce(p.definition_key, (SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           -sum(p.bytes)
    FROM per_run p GROUP BY 1, 3
    HAVING sum(p.bytes) <> 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_history_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT h.tenant_id, ductor_utc_day(now()),
           coalesce(h.definition_key, (SELECT r.definition_key FROM run r WHERE r.tenant_id = h.tenant_id AND r.id = h.run_id), ''),
           sum(ductor_json_bytes(h.transitions))
    FROM new_rows h GROUP BY 1, 3;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_history_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A batch written before its definition was (NULL) whose run is gone
    -- already (its delete cascades here) counts for the tenant.
    WITH per_run AS (
        SELECT tenant_id, run_id, definition_key, sum(ductor_json_bytes(transitions)) AS bytes
        FROM old_rows GROUP BY 1, 2, 3)
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT p.tenant_id, ductor_utc_day(now()),
           coalesce(p.definition_key, (SELECT r.definition_key FROM run r WHERE r.tenant_id = p.tenant_id AND r.id = p.run_id), ''),
           -sum(p.bytes)
    FROM per_run p GROUP BY 1, 3;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    EXECUTE $q$
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
    FROM per_run p GROUP BY 1, 2, 3, 4
    $q$;
    RETURN NULL;
END $$;
