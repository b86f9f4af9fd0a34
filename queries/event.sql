-- name: EventInsert :one
-- A repeated idempotency key returns nothing; EventGetByKey finds the first.
INSERT INTO event (tenant_id, id, name, data, idempotency_key, request_hash)
VALUES (@tenant_id, @id, @name, @data, sqlc.narg('idempotency_key'), sqlc.narg('request_hash'))
ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING *;

-- name: EventGetByKey :one
SELECT * FROM event WHERE tenant_id = @tenant_id AND idempotency_key = @idempotency_key;

-- name: EventWaitRuns :many
-- The runs with a node waiting for the event name: an index lookup on
-- (tenant_id, name), whatever the number of runs.
-- Ordered, so deliveries lock runs in one order.
SELECT DISTINCT run_id FROM event_wait
WHERE tenant_id = @tenant_id AND name = @name
ORDER BY run_id;

-- name: EventWaitUpsert :exec
INSERT INTO event_wait (tenant_id, name, run_id, node)
SELECT @tenant_id, unnest(@names::text[]), @run_id, @node
ON CONFLICT DO NOTHING;

-- name: EventWaitDelete :exec
DELETE FROM event_wait WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node;

-- name: EventUseInsert :exec
INSERT INTO event_use (tenant_id, run_id, node, event_id)
VALUES (@tenant_id, @run_id, @node, @event_id)
ON CONFLICT DO NOTHING;

-- name: EventUseList :many
SELECT * FROM event_use WHERE tenant_id = @tenant_id AND run_id = @run_id ORDER BY consumed_at, node;
