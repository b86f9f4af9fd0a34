-- name: WebhookInsert :one
-- An id already taken inserts nothing and returns no row.
INSERT INTO webhook (tenant_id, id, event, scheme, secret, secret_hint)
VALUES (@tenant_id, @id, @event, @scheme, @secret, @secret_hint)
ON CONFLICT DO NOTHING
RETURNING *;

-- name: WebhookGet :one
SELECT * FROM webhook WHERE tenant_id = @tenant_id AND id = @id;

-- name: WebhookList :many
SELECT * FROM webhook WHERE tenant_id = @tenant_id AND id > @after ORDER BY id LIMIT @max;

-- name: WebhookRotate :one
-- Replaces the secret; the previous one is still accepted until
-- previous_until.
UPDATE webhook SET
    previous_secret = secret, previous_until = now() + @grace::interval,
    secret = @secret, secret_hint = @secret_hint, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: WebhookDelete :execrows
DELETE FROM webhook WHERE tenant_id = @tenant_id AND id = @id;

-- name: WebhookRecordDelivery :exec
-- Records the last delivery; count is how many deliveries this write
-- stands for (failures not written each time are counted with the next).
UPDATE webhook SET
    deliveries = deliveries + @count::bigint, last_delivery_at = now(), last_outcome = @outcome,
    last_status = @status, last_event_id = coalesce(sqlc.narg(event_id), last_event_id)
WHERE tenant_id = @tenant_id AND id = @id;
