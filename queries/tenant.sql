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
