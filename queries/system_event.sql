-- name: SystemEventOutboxAdd :exec
INSERT INTO system_event_outbox (tenant_id, event_id) VALUES (@tenant_id, @event_id)
ON CONFLICT DO NOTHING;

-- name: SystemEventOutboxDue :many
-- The oldest undispatched system events, skipping those another process
-- is dispatching.
SELECT o.tenant_id, o.event_id FROM system_event_outbox o
ORDER BY o.created_at
LIMIT @max
FOR UPDATE SKIP LOCKED;

-- name: SystemEventOutboxTake :execrows
-- Takes one event for dispatch in the caller's transaction: 0 when
-- another transaction took it first.
DELETE FROM system_event_outbox WHERE tenant_id = @tenant_id AND event_id = @event_id;

-- name: SystemEventGet :one
SELECT * FROM event WHERE tenant_id = @tenant_id AND id = @id;

-- name: SystemEventInsert :execrows
-- Stores a system event and queues it for dispatch; an id already stored
-- (the same transition reported again) inserts nothing.
WITH ins AS (
    INSERT INTO event (tenant_id, id, name, data)
    VALUES (@tenant_id, @id, @name, @data)
    ON CONFLICT (tenant_id, id) DO NOTHING
    RETURNING tenant_id, id
)
INSERT INTO system_event_outbox (tenant_id, event_id)
SELECT tenant_id, id FROM ins;

-- name: SystemEventsInsert :execrows
-- Stores a tick's system events in one statement and queues them for
-- dispatch; ids already stored insert nothing.
WITH ins AS (
    INSERT INTO event (tenant_id, id, name, data)
    SELECT unnest(@tenant_ids::uuid[]), unnest(@ids::uuid[]), unnest(@names::text[]), unnest(@datas::jsonb[])
    ON CONFLICT (tenant_id, id) DO NOTHING
    RETURNING tenant_id, id
)
INSERT INTO system_event_outbox (tenant_id, event_id)
SELECT tenant_id, id FROM ins;
