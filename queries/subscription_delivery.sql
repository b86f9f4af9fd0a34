-- name: SubscriptionDeliveryInsert :exec
INSERT INTO subscription_delivery (tenant_id, id, subscription_id, event_id, event_name, body)
VALUES (@tenant_id, @id, @subscription_id, @event_id, @event_name, @body)
ON CONFLICT (tenant_id, subscription_id, event_id) DO NOTHING;

-- name: SubscriptionDeliveryClaim :many
-- Claims due deliveries, at most one per subscription and none of a
-- subscription with a delivery being sent (a receiver that hangs holds
-- only its own), and no more than @per_tenant being sent per tenant at
-- once (one tenant's slow receivers leave senders for the others),
-- oldest first, leasing each until @lease from now: a process that dies
-- mid-send leaves it to be claimed again then.
--
-- Under READ COMMITTED the CTEs read the statement's snapshot, and a row
-- another process claimed (or finished) after it is locked in its newest
-- version, with only picked's own conditions on d checked again: so they
-- repeat that it is due, which a claimed or finished one no longer is.
-- Of a subscription's due deliveries every process picks the same one
-- (ties broken by id), so a second process that read before the first's
-- claim finds that one taken and sends none of the subscription's.
WITH due AS (
    SELECT DISTINCT ON (d.tenant_id, d.subscription_id) d.tenant_id, d.id, d.next_at
    FROM subscription_delivery d
    JOIN subscription s ON s.tenant_id = d.tenant_id AND s.id = d.subscription_id
    WHERE d.status IN ('pending', 'sending') AND d.next_at <= now() AND s.disabled_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM subscription_delivery b
        WHERE b.tenant_id = d.tenant_id AND b.subscription_id = d.subscription_id
          AND b.status = 'sending' AND b.next_at > now())
    ORDER BY d.tenant_id, d.subscription_id, d.next_at, d.id
), ranked AS (
    SELECT due.tenant_id, due.id, row_number() OVER (PARTITION BY due.tenant_id ORDER BY due.next_at) AS rn
    FROM due
), busy AS (
    SELECT b.tenant_id, count(*) AS n FROM subscription_delivery b
    WHERE b.status = 'sending' AND b.next_at > now()
    GROUP BY b.tenant_id
), picked AS MATERIALIZED (
    SELECT d.tenant_id, d.id FROM subscription_delivery d
    JOIN ranked r ON r.tenant_id = d.tenant_id AND r.id = d.id
    LEFT JOIN busy ON busy.tenant_id = d.tenant_id
    WHERE r.rn + coalesce(busy.n, 0) <= @per_tenant::bigint
      AND d.status IN ('pending', 'sending') AND d.next_at <= now()
    ORDER BY d.next_at
    LIMIT @max
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE subscription_delivery d SET
    status = 'sending', attempts = d.attempts + 1, next_at = now() + @lease::interval
FROM picked
WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
RETURNING d.*;

-- name: SubscriptionDeliveryFinish :execrows
-- Records the outcome of the attempt the caller claimed (@attempts):
-- delivered, failed or filtered, or pending again @delay from now.
UPDATE subscription_delivery SET
    status = @status, next_at = now() + @delay::interval,
    finished_at = CASE WHEN @status::text IN ('delivered', 'failed', 'filtered') THEN now() END
WHERE tenant_id = @tenant_id AND id = @id AND attempts = @attempts AND status = 'sending';

-- name: SubscriptionAttemptInsert :exec
INSERT INTO subscription_attempt (tenant_id, delivery_id, attempt, status_code, latency_ms, response_excerpt, error)
VALUES (@tenant_id, @delivery_id, @attempt, @status_code, @latency_ms, @response_excerpt, @error)
ON CONFLICT DO NOTHING;

-- name: SubscriptionDeliveryGet :one
SELECT * FROM subscription_delivery WHERE tenant_id = @tenant_id AND id = @id;

-- name: SubscriptionDeliveryList :many
SELECT * FROM subscription_delivery
WHERE tenant_id = @tenant_id AND subscription_id = @subscription_id
ORDER BY created_at DESC, id
LIMIT @max;

-- name: SubscriptionAttemptList :many
SELECT * FROM subscription_attempt WHERE tenant_id = @tenant_id AND delivery_id = @delivery_id ORDER BY attempt;

-- name: SubscriptionDeliveryRedeliver :execrows
-- Sends a finished delivery again, now, with the same webhook-id.
UPDATE subscription_delivery SET status = 'pending', next_at = now(), finished_at = NULL
WHERE tenant_id = @tenant_id AND id = @id AND status IN ('delivered', 'failed');

-- name: SubscriptionDeliveryClaimUnguarded :many
-- The claim without its guards, for the delivery checker only
-- (subscriptions.Config.UnguardedClaim): due deliveries read without a
-- lock and with no regard for those being sent, so that two processes
-- claiming at once both take the same ones. Production never uses it.
WITH picked AS (
    SELECT d.tenant_id, d.id FROM subscription_delivery d
    JOIN subscription s ON s.tenant_id = d.tenant_id AND s.id = d.subscription_id
    WHERE d.status IN ('pending', 'sending') AND d.next_at <= now() AND s.disabled_at IS NULL
    ORDER BY d.next_at
    LIMIT @max
)
UPDATE subscription_delivery d SET
    status = 'sending', attempts = d.attempts + 1, next_at = now() + @lease::interval
FROM picked
WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
RETURNING d.*;
