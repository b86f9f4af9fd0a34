-- name: RunInputInsert :execrows
-- A duplicate (same dedup key) inserts nothing.
INSERT INTO run_input (tenant_id, run_id, kind, dedup_key, payload)
VALUES (@tenant_id, @run_id, @kind, @dedup_key, @payload)
ON CONFLICT (tenant_id, run_id, dedup_key) DO NOTHING;

-- name: RunInputListPending :many
SELECT * FROM run_input
WHERE tenant_id = @tenant_id AND run_id = @run_id AND consumed_at IS NULL
ORDER BY id
LIMIT @max_rows;

-- name: RunInputConsume :exec
UPDATE run_input SET consumed_at = now()
WHERE tenant_id = @tenant_id AND run_id = @run_id AND id = ANY(@ids::bigint[]);
