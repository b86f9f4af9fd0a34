-- name: RunDispatchInsert :exec
INSERT INTO run_dispatch (tenant_id, run_id, node, generation, attempt, fire_at, queue, args)
VALUES (@tenant_id, @run_id, @node, @generation, @attempt, @fire_at, @queue, @args)
ON CONFLICT DO NOTHING;

-- name: RunDispatchClaimDue :many
-- Due dispatches, compared with the database's clock as ticks read it
-- (fire_at comes from a tick's ductor_now, or an admission's).
DELETE FROM run_dispatch
WHERE (tenant_id, run_id, node, generation, attempt) IN (
    SELECT d.tenant_id, d.run_id, d.node, d.generation, d.attempt FROM run_dispatch d
    WHERE d.fire_at <= ductor_now()
    ORDER BY d.fire_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED)
RETURNING queue, args;

-- name: RunDispatchDelete :exec
DELETE FROM run_dispatch
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node
  AND generation = @generation AND attempt = @attempt;
