-- name: WebhookDeliveryInsert :exec
INSERT INTO webhook_delivery (tenant_id, webhook_id, refused, outcome, reason, status, count, event_id, run_ids)
VALUES (@tenant_id, @webhook_id, @refused, @outcome, @reason, @status, @count, sqlc.narg(event_id), @run_ids::uuid[]);

-- name: WebhookDeliveryPrune :exec
-- Keeps the webhook's newest skip + 1 rows of the kind (accepted or
-- refused) and deletes the older ones.
DELETE FROM webhook_delivery d
WHERE d.tenant_id = @tenant_id AND d.webhook_id = @webhook_id AND d.refused = @refused
  AND d.seq < (SELECT k.seq FROM webhook_delivery k
               WHERE k.tenant_id = @tenant_id AND k.webhook_id = @webhook_id AND k.refused = @refused
               ORDER BY k.seq DESC OFFSET sqlc.arg(skip)::integer LIMIT 1);

-- name: WebhookDeliveryList :many
-- A webhook's log, newest first, of one kind (refused NULL: both), before
-- seq @before.
SELECT * FROM webhook_delivery
WHERE tenant_id = @tenant_id AND webhook_id = @webhook_id
  AND (sqlc.narg(refused)::boolean IS NULL OR refused = sqlc.narg(refused))
  AND seq < @before
ORDER BY seq DESC
LIMIT @max_rows;
