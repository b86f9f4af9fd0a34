-- The runs list's queries: one filter, three shapes (a page older than a
-- cursor, a page newer than one, a capped count). A NULL parameter does
-- not filter. q_id_from..q_id_to is the id range a run-id prefix spans,
-- q_subject a LIKE prefix pattern: a run matches q by either.

-- name: RunList :many
SELECT * FROM run
WHERE tenant_id = @tenant_id
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(definition_key)::text IS NULL OR definition_key = sqlc.narg(definition_key))
  AND (sqlc.narg(definition_keys)::text[] IS NULL OR definition_key = ANY(sqlc.narg(definition_keys)::text[]))
  AND (sqlc.narg(subject)::text IS NULL OR subject = sqlc.narg(subject))
  AND (sqlc.narg(parent_run_id)::uuid IS NULL OR parent_run_id = sqlc.narg(parent_run_id))
  AND (sqlc.narg(attributes)::jsonb IS NULL OR search_attributes @> sqlc.narg(attributes))
  AND (sqlc.narg(q_subject)::text IS NULL
       OR subject LIKE sqlc.narg(q_subject)
       OR (sqlc.narg(q_id_from)::uuid IS NOT NULL AND id BETWEEN sqlc.narg(q_id_from) AND sqlc.narg(q_id_to)::uuid))
  AND (sqlc.narg(created_from)::timestamptz IS NULL OR created_at >= sqlc.narg(created_from))
  AND (sqlc.narg(before_created_at)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(before_created_at), sqlc.narg(before_id)::uuid))
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunListNewer :many
-- The page before a cursor: the runs just newer than it, oldest first
-- (the caller reverses them).
SELECT * FROM run
WHERE tenant_id = @tenant_id
  AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
  AND (sqlc.narg(definition_key)::text IS NULL OR definition_key = sqlc.narg(definition_key))
  AND (sqlc.narg(definition_keys)::text[] IS NULL OR definition_key = ANY(sqlc.narg(definition_keys)::text[]))
  AND (sqlc.narg(subject)::text IS NULL OR subject = sqlc.narg(subject))
  AND (sqlc.narg(parent_run_id)::uuid IS NULL OR parent_run_id = sqlc.narg(parent_run_id))
  AND (sqlc.narg(attributes)::jsonb IS NULL OR search_attributes @> sqlc.narg(attributes))
  AND (sqlc.narg(q_subject)::text IS NULL
       OR subject LIKE sqlc.narg(q_subject)
       OR (sqlc.narg(q_id_from)::uuid IS NOT NULL AND id BETWEEN sqlc.narg(q_id_from) AND sqlc.narg(q_id_to)::uuid))
  AND (sqlc.narg(created_to)::timestamptz IS NULL
       OR (created_at, id) < (sqlc.narg(created_to), sqlc.narg(created_to_id)::uuid))
  AND (created_at, id) > (@after_created_at, @after_id::uuid)
ORDER BY created_at ASC, id ASC
LIMIT @max_rows;

-- name: RunCount :one
-- How many runs match, counting at most max_rows (the list shows more
-- as "more than").
SELECT count(*) FROM (
    SELECT 1 FROM run
    WHERE tenant_id = @tenant_id
      AND (sqlc.narg(status)::text IS NULL OR status = sqlc.narg(status))
      AND (sqlc.narg(definition_key)::text IS NULL OR definition_key = sqlc.narg(definition_key))
      AND (sqlc.narg(definition_keys)::text[] IS NULL OR definition_key = ANY(sqlc.narg(definition_keys)::text[]))
      AND (sqlc.narg(subject)::text IS NULL OR subject = sqlc.narg(subject))
      AND (sqlc.narg(parent_run_id)::uuid IS NULL OR parent_run_id = sqlc.narg(parent_run_id))
      AND (sqlc.narg(attributes)::jsonb IS NULL OR search_attributes @> sqlc.narg(attributes))
      AND (sqlc.narg(q_subject)::text IS NULL
           OR subject LIKE sqlc.narg(q_subject)
           OR (sqlc.narg(q_id_from)::uuid IS NOT NULL AND id BETWEEN sqlc.narg(q_id_from) AND sqlc.narg(q_id_to)::uuid))
      AND (sqlc.narg(created_from)::timestamptz IS NULL OR created_at >= sqlc.narg(created_from))
      AND (sqlc.narg(before_created_at)::timestamptz IS NULL
           OR (created_at, id) < (sqlc.narg(before_created_at), sqlc.narg(before_id)::uuid))
    LIMIT @max_rows) AS matching;


-- name: RunCountEstimate :one
-- The planner's estimate of how many runs match (ductor_run_estimate),
-- for a total past the count's cap.
SELECT ductor_run_estimate(
    @tenant_id, sqlc.narg(status), sqlc.narg(definition_key), sqlc.narg(definition_keys)::text[], sqlc.narg(subject),
    sqlc.narg(parent_run_id)::uuid, sqlc.narg(attributes)::jsonb, sqlc.narg(q_subject), sqlc.narg(q_id_from)::uuid,
    sqlc.narg(q_id_to)::uuid, sqlc.narg(created_from)::timestamptz, sqlc.narg(before_created_at)::timestamptz,
    sqlc.narg(before_id)::uuid)::bigint AS estimate;

-- name: RunLatestOfDefinitions :many
-- The newest run of each of the definitions, one index probe each
-- (run_definition_idx); a definition with no run has no row.
SELECT k.key::text AS definition_key, r.id, r.status, r.created_at, r.finished_at
FROM unnest(@definition_keys::text[]) AS k(key)
CROSS JOIN LATERAL (
    SELECT run.id, run.status, run.created_at, run.finished_at FROM run
    WHERE run.tenant_id = @tenant_id AND run.definition_key = k.key
    ORDER BY run.created_at DESC, run.id DESC
    LIMIT 1
) r;
