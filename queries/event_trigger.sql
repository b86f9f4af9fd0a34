-- name: EventTriggerDeleteDefinition :exec
DELETE FROM event_trigger WHERE tenant_id = @tenant_id AND definition_key = @definition_key;

-- name: EventTriggerInsert :exec
INSERT INTO event_trigger (tenant_id, name, definition_key, position, filter_expr, input_expr)
VALUES (@tenant_id, @name, @definition_key, @position, @filter_expr, @input_expr);

-- name: EventTriggersByName :many
-- The triggers an event of the name starts, in a stable order.
SELECT * FROM event_trigger WHERE tenant_id = @tenant_id AND name = @name
ORDER BY definition_key, position;

-- name: EventTriggersByDefinition :many
SELECT * FROM event_trigger WHERE tenant_id = @tenant_id AND definition_key = @definition_key ORDER BY position;

-- name: EventTriggerRecordStart :exec
UPDATE event_trigger SET started = started + 1
WHERE tenant_id = @tenant_id AND name = @name AND definition_key = @definition_key AND position = @position;

-- name: EventTriggerRecordError :exec
UPDATE event_trigger SET last_error = @last_error, last_error_at = now()
WHERE tenant_id = @tenant_id AND name = @name AND definition_key = @definition_key AND position = @position;
