-- name: TenantCreate :one
INSERT INTO tenant (id, slug, name, tier)
VALUES (@id, @slug, @name, @tier)
RETURNING *;

-- name: TenantGetBySlug :one
SELECT * FROM tenant WHERE slug = @slug;

-- name: TenantGetByID :one
SELECT * FROM tenant WHERE id = @id;

-- name: TenantList :many
SELECT * FROM tenant ORDER BY slug;

-- name: TenantSetTier :one
UPDATE tenant SET tier = @tier WHERE id = @id RETURNING *;

-- name: TenantSetLimits :one
UPDATE tenant SET max_concurrency = @max_concurrency, rate_per_second = @rate_per_second
WHERE id = @id RETURNING *;

-- name: TenantSetScheduleToStart :one
UPDATE tenant SET schedule_to_start_ms = @schedule_to_start_ms WHERE id = @id RETURNING *;

-- name: TenantBucketEnsure :exec
INSERT INTO tenant_bucket (tenant_id, tokens, updated_at)
VALUES (@tenant_id, @tokens, ductor_now())
ON CONFLICT (tenant_id) DO NOTHING;

-- name: TenantBucketLock :one
-- Locks the tenant's bucket (serialising admission across replicas) and
-- returns it with the database's clock.
SELECT tokens, updated_at, ductor_now()::timestamptz AS now FROM tenant_bucket
WHERE tenant_id = @tenant_id FOR UPDATE;

-- name: TenantBucketSet :exec
UPDATE tenant_bucket SET tokens = @tokens, updated_at = @updated_at WHERE tenant_id = @tenant_id;

-- name: TenantSetRetention :one
-- How long the tenant's finished runs are kept (0: forever).
UPDATE tenant SET retention_seconds = @retention_seconds WHERE id = @id RETURNING *;
