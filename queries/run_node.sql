-- name: RunNodeListSteps :many
-- A run's manifest-step nodes: everything but scatter children.
SELECT * FROM run_node
WHERE tenant_id = @tenant_id AND run_id = @run_id AND scatter IS NULL;

-- name: RunNodeListByName :many
-- One index lookup per name. (With node = ANY(names), a cached generic
-- plan that expects few nodes per run scans every child of a 10,000-way
-- scatter; LIMIT keeps the lateral lookup from being flattened into that.)
SELECT n.* FROM unnest(@nodes::text[]) AS k(node)
CROSS JOIN LATERAL (
    SELECT * FROM run_node r
    WHERE r.tenant_id = @tenant_id AND r.run_id = @run_id AND r.node = k.node
    LIMIT 1) n;

-- name: RunNodeListChildren :many
SELECT * FROM run_node
WHERE tenant_id = @tenant_id AND run_id = @run_id AND scatter = @scatter
  AND child_index >= @from_index AND child_index < @to_index
  AND (NOT @live_only::boolean OR state NOT IN ('succeeded', 'failed', 'skipped', 'cancelled'))
ORDER BY child_index;

-- name: RunNodeUpsertMany :exec
-- Nodes of one or more runs; a (run, node) appears once per statement.
INSERT INTO run_node (tenant_id, run_id, node, ref, state, scatter, child_index, data)
SELECT n.tenant_id, n.run_id, n.node, n.ref, n.state, NULLIF(n.scatter, ''), NULLIF(n.child_index, -1), n.data::jsonb
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@nodes::text[]) AS node,
             unnest(@refs::text[]) AS ref,
             unnest(@states::text[]) AS state,
             unnest(@scatters::text[]) AS scatter,
             unnest(@child_indexes::integer[]) AS child_index,
             unnest(@datas::text[]) AS data) AS n
ON CONFLICT (tenant_id, run_id, node) DO UPDATE
SET state = EXCLUDED.state, data = EXCLUDED.data, updated_at = now();

-- name: RunNodeCountChildrenByState :many
SELECT state, count(*) AS nodes FROM run_node
WHERE tenant_id = @tenant_id AND run_id = @run_id AND scatter = @scatter
GROUP BY state
ORDER BY state;
