-- name: BridgeTaskInsertMany :exec
-- A re-executed tick or sweep inserts nothing twice. start_by is the
-- database's clock plus schedule_to_start (none when 0); an empty
-- traceparent or tracestate is stored as none. flow_key is the step's
-- concurrency pool ('' when none); secrets the names of the tenant
-- secrets the worker receives.
INSERT INTO bridge_task (tenant_id, run_id, node, generation, attempt, queue, handler, input, idempotency_key, timeout_ms,
                         schedule_to_start_ms, start_by, traceparent, tracestate, flow_key, secrets)
SELECT t.tenant_id, t.run_id, t.node, t.generation, t.attempt, t.queue, t.handler, t.input, t.idempotency_key, t.timeout_ms,
       t.schedule_to_start_ms,
       CASE WHEN t.schedule_to_start_ms > 0 THEN ductor_now() + make_interval(secs => t.schedule_to_start_ms / 1000.0) END,
       NULLIF(t.traceparent, ''), NULLIF(t.tracestate, ''), NULLIF(t.flow_key, ''), t.secrets
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id, unnest(@run_ids::uuid[]) AS run_id, unnest(@nodes::text[]) AS node,
             unnest(@generations::integer[]) AS generation, unnest(@attempts::integer[]) AS attempt,
             unnest(@queues::text[]) AS queue, unnest(@handlers::text[]) AS handler, unnest(@inputs::jsonb[]) AS input,
             unnest(@idempotency_keys::text[]) AS idempotency_key, unnest(@timeout_ms::bigint[]) AS timeout_ms,
             unnest(@schedule_to_start_ms::bigint[]) AS schedule_to_start_ms,
             unnest(@traceparents::text[]) AS traceparent, unnest(@tracestates::text[]) AS tracestate,
             unnest(@flow_keys::text[]) AS flow_key, unnest(@secrets::jsonb[]) AS secrets) t
ON CONFLICT DO NOTHING;

-- name: BridgeTaskClaim :many
-- Claims up to max_rows waiting tasks of a queue and handlers, oldest
-- first, each with its own token. The lease runs lease_seconds, but never
-- past the deadline and its grace. The rows are picked once, in a
-- materialized CTE: a LIMIT … SKIP LOCKED subquery under IN may be run
-- again for each row the planner joins it with, each run skipping the
-- rows the last one locked, and claim more than max_rows.
WITH picked AS MATERIALIZED (
    SELECT w.tenant_id, w.id FROM bridge_task w
    WHERE w.tenant_id = @tenant_id AND w.queue = @queue AND w.handler = ANY (@handlers::text[])
      AND w.token IS NULL
    ORDER BY w.created_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED)
UPDATE bridge_task t
SET worker_id = @worker_id,
    token = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''),
    claimed_at = now(),
    deadline = CASE WHEN t.timeout_ms > 0 THEN now() + make_interval(secs => t.timeout_ms / 1000.0) END,
    lease_until = CASE WHEN t.timeout_ms > 0
                       THEN least(now() + make_interval(secs => @lease_seconds::float8),
                                  now() + make_interval(secs => t.timeout_ms / 1000.0 + @grace_seconds::float8))
                       ELSE now() + make_interval(secs => @lease_seconds::float8) END
FROM picked
WHERE t.tenant_id = picked.tenant_id AND t.id = picked.id
RETURNING t.*;

-- name: BridgeTaskGetForUpdate :one
-- live is whether the claim's lease still holds by the database's clock.
SELECT sqlc.embed(bridge_task), coalesce(lease_until > now(), false)::bool AS live
FROM bridge_task
WHERE tenant_id = @tenant_id AND id = @id
FOR UPDATE;

-- name: BridgeTaskExtend :one
-- A heartbeat: the lease runs lease_seconds from now, never past the
-- deadline and its grace.
UPDATE bridge_task
SET lease_until = CASE WHEN deadline IS NULL THEN now() + make_interval(secs => @lease_seconds::float8)
                       ELSE least(now() + make_interval(secs => @lease_seconds::float8),
                                  deadline + make_interval(secs => @grace_seconds::float8)) END
WHERE tenant_id = @tenant_id AND id = @id
RETURNING lease_until;

-- name: BridgeTaskDelete :exec
DELETE FROM bridge_task WHERE tenant_id = @tenant_id AND id = @id;

-- name: BridgeTaskDeleteAttempt :exec
DELETE FROM bridge_task
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node
  AND generation = @generation AND attempt = @attempt;

-- name: BridgeTaskDeleteExpired :execrows
-- Claims whose lease ran out long ago: their attempt was reported lost
-- and a late worker has been told so with a 409 for a while.
DELETE FROM bridge_task
WHERE (tenant_id, id) IN (
    SELECT e.tenant_id, e.id FROM bridge_task e
    WHERE e.token IS NOT NULL AND e.lease_until < now() - make_interval(secs => @keep_seconds::float8)
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED);

-- name: BridgeTaskCountTenant :one
-- A tenant's bridge tasks not yet finished, claimed or not: they count
-- against its concurrency cap like its step jobs.
SELECT count(*) FROM bridge_task WHERE tenant_id = @tenant_id;

-- name: BridgeTaskCountFlow :one
-- A tenant's bridge tasks of one concurrency pool's key, not yet
-- finished: they count against the pool like its step jobs.
SELECT count(*) FROM bridge_task WHERE tenant_id = @tenant_id AND flow_key = @flow_key;

-- name: BridgeTaskClaimUnstarted :many
-- Removes up to max_rows tasks that no worker claimed by their start_by,
-- by the database's clock, for the sweep to fail them as no_worker.
DELETE FROM bridge_task
WHERE (tenant_id, id) IN (
    SELECT u.tenant_id, u.id FROM bridge_task u
    WHERE u.token IS NULL AND u.start_by < ductor_now()
    ORDER BY u.start_by
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED)
RETURNING tenant_id, run_id, node, generation, attempt, queue, handler, schedule_to_start_ms;

-- name: BridgeTaskListUnclaimed :many
-- The tasks of the named nodes of a run that wait for a worker, for the
-- nodes to show it.
SELECT node, generation, attempt, queue, handler, created_at, start_by
FROM bridge_task
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = ANY (@nodes::text[]) AND token IS NULL;
