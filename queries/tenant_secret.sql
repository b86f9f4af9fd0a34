-- name: TenantSecretPut :one
-- Sets a secret's value, creating it at version 1 or replacing it at the
-- next version; an empty description keeps the one it had.
INSERT INTO tenant_secret (tenant_id, name, description, value, created_by, updated_by)
VALUES (@tenant_id, @name, @description, @value, @actor, @actor)
ON CONFLICT (tenant_id, name) DO UPDATE SET
    value = excluded.value,
    description = CASE WHEN excluded.description = '' THEN tenant_secret.description ELSE excluded.description END,
    version = tenant_secret.version + 1,
    updated_at = now(), updated_by = excluded.updated_by
RETURNING tenant_id, name, description, version, created_at, created_by, updated_at, updated_by, last_used_at;

-- name: TenantSecretGet :one
SELECT tenant_id, name, description, version, created_at, created_by, updated_at, updated_by, last_used_at
FROM tenant_secret WHERE tenant_id = @tenant_id AND name = @name;

-- name: TenantSecretList :many
SELECT tenant_id, name, description, version, created_at, created_by, updated_at, updated_by, last_used_at
FROM tenant_secret WHERE tenant_id = @tenant_id AND name > @after ORDER BY name LIMIT @max;

-- name: TenantSecretDelete :execrows
DELETE FROM tenant_secret WHERE tenant_id = @tenant_id AND name = @name;

-- name: TenantSecretValues :many
-- The sealed values of the named secrets, for the step about to send
-- them; it records that they were used.
UPDATE tenant_secret SET last_used_at = now()
WHERE tenant_id = @tenant_id AND name = ANY(@names::text[])
RETURNING name, value;

-- name: TenantSecretSealedPage :many
-- Every tenant's sealed values, by (tenant, name), for re-sealing under
-- the current key. Across tenants on purpose, and paged.
SELECT tenant_id, name, value FROM tenant_secret
WHERE (tenant_id, name) > (@after_tenant::uuid, @after_name::text)
ORDER BY tenant_id, name LIMIT @max;

-- name: TenantSecretReseal :execrows
-- Replaces a sealed value with the same value sealed under another key,
-- unless it changed meanwhile.
UPDATE tenant_secret SET value = @value
WHERE tenant_id = @tenant_id AND name = @name AND value = @old_value;

-- name: RekeyWebhookPage :many
-- Every webhook's sealed secrets (the current one and the rotated-out
-- one), by (tenant, id), for re-sealing under the current key. Across
-- tenants on purpose, and paged.
SELECT tenant_id, id, secret, previous_secret FROM webhook
WHERE (tenant_id, id) > (@after_tenant::uuid, @after_id::text)
ORDER BY tenant_id, id LIMIT @max;

-- name: RekeyWebhookReseal :execrows
-- Replaces a webhook's sealed secrets with the same secrets sealed under
-- another key, unless they changed meanwhile.
UPDATE webhook SET secret = @secret, previous_secret = sqlc.narg(previous_secret)
WHERE tenant_id = @tenant_id AND id = @id AND secret = @old_secret
  AND previous_secret IS NOT DISTINCT FROM sqlc.narg(old_previous_secret);

-- name: TenantSecretUseCandidates :many
-- The tenant's published definition versions whose manifest mentions one
-- of the names anywhere: the candidates the caller checks precisely
-- (definition.Manifest.SecretNames), by key and version.
SELECT key, version, manifest FROM definition_version
WHERE tenant_id = @tenant_id AND unpublished_at IS NULL
  AND EXISTS (SELECT 1 FROM unnest(@names::text[]) AS n(name) WHERE strpos(manifest::text, n.name) > 0)
ORDER BY key, version DESC LIMIT @max;
