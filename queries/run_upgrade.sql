-- name: RunUpgradeSetVersion :execrows
-- Moves a run to another version of its definition, guarded by the
-- record_version the upgrade planned on: a tick that decided on the old
-- version then fails its own guard and decides again on the new one.
UPDATE run SET
    definition_version = @definition_version,
    manifest_hash = @manifest_hash,
    state = @state::jsonb,
    transition_count = @transition_count,
    updated_at = now(),
    record_version = record_version + 1
WHERE tenant_id = @tenant_id AND id = @id AND record_version = @record_version;

-- name: RunUpgradeDropNodes :exec
-- Drops the nodes of steps an upgrade removed, with their scatter
-- children.
DELETE FROM run_node
WHERE tenant_id = @tenant_id AND run_id = @run_id
  AND (node = ANY(@nodes::text[]) OR scatter = ANY(@nodes::text[]));


-- name: RunBatchSetUpgrade :exec
-- The target of an upgrade batch, written in the transaction that
-- creates it.
UPDATE run_batch SET upgrade = @upgrade::jsonb WHERE tenant_id = @tenant_id AND id = @id;
