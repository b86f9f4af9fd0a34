-- name: DefinitionEnsure :one
-- Creates the definition row on first save or publish; later calls keep it.
INSERT INTO definition (tenant_id, key, name)
VALUES (@tenant_id, @key, @name)
ON CONFLICT (tenant_id, key) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
RETURNING *;

-- name: DefinitionGetForUpdate :one
SELECT * FROM definition WHERE tenant_id = @tenant_id AND key = @key FOR UPDATE;

-- name: DefinitionSetLatestVersion :exec
UPDATE definition SET latest_version = @latest_version, updated_at = now()
WHERE tenant_id = @tenant_id AND key = @key;

-- name: DefinitionVersionCreate :one
INSERT INTO definition_version (tenant_id, key, version, manifest, manifest_hash, source, source_format)
VALUES (@tenant_id, @key, @version, @manifest, @manifest_hash, @source, @source_format)
RETURNING *;

-- name: DefinitionVersionGet :one
SELECT * FROM definition_version
WHERE tenant_id = @tenant_id AND key = @key AND version = @version;

-- name: DefinitionVersionGetLatestPublished :one
SELECT * FROM definition_version
WHERE tenant_id = @tenant_id AND key = @key AND unpublished_at IS NULL
ORDER BY version DESC
LIMIT 1;
