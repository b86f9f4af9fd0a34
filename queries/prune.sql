-- name: PruneTenants :many
-- The tenants whose finished runs are kept for a limited time, with the
-- database's clock minus their retention: what finished before it goes.
SELECT id, (ductor_now() - make_interval(secs => retention_seconds))::timestamptz AS cutoff
FROM tenant
WHERE retention_seconds > 0
ORDER BY id;

-- name: PruneRunsFinishedBefore :many
-- A page of the tenant's runs that finished before the cutoff, oldest
-- first, after a (finished_at, id) cursor: the candidates whose roots the
-- prune considers.
SELECT id, root_run_id, finished_at::timestamptz AS finished_at FROM run
WHERE tenant_id = @tenant_id AND finished_at IS NOT NULL AND finished_at < @cutoff::timestamptz
  AND (finished_at, id) > (@after_finished_at::timestamptz, @after_id::uuid)
ORDER BY finished_at, id
LIMIT @max_rows;

-- name: PruneRootsExpired :many
-- The roots among root_ids whose every run (the root, its children at any
-- depth and its ContinueAsNew chain all share root_run_id) finished before
-- the cutoff, with no attempt whose worker may still be at it (its lease
-- has not run out: a cancelled run's attempt stays leased until then),
-- and that no schedule still counts as running: the schedule settles the
-- action first (keeping the run's status, and pausing on a failure), and
-- only then may the run go.
SELECT r.root::uuid AS root FROM unnest(@root_ids::uuid[]) AS r(root)
WHERE NOT EXISTS (
        SELECT 1 FROM run m
        WHERE m.tenant_id = @tenant_id AND m.root_run_id = r.root
          AND (m.finished_at IS NULL OR m.finished_at >= @cutoff::timestamptz))
  AND NOT EXISTS (
        SELECT 1 FROM run m
        JOIN run_attempt a ON a.tenant_id = m.tenant_id AND a.run_id = m.id
        WHERE m.tenant_id = @tenant_id AND m.root_run_id = r.root
          AND a.finished_at IS NULL AND a.lease_until > now())
  AND NOT EXISTS (
        SELECT 1 FROM schedule_action sa
        WHERE sa.tenant_id = @tenant_id AND sa.run_id = r.root AND sa.state = 'running');

-- name: PruneRunsLock :many
-- Locks up to max_rows runs of expired roots that still finished before
-- the cutoff (a run an operator resumed meanwhile is left alone), skipping
-- any another transaction holds.
SELECT id FROM run
WHERE tenant_id = @tenant_id AND root_run_id = ANY(@root_ids::uuid[])
  AND finished_at IS NOT NULL AND finished_at < @cutoff::timestamptz
ORDER BY id
LIMIT @max_rows
FOR UPDATE SKIP LOCKED;

-- name: PruneRunsDelete :execrows
-- The runs themselves, last: ON DELETE CASCADE takes whatever row of
-- theirs is left.
DELETE FROM run WHERE tenant_id = @tenant_id AND id = ANY(@ids::uuid[]);

-- name: PruneEvents :execrows
-- Up to max_rows of the tenant's events older than the cutoff that no node
-- consumed (the runs that consumed one keep it until they go themselves).
DELETE FROM event
WHERE (tenant_id, id) IN (
    SELECT e.tenant_id, e.id FROM event e
    WHERE e.tenant_id = @tenant_id AND e.created_at < @cutoff
      AND NOT EXISTS (SELECT 1 FROM event_use u WHERE u.tenant_id = e.tenant_id AND u.event_id = e.id)
    ORDER BY e.created_at, e.id
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED);
