-- name: TenantCreate :one
INSERT INTO tenant (id, slug, name, tier)
VALUES (@id, @slug, @name, @tier)
RETURNING *;

-- name: TenantGetBySlug :one
SELECT sqlc.embed(tenant), tier.queue_class
FROM tenant JOIN tier ON tier.name = tenant.tier WHERE tenant.slug = @slug;

-- name: TenantGetByID :one
SELECT sqlc.embed(tenant), tier.queue_class
FROM tenant JOIN tier ON tier.name = tenant.tier WHERE tenant.id = @id;

-- name: TenantList :many
SELECT sqlc.embed(tenant), tier.queue_class
FROM tenant JOIN tier ON tier.name = tenant.tier ORDER BY tenant.slug;

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

-- name: TierList :many
-- The tiers, with how many tenants each has.
SELECT tier.name, tier.queue_class, tier.created_at,
       (SELECT count(*) FROM tenant WHERE tenant.tier = tier.name)::bigint AS tenants
FROM tier ORDER BY tier.name;

-- name: TierEnsure :one
-- Creates a tier, or changes its queue class when one is given; returns
-- it either way.
INSERT INTO tier AS t (name, queue_class)
VALUES (@name, coalesce(sqlc.narg(queue_class)::text, 'standard'))
ON CONFLICT (name) DO UPDATE SET queue_class = coalesce(sqlc.narg(queue_class)::text, t.queue_class)
RETURNING name, queue_class, created_at;

-- name: TierDelete :execrows
DELETE FROM tier WHERE name = @name;

-- name: TierExists :one
SELECT EXISTS (SELECT 1 FROM tier WHERE name = @name);
