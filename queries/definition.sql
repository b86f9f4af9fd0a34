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

-- name: DefinitionVersionRef :one
-- A version's identity and manifest hash, without the manifest or the
-- source: a trigger that has the manifest cached by hash needs no more.
-- Version 0 is the newest version still published.
SELECT tenant_id, key, version, manifest_hash FROM definition_version
WHERE tenant_id = @tenant_id AND key = @key
  AND CASE WHEN @version::integer > 0 THEN version = @version::integer ELSE unpublished_at IS NULL END
ORDER BY version DESC
LIMIT 1;

-- name: DefinitionDraftSave :one
-- Saves the draft, creating the definition on first save.
INSERT INTO definition (tenant_id, key, name, draft, draft_format, draft_hash, draft_saved_at)
VALUES (@tenant_id, @key, @name, @draft, @draft_format, @draft_hash, now())
ON CONFLICT (tenant_id, key) DO UPDATE SET
    name = EXCLUDED.name, draft = EXCLUDED.draft, draft_format = EXCLUDED.draft_format,
    draft_hash = EXCLUDED.draft_hash, draft_saved_at = now(), updated_at = now()
RETURNING *;

-- name: DefinitionGet :one
SELECT d.tenant_id, d.key, d.name, d.draft, d.draft_format, d.draft_hash, d.draft_saved_at,
       d.latest_version, d.created_at, d.updated_at,
       coalesce((SELECT max(v.version) FROM definition_version v
                 WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL), 0)::int
           AS published_version
FROM definition d
WHERE d.tenant_id = @tenant_id AND d.key = @key;

-- name: DefinitionList :many
-- A page of the tenant's definitions by key, after the key @after; with
-- @q, only those whose key or name contains it (ignoring case).
SELECT d.tenant_id, d.key, d.name, (d.draft IS NOT NULL)::bool AS has_draft, d.draft_format, d.draft_hash,
       d.draft_saved_at,
       d.latest_version, d.created_at, d.updated_at,
       coalesce((SELECT max(v.version) FROM definition_version v
                 WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL), 0)::int
           AS published_version
FROM definition d
WHERE d.tenant_id = @tenant_id AND d.key > @after
  AND (@q::text = '' OR strpos(lower(d.key), lower(@q::text)) > 0 OR strpos(lower(d.name), lower(@q::text)) > 0)
ORDER BY d.key
LIMIT @max;

-- name: DefinitionVersionList :many
-- A definition's versions newest first, without their manifests and sources.
SELECT version, manifest_hash, source_format, published_at, unpublished_at
FROM definition_version
WHERE tenant_id = @tenant_id AND key = @key
ORDER BY version DESC;

-- name: DefinitionVersionUnpublish :one
-- Marks a published version unpublished; no row when it is missing or
-- already unpublished.
UPDATE definition_version SET unpublished_at = now()
WHERE tenant_id = @tenant_id AND key = @key AND version = @version AND unpublished_at IS NULL
RETURNING *;
