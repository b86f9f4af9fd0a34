-- name: WebhookRefusalReport :one
-- Counts a refusal of a webhook, and the @refusals before it that this
-- process kept to itself, and says whether this one is reported by an
-- event: when the last report is at least @every old. A report carries
-- the refusals counted since the last one (reported_suppressed) and
-- starts the count again. One statement, under the row's lock:
-- concurrent processes report at most once per window between them.
INSERT INTO webhook_refusal AS r (tenant_id, webhook_id, reported_at, suppressed, reported_suppressed)
VALUES (@tenant_id, @webhook_id, now(), 0, @refusals::bigint)
ON CONFLICT (tenant_id, webhook_id) DO UPDATE SET
    reported_at = CASE WHEN r.reported_at <= now() - @every::interval THEN now() ELSE r.reported_at END,
    reported_suppressed = CASE WHEN r.reported_at <= now() - @every::interval
        THEN r.suppressed + excluded.reported_suppressed ELSE r.reported_suppressed END,
    suppressed = CASE WHEN r.reported_at <= now() - @every::interval
        THEN 0 ELSE r.suppressed + excluded.reported_suppressed + 1 END
RETURNING (reported_at = now())::boolean AS reported, reported_suppressed, reported_at;
