-- name: HandlersSeen :many
-- The task handlers the tenant's database knows of: those of bridge-SDK
-- tasks waiting for or held by a worker, and those the newest published
-- version of each definition names (on a task step, or in a scatter's
-- task template).
SELECT h::text AS handler FROM (
  SELECT DISTINCT b.handler AS h FROM bridge_task b WHERE b.tenant_id = @tenant_id::uuid
  UNION
  SELECT CASE WHEN s->>'type' = 'task' THEN s->'with'->>'handler' ELSE s->'with'->'do'->'with'->>'handler' END
  FROM definition d
  JOIN LATERAL (SELECT v.manifest FROM definition_version v
                WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL
                ORDER BY v.version DESC LIMIT 1) v ON true
  CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(v.manifest->'steps') = 'array' THEN v.manifest->'steps' ELSE '[]'::jsonb END) s
  WHERE d.tenant_id = @tenant_id::uuid AND (s->>'type' = 'task' OR (s->>'type' = 'scatter' AND s->'with'->'do'->>'type' = 'task'))
) x
WHERE h IS NOT NULL AND h <> ''
ORDER BY h
LIMIT @max_rows;

-- name: DefinitionVersionsList :many
-- The tenant's definitions by key, each with its published versions,
-- newest first.
SELECT d.key, d.name,
  coalesce((SELECT array_agg(v.version ORDER BY v.version DESC) FROM definition_version v
            WHERE v.tenant_id = d.tenant_id AND v.key = d.key AND v.unpublished_at IS NULL), '{}')::int[] AS versions
FROM definition d
WHERE d.tenant_id = @tenant_id::uuid
ORDER BY d.key
LIMIT @max_rows;
