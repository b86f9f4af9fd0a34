-- name: RunBatchInsert :one
INSERT INTO run_batch (tenant_id, id, action, filter, run_ids, reason, actor, total, status, finished_at)
VALUES (@tenant_id, @id, @action, sqlc.narg(filter), sqlc.narg(run_ids)::uuid[], @reason, @actor, @total, @status,
        CASE WHEN sqlc.arg(finished)::boolean THEN now() END)
RETURNING *;

-- name: RunBatchGet :one
SELECT * FROM run_batch WHERE tenant_id = @tenant_id AND id = @id;

-- name: RunBatchList :many
SELECT * FROM run_batch WHERE tenant_id = @tenant_id
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunBatchClaim :one
-- The oldest running batch that no other process is working on, locked
-- until the caller's transaction ends.
SELECT * FROM run_batch
WHERE status = 'running'
ORDER BY created_at
LIMIT 1
FOR UPDATE SKIP LOCKED;

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
