-- name: RunBatchInsert :one
-- A new batch takes its tenant's turn (served_at) if the tenant has
-- running batches, else it joins the round now.
INSERT INTO run_batch (tenant_id, id, action, filter, run_ids, reason, actor, total, status, finished_at, served_at)
VALUES (@tenant_id, @id, @action, sqlc.narg(filter), sqlc.narg(run_ids)::uuid[], @reason, @actor, @total, @status,
        CASE WHEN sqlc.arg(finished)::boolean THEN now() END,
        coalesce((SELECT max(o.served_at) FROM run_batch o WHERE o.tenant_id = sqlc.arg(tenant_id) AND o.status = 'running'), now()))
RETURNING *;

-- name: RunBatchGet :one
SELECT * FROM run_batch WHERE tenant_id = @tenant_id AND id = @id;

-- name: RunBatchList :many
SELECT * FROM run_batch WHERE tenant_id = @tenant_id
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunBatchClaim :one
-- The running batch of the tenant served longest ago (its oldest batch)
-- that no other process is working on, locked until the caller's
-- transaction ends: tenants take turns, a chunk each.
SELECT * FROM run_batch
WHERE status = 'running'
ORDER BY served_at, created_at, id
LIMIT 1
FOR UPDATE SKIP LOCKED;

-- name: RunBatchServed :exec
-- A chunk of one of the tenant's batches was worked: the tenant's running
-- batches go to the back of the round. A batch another process is
-- working on is skipped, not waited for (two processes each holding one
-- of the tenant's batches would deadlock): that process moves it when it
-- records its own chunk.
UPDATE run_batch SET served_at = now()
WHERE (tenant_id, id) IN (
    SELECT o.tenant_id, o.id FROM run_batch o
    WHERE o.tenant_id = @tenant_id AND o.status = 'running'
    FOR UPDATE SKIP LOCKED);

-- name: RunBatchQueued :one
-- The runs the tenant's running batches have still to act on.
SELECT coalesce(sum(greatest(total - done - failed, 0)), 0)::bigint AS queued
FROM run_batch WHERE tenant_id = @tenant_id AND status = 'running';

-- name: RunBatchLockTenant :exec
-- Serializes the creation of a tenant's batches, so that its bound on
-- queued runs holds, until the caller's transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('run_batch:' || sqlc.arg(tenant_id)::uuid::text, 0));

-- name: RunBatchProgress :exec
-- Records a chunk: the counts, the failures kept, where the next chunk
-- starts, and whether the batch is finished.
UPDATE run_batch SET
    done = done + sqlc.arg(done_delta)::integer,
    failed = failed + sqlc.arg(failed_delta)::integer,
    errors = errors || @errors::jsonb,
    cursor_created_at = sqlc.narg(cursor_created_at),
    cursor_id = sqlc.narg(cursor_id),
    cursor_index = @cursor_index,
    total = CASE WHEN sqlc.arg(finished)::boolean THEN done + sqlc.arg(done_delta)::integer + failed + sqlc.arg(failed_delta)::integer ELSE total END,
    status = CASE WHEN sqlc.arg(finished)::boolean THEN 'completed' ELSE status END,
    finished_at = CASE WHEN sqlc.arg(finished)::boolean THEN now() END,
    updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id;

-- name: RunBatchNow :one
-- The instant a new filter batch stops at: runs created later are not
-- in it.
SELECT now()::timestamptz AS now;

-- name: RunBatchStop :one
-- Stops a running batch where it stands: the chunk a process is working
-- on (which holds the row) commits first, and no chunk follows. No row
-- when the batch is not running.
UPDATE run_batch SET status = 'stopped', finished_at = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status = 'running'
RETURNING *;
