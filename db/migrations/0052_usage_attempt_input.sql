-- Stored bytes count an attempt's kept input (0050) beside its output and
-- error: the metering triggers of run_attempt, as 0045 and 0049 wrote
-- them, with the input's bytes added.
CREATE OR REPLACE FUNCTION ductor_usage_attempt_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, steps, step_us, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(coalesce(a.started_at, a.finished_at, now())),
           coalesce(r.definition_key, ''),
           count(*) FILTER (WHERE a.started_at IS NOT NULL),
           coalesce(sum(ductor_step_us(a.started_at, a.finished_at)), 0),
           coalesce(sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input)), 0)
    FROM new_rows a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
    GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH pairs AS (
        SELECT n.tenant_id, n.run_id,
               n.started_at AS n_started, n.finished_at AS n_finished,
               o.started_at AS o_started, o.finished_at AS o_finished,
               ductor_json_bytes(n.output) + ductor_json_bytes(n.error) + ductor_json_bytes(n.input) AS n_bytes,
               ductor_json_bytes(o.output) + ductor_json_bytes(o.error) + ductor_json_bytes(o.input) AS o_bytes
        FROM new_rows n JOIN old_rows o USING (tenant_id, run_id, node, generation, attempt)
        WHERE n.started_at IS DISTINCT FROM o.started_at OR n.finished_at IS DISTINCT FROM o.finished_at
           OR n.output IS DISTINCT FROM o.output OR n.error IS DISTINCT FROM o.error
           OR n.input IS DISTINCT FROM o.input),
    changed AS (
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(n_started, n_finished, now())) AS day,
               (n_started IS NOT NULL)::int AS steps, ductor_step_us(n_started, n_finished) AS step_us,
               n_bytes AS bytes
        FROM pairs
        UNION ALL
        SELECT tenant_id, run_id, ductor_utc_day(coalesce(o_started, o_finished, now())),
               -(o_started IS NOT NULL)::int, -ductor_step_us(o_started, o_finished), -o_bytes
        FROM pairs)
    INSERT INTO usage_delta (tenant_id, day, definition_key, steps, step_us, stored_bytes)
    SELECT c.tenant_id, c.day, coalesce(r.definition_key, ''), sum(c.steps), sum(c.step_us), sum(c.bytes)
    FROM changed c LEFT JOIN run r ON r.tenant_id = c.tenant_id AND r.id = c.run_id
    GROUP BY 1, 2, 3
    HAVING sum(c.steps) <> 0 OR sum(c.step_us) <> 0 OR sum(c.bytes) <> 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ductor_usage_attempt_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(now()), coalesce(r.definition_key, ''),
           -sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input))
    FROM old_rows a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
    GROUP BY 1, 3
    HAVING sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error) + ductor_json_bytes(a.input)) <> 0;
    RETURN NULL;
END $$;

-- What attempts hold already: their kept inputs, once.
INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
SELECT a.tenant_id, ductor_utc_day(now()), coalesce(r.definition_key, ''), sum(ductor_json_bytes(a.input))
FROM run_attempt a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
WHERE a.input IS NOT NULL
GROUP BY 1, 3 HAVING sum(ductor_json_bytes(a.input)) <> 0;
