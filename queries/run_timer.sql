-- name: RunTimerUpsert :exec
INSERT INTO run_timer (tenant_id, run_id, timer_id, node, fire_at)
VALUES (@tenant_id, @run_id, @timer_id, @node, @fire_at)
ON CONFLICT (tenant_id, run_id, timer_id) DO UPDATE SET fire_at = EXCLUDED.fire_at;

-- name: RunTimerDelete :exec
DELETE FROM run_timer WHERE tenant_id = @tenant_id AND run_id = @run_id AND timer_id = @timer_id;

-- name: RunTimerClaimDue :many
-- Due timers, oldest first, compared with the database's clock.
DELETE FROM run_timer
WHERE (tenant_id, run_id, timer_id) IN (
    SELECT t.tenant_id, t.run_id, t.timer_id FROM run_timer t
    WHERE t.fire_at <= ductor_now()
    ORDER BY t.fire_at
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED)
RETURNING *;
