-- name: SubscriptionInsert :one
INSERT INTO subscription (tenant_id, id, url, events, filter_expr, description, secret)
VALUES (@tenant_id, @id, @url, @events, @filter_expr, @description, @secret)
RETURNING *;

-- name: SubscriptionGet :one
SELECT * FROM subscription WHERE tenant_id = @tenant_id AND id = @id;

-- name: SubscriptionList :many
SELECT * FROM subscription WHERE tenant_id = @tenant_id AND id > @after ORDER BY id LIMIT @max;

-- name: SubscriptionCount :one
SELECT count(*) FROM subscription WHERE tenant_id = @tenant_id;

-- name: SubscriptionsForEvent :many
-- The enabled subscriptions an event of the name goes to.
SELECT * FROM subscription
WHERE tenant_id = @tenant_id AND disabled_at IS NULL
  AND (@name::text = ANY (events) OR '*' = ANY (events))
ORDER BY id;

-- name: SubscriptionDelete :execrows
DELETE FROM subscription WHERE tenant_id = @tenant_id AND id = @id;

-- name: SubscriptionRotate :one
-- Replaces the secret; the previous one still signs until previous_until.
UPDATE subscription SET
    previous_secret = secret, previous_until = now() + @grace::interval, secret = @secret
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: SubscriptionEnable :one
UPDATE subscription SET disabled_at = NULL, disabled_reason = '', failures = 0
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: SubscriptionSucceeded :exec
UPDATE subscription SET failures = 0 WHERE tenant_id = @tenant_id AND id = @id AND failures <> 0;

-- name: SubscriptionFailed :one
-- Counts a delivery that ran out of attempts; disables the subscription
-- when the count reaches @disable_after. disabled_now is true only for
-- the update that disabled it.
UPDATE subscription SET
    failures = failures + 1,
    disabled_at = CASE WHEN disabled_at IS NULL AND failures + 1 >= @disable_after::int THEN now() ELSE disabled_at END,
    disabled_reason = CASE WHEN disabled_at IS NULL AND failures + 1 >= @disable_after::int
        THEN @reason::text ELSE disabled_reason END
WHERE tenant_id = @tenant_id AND id = @id
RETURNING failures, (disabled_at IS NOT NULL AND disabled_at = now())::bool AS disabled_now;

-- name: SubscriptionDisabledCount :one
SELECT count(*) FROM subscription WHERE disabled_at IS NOT NULL;
