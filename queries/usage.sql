-- name: UsageFold :one
-- Folds up to max_rows deltas into the day and month rollups in one
-- statement, so that a reader (who sums the rollups with the deltas in one
-- snapshot) sees each delta exactly once. One folder at a time (an
-- advisory lock: folders in parallel would deadlock on the rollup rows);
-- the deltas of a deleted tenant are dropped.
WITH moved AS (
    DELETE FROM usage_delta WHERE id IN (
        SELECT d.id FROM usage_delta d
        WHERE pg_try_advisory_xact_lock(4538045)
        ORDER BY d.id LIMIT @max_rows
        FOR UPDATE SKIP LOCKED)
    RETURNING tenant_id, day, definition_key, step_type, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes),
live AS (
    SELECT m.tenant_id, m.day, m.definition_key, m.step_type, m.runs_started, m.runs_succeeded, m.runs_failed, m.runs_cancelled, m.runs_timed_out, m.runs_terminated, m.steps, m.step_us, m.events, m.signals, m.webhooks, m.stored_bytes FROM moved m WHERE EXISTS (SELECT 1 FROM tenant t WHERE t.id = m.tenant_id)),
days AS (
    INSERT INTO usage_day (tenant_id, day, definition_key, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes)
    SELECT tenant_id, day, definition_key,
       sum(runs_started)::bigint AS runs_started,
       sum(runs_succeeded)::bigint AS runs_succeeded,
       sum(runs_failed)::bigint AS runs_failed,
       sum(runs_cancelled)::bigint AS runs_cancelled,
       sum(runs_timed_out)::bigint AS runs_timed_out,
       sum(runs_terminated)::bigint AS runs_terminated,
       sum(steps)::bigint AS steps,
       sum(step_us)::bigint AS step_us,
       sum(events)::bigint AS events,
       sum(signals)::bigint AS signals,
       sum(webhooks)::bigint AS webhooks,
       sum(stored_bytes)::bigint AS stored_bytes
    FROM live GROUP BY 1, 2, 3
    ON CONFLICT (tenant_id, day, definition_key) DO UPDATE SET
    runs_started = usage_day.runs_started + EXCLUDED.runs_started,
    runs_succeeded = usage_day.runs_succeeded + EXCLUDED.runs_succeeded,
    runs_failed = usage_day.runs_failed + EXCLUDED.runs_failed,
    runs_cancelled = usage_day.runs_cancelled + EXCLUDED.runs_cancelled,
    runs_timed_out = usage_day.runs_timed_out + EXCLUDED.runs_timed_out,
    runs_terminated = usage_day.runs_terminated + EXCLUDED.runs_terminated,
    steps = usage_day.steps + EXCLUDED.steps,
    step_us = usage_day.step_us + EXCLUDED.step_us,
    events = usage_day.events + EXCLUDED.events,
    signals = usage_day.signals + EXCLUDED.signals,
    webhooks = usage_day.webhooks + EXCLUDED.webhooks,
    stored_bytes = usage_day.stored_bytes + EXCLUDED.stored_bytes
    RETURNING 1),
months AS (
    INSERT INTO usage_month (tenant_id, month, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes)
    SELECT tenant_id, date_trunc('month', day)::date, 
       sum(runs_started)::bigint AS runs_started,
       sum(runs_succeeded)::bigint AS runs_succeeded,
       sum(runs_failed)::bigint AS runs_failed,
       sum(runs_cancelled)::bigint AS runs_cancelled,
       sum(runs_timed_out)::bigint AS runs_timed_out,
       sum(runs_terminated)::bigint AS runs_terminated,
       sum(steps)::bigint AS steps,
       sum(step_us)::bigint AS step_us,
       sum(events)::bigint AS events,
       sum(signals)::bigint AS signals,
       sum(webhooks)::bigint AS webhooks,
       sum(stored_bytes)::bigint AS stored_bytes
    FROM live GROUP BY 1, 2
    ON CONFLICT (tenant_id, month) DO UPDATE SET
    runs_started = usage_month.runs_started + EXCLUDED.runs_started,
    runs_succeeded = usage_month.runs_succeeded + EXCLUDED.runs_succeeded,
    runs_failed = usage_month.runs_failed + EXCLUDED.runs_failed,
    runs_cancelled = usage_month.runs_cancelled + EXCLUDED.runs_cancelled,
    runs_timed_out = usage_month.runs_timed_out + EXCLUDED.runs_timed_out,
    runs_terminated = usage_month.runs_terminated + EXCLUDED.runs_terminated,
    steps = usage_month.steps + EXCLUDED.steps,
    step_us = usage_month.step_us + EXCLUDED.step_us,
    events = usage_month.events + EXCLUDED.events,
    signals = usage_month.signals + EXCLUDED.signals,
    webhooks = usage_month.webhooks + EXCLUDED.webhooks,
    stored_bytes = usage_month.stored_bytes + EXCLUDED.stored_bytes
    RETURNING 1),
day_steps AS (
    INSERT INTO usage_day_step (tenant_id, day, definition_key, step_type, steps, step_us)
    SELECT tenant_id, day, definition_key, step_type, sum(steps)::bigint, sum(step_us)::bigint
    FROM live WHERE step_type <> '' GROUP BY 1, 2, 3, 4
    HAVING sum(steps) <> 0 OR sum(step_us) <> 0
    ON CONFLICT (tenant_id, day, definition_key, step_type) DO UPDATE SET
    steps = usage_day_step.steps + EXCLUDED.steps,
    step_us = usage_day_step.step_us + EXCLUDED.step_us
    RETURNING 1),
month_steps AS (
    INSERT INTO usage_month_step (tenant_id, month, step_type, steps, step_us)
    SELECT tenant_id, date_trunc('month', day)::date, step_type, sum(steps)::bigint, sum(step_us)::bigint
    FROM live WHERE step_type <> '' GROUP BY 1, 2, 3
    HAVING sum(steps) <> 0 OR sum(step_us) <> 0
    ON CONFLICT (tenant_id, month, step_type) DO UPDATE SET
    steps = usage_month_step.steps + EXCLUDED.steps,
    step_us = usage_month_step.step_us + EXCLUDED.step_us
    RETURNING 1)
SELECT (SELECT count(*) FROM moved)::bigint AS folded,
       ((SELECT count(*) FROM days) + (SELECT count(*) FROM months)
        + (SELECT count(*) FROM day_steps) + (SELECT count(*) FROM month_steps))::bigint AS rollups;

-- name: UsageMonthAll :many
-- Every tenant's use in one month (the month's first day), its rollup
-- plus what is not folded yet, with the tenant's slug and tier. The
-- rollup is one row a tenant, added to without aggregating it.
WITH d AS (
    SELECT ud.tenant_id,
           sum(runs_started)::bigint AS runs_started,
           sum(runs_succeeded)::bigint AS runs_succeeded,
           sum(runs_failed)::bigint AS runs_failed,
           sum(runs_cancelled)::bigint AS runs_cancelled,
           sum(runs_timed_out)::bigint AS runs_timed_out,
           sum(runs_terminated)::bigint AS runs_terminated,
           sum(steps)::bigint AS steps,
           sum(step_us)::bigint AS step_us,
           sum(events)::bigint AS events,
           sum(signals)::bigint AS signals,
           sum(webhooks)::bigint AS webhooks,
           sum(stored_bytes)::bigint AS stored_bytes
    FROM usage_delta ud
    WHERE ud.day >= @month::date AND ud.day < @month_end::date
    GROUP BY ud.tenant_id),
m AS (
    SELECT um.* FROM usage_month um WHERE um.month = @month::date)
SELECT t.id AS tenant_id, t.slug, t.tier,
       (coalesce(m.runs_started, 0) + coalesce(d.runs_started, 0))::bigint AS runs_started,
       (coalesce(m.runs_succeeded, 0) + coalesce(d.runs_succeeded, 0))::bigint AS runs_succeeded,
       (coalesce(m.runs_failed, 0) + coalesce(d.runs_failed, 0))::bigint AS runs_failed,
       (coalesce(m.runs_cancelled, 0) + coalesce(d.runs_cancelled, 0))::bigint AS runs_cancelled,
       (coalesce(m.runs_timed_out, 0) + coalesce(d.runs_timed_out, 0))::bigint AS runs_timed_out,
       (coalesce(m.runs_terminated, 0) + coalesce(d.runs_terminated, 0))::bigint AS runs_terminated,
       (coalesce(m.steps, 0) + coalesce(d.steps, 0))::bigint AS steps,
       (coalesce(m.step_us, 0) + coalesce(d.step_us, 0))::bigint AS step_us,
       (coalesce(m.events, 0) + coalesce(d.events, 0))::bigint AS events,
       (coalesce(m.signals, 0) + coalesce(d.signals, 0))::bigint AS signals,
       (coalesce(m.webhooks, 0) + coalesce(d.webhooks, 0))::bigint AS webhooks,
       (coalesce(m.stored_bytes, 0) + coalesce(d.stored_bytes, 0))::bigint AS stored_bytes
FROM m FULL JOIN d ON d.tenant_id = m.tenant_id
JOIN tenant t ON t.id = coalesce(m.tenant_id, d.tenant_id)
ORDER BY t.slug;

-- name: UsageTenantMonth :one
-- One tenant's use in one month, its rollup plus what is not folded yet.
WITH u AS (
    SELECT runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_month um WHERE um.tenant_id = @tenant_id AND month = @month::date
    UNION ALL
    SELECT runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_delta ud
    WHERE ud.tenant_id = @tenant_id AND day >= @month::date AND day < @month_end::date)
SELECT coalesce(sum(runs_started), 0)::bigint AS runs_started,
       coalesce(sum(runs_succeeded), 0)::bigint AS runs_succeeded,
       coalesce(sum(runs_failed), 0)::bigint AS runs_failed,
       coalesce(sum(runs_cancelled), 0)::bigint AS runs_cancelled,
       coalesce(sum(runs_timed_out), 0)::bigint AS runs_timed_out,
       coalesce(sum(runs_terminated), 0)::bigint AS runs_terminated,
       coalesce(sum(steps), 0)::bigint AS steps,
       coalesce(sum(step_us), 0)::bigint AS step_us,
       coalesce(sum(events), 0)::bigint AS events,
       coalesce(sum(signals), 0)::bigint AS signals,
       coalesce(sum(webhooks), 0)::bigint AS webhooks,
       coalesce(sum(stored_bytes), 0)::bigint AS stored_bytes
FROM u;

-- name: UsageTenantByDay :many
-- One tenant's use per day in [from, to), rollup plus what is not folded.
WITH u AS (
    SELECT day, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_day uy WHERE uy.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date
    UNION ALL
    SELECT day, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_delta ud WHERE ud.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date)
SELECT day::date AS day,
       sum(runs_started)::bigint AS runs_started,
       sum(runs_succeeded)::bigint AS runs_succeeded,
       sum(runs_failed)::bigint AS runs_failed,
       sum(runs_cancelled)::bigint AS runs_cancelled,
       sum(runs_timed_out)::bigint AS runs_timed_out,
       sum(runs_terminated)::bigint AS runs_terminated,
       sum(steps)::bigint AS steps,
       sum(step_us)::bigint AS step_us,
       sum(events)::bigint AS events,
       sum(signals)::bigint AS signals,
       sum(webhooks)::bigint AS webhooks,
       sum(stored_bytes)::bigint AS stored_bytes
FROM u GROUP BY day ORDER BY day;

-- name: UsageTenantByDefinition :many
-- One tenant's use per definition in [from, to).
WITH u AS (
    SELECT definition_key, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_day uy WHERE uy.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date
    UNION ALL
    SELECT definition_key, runs_started, runs_succeeded, runs_failed, runs_cancelled, runs_timed_out, runs_terminated, steps, step_us, events, signals, webhooks, stored_bytes FROM usage_delta ud WHERE ud.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date)
SELECT definition_key::text AS definition_key,
       sum(runs_started)::bigint AS runs_started,
       sum(runs_succeeded)::bigint AS runs_succeeded,
       sum(runs_failed)::bigint AS runs_failed,
       sum(runs_cancelled)::bigint AS runs_cancelled,
       sum(runs_timed_out)::bigint AS runs_timed_out,
       sum(runs_terminated)::bigint AS runs_terminated,
       sum(steps)::bigint AS steps,
       sum(step_us)::bigint AS step_us,
       sum(events)::bigint AS events,
       sum(signals)::bigint AS signals,
       sum(webhooks)::bigint AS webhooks,
       sum(stored_bytes)::bigint AS stored_bytes
FROM u GROUP BY definition_key ORDER BY definition_key;

-- name: UsageTenantSteps :many
-- One tenant's steps and step time per day, definition and step type in
-- [from, to), rollup plus what is not folded.
WITH u AS (
    SELECT day, definition_key, step_type, steps, step_us FROM usage_day_step uy
    WHERE uy.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date
    UNION ALL
    SELECT day, definition_key, step_type, steps, step_us FROM usage_delta ud
    WHERE ud.tenant_id = @tenant_id AND day >= @from_day::date AND day < @to_day::date AND step_type <> '')
SELECT day::date AS day, definition_key::text AS definition_key, step_type::text AS step_type,
       sum(steps)::bigint AS steps, sum(step_us)::bigint AS step_us
FROM u GROUP BY 1, 2, 3
HAVING sum(steps) <> 0 OR sum(step_us) <> 0
ORDER BY 1, 2, 3;

-- name: UsageMonthSteps :many
-- Tenants' steps and step time per step type in one month (the month's
-- first day), rollup plus what is not folded; every tenant, or one. As
-- in UsageMonthAll, the aggregated deltas are joined to the rollup rows,
-- which are not aggregated.
WITH d AS (
    SELECT ud.tenant_id, ud.step_type, sum(ud.steps)::bigint AS steps, sum(ud.step_us)::bigint AS step_us
    FROM usage_delta ud
    WHERE ud.day >= @month::date AND ud.day < @month_end::date AND ud.step_type <> ''
      AND (sqlc.narg(tenant_id)::uuid IS NULL OR ud.tenant_id = sqlc.narg(tenant_id)::uuid)
    GROUP BY 1, 2),
m AS (
    SELECT um.tenant_id, um.step_type, um.steps, um.step_us FROM usage_month_step um
    WHERE um.month = @month::date AND (sqlc.narg(tenant_id)::uuid IS NULL OR um.tenant_id = sqlc.narg(tenant_id)::uuid))
SELECT coalesce(m.tenant_id, d.tenant_id)::uuid AS tenant_id, coalesce(m.step_type, d.step_type)::text AS step_type,
       (coalesce(m.steps, 0) + coalesce(d.steps, 0))::bigint AS steps,
       (coalesce(m.step_us, 0) + coalesce(d.step_us, 0))::bigint AS step_us
FROM m FULL JOIN d ON d.tenant_id = m.tenant_id AND d.step_type = m.step_type;

-- name: UsageStoredBytes :one
-- A tenant's stored bytes: every delta there has been (bytes are added
-- when written and taken back when pruned).
SELECT (coalesce((SELECT sum(stored_bytes) FROM usage_month um WHERE um.tenant_id = @tenant_id), 0)
      + coalesce((SELECT sum(stored_bytes) FROM usage_delta ud WHERE ud.tenant_id = @tenant_id), 0))::bigint AS stored_bytes;

-- name: UsageWaitingRuns :one
SELECT count(*)::bigint FROM run WHERE tenant_id = @tenant_id AND status = 'waiting';

-- name: UsageQuotaGet :one
-- A tenant's quotas: its own where set, its tier's otherwise; -1 is no
-- limit.
SELECT t.tier,
       coalesce(q.monthly_steps, tq.monthly_steps, -1)::bigint AS monthly_steps,
       coalesce(q.monthly_runs, tq.monthly_runs, -1)::bigint AS monthly_runs,
       coalesce(q.waiting_runs, tq.waiting_runs, -1)::bigint AS waiting_runs,
       coalesce(q.stored_bytes, tq.stored_bytes, -1)::bigint AS stored_bytes,
       coalesce(q.soft_percent, tq.soft_percent, 80)::integer AS soft_percent
FROM tenant t
LEFT JOIN usage_tenant_quota q ON q.tenant_id = t.id
LEFT JOIN usage_tier_quota tq ON tq.tier = t.tier
WHERE t.id = @tenant_id;

-- name: UsageTierQuotaList :many
SELECT * FROM usage_tier_quota ORDER BY tier;

-- name: UsageTierQuotaSet :one
-- Sets a tier's quotas; a NULL argument keeps what was set, a negative
-- one clears it (no limit).
INSERT INTO usage_tier_quota AS q (tier, monthly_steps, monthly_runs, waiting_runs, stored_bytes, soft_percent)
VALUES (@tier,
        NULLIF(greatest(sqlc.narg(monthly_steps)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(monthly_runs)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(waiting_runs)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(stored_bytes)::bigint, -1), -1),
        coalesce(sqlc.narg(soft_percent)::integer, 80))
ON CONFLICT (tier) DO UPDATE SET
    monthly_steps = CASE WHEN sqlc.narg(monthly_steps)::bigint IS NULL THEN q.monthly_steps ELSE EXCLUDED.monthly_steps END,
    monthly_runs = CASE WHEN sqlc.narg(monthly_runs)::bigint IS NULL THEN q.monthly_runs ELSE EXCLUDED.monthly_runs END,
    waiting_runs = CASE WHEN sqlc.narg(waiting_runs)::bigint IS NULL THEN q.waiting_runs ELSE EXCLUDED.waiting_runs END,
    stored_bytes = CASE WHEN sqlc.narg(stored_bytes)::bigint IS NULL THEN q.stored_bytes ELSE EXCLUDED.stored_bytes END,
    soft_percent = coalesce(sqlc.narg(soft_percent)::integer, q.soft_percent)
RETURNING *;

-- name: UsageTenantQuotaSet :one
-- Sets a tenant's own quotas, as UsageTierQuotaSet does (a cleared one
-- falls back to the tier's).
INSERT INTO usage_tenant_quota AS q (tenant_id, monthly_steps, monthly_runs, waiting_runs, stored_bytes, soft_percent)
VALUES (@tenant_id,
        NULLIF(greatest(sqlc.narg(monthly_steps)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(monthly_runs)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(waiting_runs)::bigint, -1), -1),
        NULLIF(greatest(sqlc.narg(stored_bytes)::bigint, -1), -1),
        sqlc.narg(soft_percent)::integer)
ON CONFLICT (tenant_id) DO UPDATE SET
    monthly_steps = CASE WHEN sqlc.narg(monthly_steps)::bigint IS NULL THEN q.monthly_steps ELSE EXCLUDED.monthly_steps END,
    monthly_runs = CASE WHEN sqlc.narg(monthly_runs)::bigint IS NULL THEN q.monthly_runs ELSE EXCLUDED.monthly_runs END,
    waiting_runs = CASE WHEN sqlc.narg(waiting_runs)::bigint IS NULL THEN q.waiting_runs ELSE EXCLUDED.waiting_runs END,
    stored_bytes = CASE WHEN sqlc.narg(stored_bytes)::bigint IS NULL THEN q.stored_bytes ELSE EXCLUDED.stored_bytes END,
    soft_percent = coalesce(sqlc.narg(soft_percent)::integer, q.soft_percent)
RETURNING *;

-- name: UsageWarningRecord :execrows
-- Records a ductor.usage.warning once per tenant, period and quota.
INSERT INTO usage_warning (tenant_id, period, quota, used, quota_limit)
VALUES (@tenant_id, @period, @quota, @used, @quota_limit)
ON CONFLICT DO NOTHING;

-- name: UsageWarningList :many
SELECT * FROM usage_warning WHERE tenant_id = @tenant_id AND period = @period ORDER BY quota;

-- name: UsageQuotaLock :exec
-- Serializes the starts of one tenant whose quotas are limited, for the
-- rest of the transaction: each checks its use once the one before it
-- committed (and counted) its run, so a burst of starts cannot pass a
-- limit together.
SELECT pg_advisory_xact_lock(hashtextextended('ductor.quota:' || sqlc.arg(tenant_id)::uuid::text, 0));
