-- What the inspector reads of one node: a scatter's children filtered by
-- state and key, one node's transitions, and what its live view watches.

-- name: RunNodeListChildrenFiltered :many
-- One page of a scatter's children after index after_index, in item
-- order, in one state (NULL: any) and with a node id matching key_like's
-- pattern (NULL: any).
SELECT * FROM run_node
WHERE tenant_id = @tenant_id AND run_id = @run_id AND scatter = @scatter
  AND child_index > sqlc.arg(after_index)::bigint
  AND (sqlc.narg(state)::text IS NULL OR state = sqlc.narg(state))
  AND (sqlc.narg(key_like)::text IS NULL OR node ILIKE sqlc.narg(key_like))
ORDER BY child_index
LIMIT @max_rows;

-- name: RunHistoryListByNode :many
-- A node's transitions after after_seq, oldest first.
SELECT * FROM run_history
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;

-- name: RunLiveState :one
-- What the inspector's live stream watches: the run's status and
-- transition count, and whether work for it is still to come (a tick
-- asked for, an input not yet consumed), which an ended run has after an
-- operator's retry.
SELECT r.status, r.transition_count, r.record_version,
       (r.tick_requested OR EXISTS (
           SELECT 1 FROM run_input i
           WHERE i.tenant_id = r.tenant_id AND i.run_id = r.id AND i.consumed_at IS NULL))::boolean AS pending
FROM run r
WHERE r.tenant_id = @tenant_id AND r.id = @id;
