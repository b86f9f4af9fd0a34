-- name: MembershipUpsert :one
INSERT INTO membership (tenant_id, email, role)
VALUES (@tenant_id, @email, @role)
ON CONFLICT (tenant_id, email) DO UPDATE
SET role = excluded.role, updated_at = now()
RETURNING *;

-- name: MembershipGet :one
SELECT * FROM membership WHERE tenant_id = @tenant_id AND email = @email;

-- name: MembershipDelete :one
DELETE FROM membership WHERE tenant_id = @tenant_id AND email = @email
RETURNING *;

-- name: MembershipList :many
-- A tenant's members with their user record when they have logged in.
SELECT m.tenant_id, m.email, m.role, m.created_at,
       coalesce(u.name, '')::text AS name, u.last_login_at
FROM membership m
LEFT JOIN app_user u ON u.email = m.email
WHERE m.tenant_id = @tenant_id
ORDER BY m.email;

-- name: MembershipCountOwners :one
SELECT count(*) FROM membership WHERE tenant_id = @tenant_id AND role = 'owner';

-- name: MembershipListByEmail :many
-- The tenants a person belongs to (the tenant switcher); not tenant-scoped
-- because it is how a person's tenants are found.
SELECT t.id, t.slug, t.name, t.tier, m.role
FROM membership m
JOIN tenant t ON t.id = m.tenant_id
WHERE m.email = @email
ORDER BY t.slug;

-- name: TenantLock :exec
-- Serialises membership changes of one tenant (the last-owner check).
SELECT id FROM tenant WHERE id = @id FOR UPDATE;
