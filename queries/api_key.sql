-- name: APIKeyCreate :one
INSERT INTO api_key (tenant_id, id, name, prefix, hash, scopes, created_by)
VALUES (@tenant_id, @id, @name, @prefix, @hash, @scopes, sqlc.narg(created_by))
RETURNING *;

-- name: APIKeyGetByHash :one
-- The one lookup that is not tenant-scoped: a request's key decides its tenant.
SELECT * FROM api_key WHERE hash = @hash;

-- name: APIKeyList :many
SELECT * FROM api_key
WHERE tenant_id = @tenant_id
ORDER BY created_at DESC, id;

-- name: APIKeyRevoke :one
UPDATE api_key SET revoked_at = coalesce(revoked_at, now())
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: APIKeyTouch :exec
-- Records use at most once a minute per key, so reads do not become writes.
UPDATE api_key SET last_used_at = now()
WHERE tenant_id = @tenant_id AND id = @id
  AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');

-- name: APIKeySecret :one
-- The deployment's key secret (see migration 0017).
SELECT secret FROM api_key_secret WHERE singleton;

-- name: APIKeyLegacyLive :one
-- Whether any live key has the old, CRC-32 checksum: until none has, a key
-- of that shape must be looked up.
SELECT EXISTS (SELECT 1 FROM api_key WHERE legacy_checksum AND revoked_at IS NULL);
