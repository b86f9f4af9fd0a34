-- Usage metering and quotas per tenant.
--
-- Metering is counted by the statements that do the work: statement-level
-- triggers on run, run_attempt, run_signal, event and webhook append one
-- row per (tenant, UTC day, definition) a statement touched to
-- usage_delta, in the same transaction. A transaction that rolls back (a
-- retried tick, a crash mid-step) takes its deltas with it, so the figures
-- never drift from the tables they count. usage_delta is append-only (no
-- row is updated, so concurrent transactions of one tenant never wait on
-- each other); the usage service folds it into usage_day and usage_month,
-- which readers sum with what is not folded yet.
--
-- What is counted, and what in the tables it equals:
--   runs_started   rows inserted into run, on the day of created_at
--   runs_<status>  runs entering a final status, on the day of finished_at
--                  (a run leaving one, reopened by a retry, is taken back)
--   steps          attempts that started (run_attempt.started_at set), on
--                  the day they started; retries are attempts and count
--   step_us        finished_at - started_at of started attempts, in µs
--   events         rows inserted into event
--   signals        rows inserted into run_signal
--   webhooks       webhook deliveries (webhook.deliveries increments)
--   stored_bytes   bytes of run inputs and attempt outputs and errors,
--                  added when written and taken back when deleted (prune)

CREATE TABLE usage_delta (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id       uuid        NOT NULL,
    day             date        NOT NULL,
    definition_key  text        NOT NULL DEFAULT '',
    runs_started    bigint      NOT NULL DEFAULT 0,
    runs_succeeded  bigint      NOT NULL DEFAULT 0,
    runs_failed     bigint      NOT NULL DEFAULT 0,
    runs_cancelled  bigint      NOT NULL DEFAULT 0,
    runs_timed_out  bigint      NOT NULL DEFAULT 0,
    runs_terminated bigint      NOT NULL DEFAULT 0,
    steps           bigint      NOT NULL DEFAULT 0,
    step_us         bigint      NOT NULL DEFAULT 0,
    events          bigint      NOT NULL DEFAULT 0,
    signals         bigint      NOT NULL DEFAULT 0,
    webhooks        bigint      NOT NULL DEFAULT 0,
    stored_bytes    bigint      NOT NULL DEFAULT 0
);

CREATE INDEX usage_delta_tenant_idx ON usage_delta (tenant_id, day);

-- usage_day is the rollup per tenant, day and definition.
CREATE TABLE usage_day (
    tenant_id       uuid   NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    day             date   NOT NULL,
    definition_key  text   NOT NULL,
    runs_started    bigint NOT NULL DEFAULT 0,
    runs_succeeded  bigint NOT NULL DEFAULT 0,
    runs_failed     bigint NOT NULL DEFAULT 0,
    runs_cancelled  bigint NOT NULL DEFAULT 0,
    runs_timed_out  bigint NOT NULL DEFAULT 0,
    runs_terminated bigint NOT NULL DEFAULT 0,
    steps           bigint NOT NULL DEFAULT 0,
    step_us         bigint NOT NULL DEFAULT 0,
    events          bigint NOT NULL DEFAULT 0,
    signals         bigint NOT NULL DEFAULT 0,
    webhooks        bigint NOT NULL DEFAULT 0,
    stored_bytes    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, day, definition_key)
);

-- usage_month is the rollup per tenant and month (the first day of it):
-- a month of every tenant is one row each.
CREATE TABLE usage_month (
    tenant_id       uuid   NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    month           date   NOT NULL,
    runs_started    bigint NOT NULL DEFAULT 0,
    runs_succeeded  bigint NOT NULL DEFAULT 0,
    runs_failed     bigint NOT NULL DEFAULT 0,
    runs_cancelled  bigint NOT NULL DEFAULT 0,
    runs_timed_out  bigint NOT NULL DEFAULT 0,
    runs_terminated bigint NOT NULL DEFAULT 0,
    steps           bigint NOT NULL DEFAULT 0,
    step_us         bigint NOT NULL DEFAULT 0,
    events          bigint NOT NULL DEFAULT 0,
    signals         bigint NOT NULL DEFAULT 0,
    webhooks        bigint NOT NULL DEFAULT 0,
    stored_bytes    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, month)
);

CREATE INDEX usage_month_month_idx ON usage_month (month);

-- Quotas: per tier, overridden per tenant column by column. NULL is no
-- limit (for a tenant: the tier's).
CREATE TABLE usage_tier_quota (
    tier          text    PRIMARY KEY,
    monthly_steps bigint  CHECK (monthly_steps >= 0),
    monthly_runs  bigint  CHECK (monthly_runs >= 0),
    waiting_runs  bigint  CHECK (waiting_runs >= 0),
    stored_bytes  bigint  CHECK (stored_bytes >= 0),
    soft_percent  integer NOT NULL DEFAULT 80 CHECK (soft_percent BETWEEN 1 AND 100)
);

CREATE TABLE usage_tenant_quota (
    tenant_id     uuid    PRIMARY KEY REFERENCES tenant (id) ON DELETE CASCADE,
    monthly_steps bigint  CHECK (monthly_steps >= 0),
    monthly_runs  bigint  CHECK (monthly_runs >= 0),
    waiting_runs  bigint  CHECK (waiting_runs >= 0),
    stored_bytes  bigint  CHECK (stored_bytes >= 0),
    soft_percent  integer CHECK (soft_percent BETWEEN 1 AND 100)
);

-- usage_warning records a ductor.usage.warning: a quota past its soft
-- limit, once per tenant, period and quota.
CREATE TABLE usage_warning (
    tenant_id  uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    period     date        NOT NULL,
    quota      text        NOT NULL,
    used       bigint      NOT NULL,
    quota_limit bigint     NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, period, quota)
);

CREATE FUNCTION ductor_utc_day(t timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE AS $$ SELECT (t AT TIME ZONE 'UTC')::date $$;

CREATE FUNCTION ductor_step_us(started timestamptz, finished timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN started IS NULL OR finished IS NULL THEN 0
                ELSE (EXTRACT(EPOCH FROM finished - started) * 1000000)::bigint END
$$;

CREATE FUNCTION ductor_json_bytes(j jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(octet_length(j::text), 0)::bigint $$;

-- run: starts on insert, final statuses on insert and update.
CREATE FUNCTION ductor_usage_run_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, runs_started)
    SELECT tenant_id, ductor_utc_day(created_at), definition_key, count(*)
    FROM new_rows GROUP BY 1, 2, 3;
    INSERT INTO usage_delta (tenant_id, day, definition_key, runs_succeeded, runs_failed,
                             runs_cancelled, runs_timed_out, runs_terminated)
    SELECT tenant_id, ductor_utc_day(coalesce(finished_at, created_at)), definition_key,
           count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed'),
           count(*) FILTER (WHERE status = 'cancelled'), count(*) FILTER (WHERE status = 'timed_out'),
           count(*) FILTER (WHERE status = 'terminated')
    FROM new_rows
    WHERE status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
    GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_run_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH changed AS (
        SELECT n.tenant_id, ductor_utc_day(coalesce(n.finished_at, n.updated_at)) AS day,
               n.definition_key, n.status, 1 AS sign
        FROM new_rows n JOIN old_rows o USING (tenant_id, id)
        WHERE n.status IS DISTINCT FROM o.status
          AND n.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
        UNION ALL
        SELECT o.tenant_id, ductor_utc_day(coalesce(o.finished_at, o.updated_at)),
               o.definition_key, o.status, -1
        FROM new_rows n JOIN old_rows o USING (tenant_id, id)
        WHERE n.status IS DISTINCT FROM o.status
          AND o.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated'))
    INSERT INTO usage_delta (tenant_id, day, definition_key, runs_succeeded, runs_failed,
                             runs_cancelled, runs_timed_out, runs_terminated)
    SELECT tenant_id, day, definition_key,
           coalesce(sum(sign) FILTER (WHERE status = 'succeeded'), 0),
           coalesce(sum(sign) FILTER (WHERE status = 'failed'), 0),
           coalesce(sum(sign) FILTER (WHERE status = 'cancelled'), 0),
           coalesce(sum(sign) FILTER (WHERE status = 'timed_out'), 0),
           coalesce(sum(sign) FILTER (WHERE status = 'terminated'), 0)
    FROM changed GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE TRIGGER run_usage_insert AFTER INSERT ON run
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_run_insert();
CREATE TRIGGER run_usage_update AFTER UPDATE ON run
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_run_update();

-- run_attempt: a started attempt is a step; its worker time and the bytes
-- of its output and error follow the row (a change adds the new value and
-- takes back the old one).
CREATE FUNCTION ductor_usage_attempt_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, steps, step_us, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(coalesce(a.started_at, a.finished_at, now())),
           coalesce(r.definition_key, ''),
           count(*) FILTER (WHERE a.started_at IS NOT NULL),
           coalesce(sum(ductor_step_us(a.started_at, a.finished_at)), 0),
           coalesce(sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error)), 0)
    FROM new_rows a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
    GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_attempt_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH pairs AS (
        SELECT n.tenant_id, n.run_id,
               n.started_at AS n_started, n.finished_at AS n_finished,
               o.started_at AS o_started, o.finished_at AS o_finished,
               ductor_json_bytes(n.output) + ductor_json_bytes(n.error) AS n_bytes,
               ductor_json_bytes(o.output) + ductor_json_bytes(o.error) AS o_bytes
        FROM new_rows n JOIN old_rows o USING (tenant_id, run_id, node, generation, attempt)
        WHERE n.started_at IS DISTINCT FROM o.started_at OR n.finished_at IS DISTINCT FROM o.finished_at
           OR n.output IS DISTINCT FROM o.output OR n.error IS DISTINCT FROM o.error),
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

CREATE FUNCTION ductor_usage_attempt_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), -sum(ductor_json_bytes(output) + ductor_json_bytes(error))
    FROM old_rows GROUP BY 1
    HAVING sum(ductor_json_bytes(output) + ductor_json_bytes(error)) <> 0;
    RETURN NULL;
END $$;

CREATE TRIGGER run_attempt_usage_insert AFTER INSERT ON run_attempt
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_attempt_insert();
CREATE TRIGGER run_attempt_usage_update AFTER UPDATE ON run_attempt
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_attempt_update();
CREATE TRIGGER run_attempt_usage_delete AFTER DELETE ON run_attempt
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_attempt_delete();

-- run_input: the bytes of what runs are given (step results, signals,
-- events, controls).
CREATE FUNCTION ductor_usage_input_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), sum(ductor_json_bytes(payload))
    FROM new_rows GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_input_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), -sum(ductor_json_bytes(payload))
    FROM old_rows GROUP BY 1;
    RETURN NULL;
END $$;

CREATE TRIGGER run_input_usage_insert AFTER INSERT ON run_input
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_input_insert();
CREATE TRIGGER run_input_usage_delete AFTER DELETE ON run_input
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_input_delete();

-- event, run_signal, webhook: what tenants send in. Ductor's own system
-- events (named ductor.*) are not a tenant's input and are not counted.
CREATE FUNCTION ductor_usage_event_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, events)
    SELECT tenant_id, ductor_utc_day(created_at), count(*) FROM new_rows
    WHERE name NOT LIKE 'ductor.%' GROUP BY 1, 2;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_signal_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, signals)
    SELECT s.tenant_id, ductor_utc_day(s.created_at), coalesce(r.definition_key, ''), count(*)
    FROM new_rows s LEFT JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
    GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_webhook_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, webhooks)
    SELECT n.tenant_id, ductor_utc_day(now()), sum(n.deliveries - o.deliveries)
    FROM new_rows n JOIN old_rows o USING (tenant_id, id)
    GROUP BY 1 HAVING sum(n.deliveries - o.deliveries) <> 0;
    RETURN NULL;
END $$;

CREATE TRIGGER event_usage_insert AFTER INSERT ON event
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_event_insert();
CREATE TRIGGER run_signal_usage_insert AFTER INSERT ON run_signal
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_signal_insert();
CREATE TRIGGER webhook_usage_update AFTER UPDATE ON webhook
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_webhook_update();
