-- name: RunCaseInsert :exec
-- A re-executed tick opens nothing twice: the id derives from the node's key.
INSERT INTO run_case (tenant_id, id, run_id, node, title, assignees, fields, awaiting_status)
VALUES (@tenant_id, @id, @run_id, @node, @title, @assignees, @fields, @awaiting_status)
ON CONFLICT (tenant_id, id) DO NOTHING;

-- name: RunCaseGetForUpdate :one
SELECT * FROM run_case WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: RunCaseGet :one
SELECT * FROM run_case WHERE tenant_id = @tenant_id AND id = @id;

-- name: RunCaseList :many
-- A tenant's cases, newest first; who, when not empty, keeps those
-- assigned to any of its entries.
SELECT * FROM run_case
WHERE tenant_id = @tenant_id
  AND (@status::text = '' OR status = @status)
  AND (cardinality(@who::text[]) = 0 OR assignees && @who::text[])
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunCaseSummaryList :many
-- A tenant's cases as lists show them, newest first: data only when
-- with_data asks for it and its JSON text is at most max_data_bytes;
-- data_left_out tells that it was asked for but is larger.
SELECT tenant_id, id, run_id, node, title, assignees, fields, awaiting_status, status, created_at, updated_at, updated_by, closed_at,
    (CASE WHEN @with_data::boolean AND octet_length(data::text) <= @max_data_bytes::integer THEN data END)::jsonb AS data,
    (@with_data::boolean AND octet_length(data::text) > @max_data_bytes::integer)::boolean AS data_left_out
FROM run_case
WHERE tenant_id = @tenant_id
  AND (@status::text = '' OR status = @status)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: RunCaseListByRun :many
SELECT * FROM run_case WHERE tenant_id = @tenant_id AND run_id = @run_id ORDER BY created_at;

-- name: RunCaseUpdate :one
UPDATE run_case SET status = @status, data = @data, updated_by = @updated_by, updated_at = now(),
    closed_at = CASE WHEN @close::boolean THEN now() ELSE closed_at END
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: RunCaseClose :exec
UPDATE run_case SET closed_at = now(), updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND closed_at IS NULL;

-- name: RunCaseListByRoots :many
-- The cases of every run of the trees rooted at root_ids (the roots, their
-- descendants and continuations), for the views that redact case data.
SELECT sqlc.embed(c), r.root_run_id
FROM run_case c JOIN run r ON r.tenant_id = c.tenant_id AND r.id = c.run_id
WHERE c.tenant_id = @tenant_id AND r.root_run_id = ANY(@root_ids::uuid[])
ORDER BY c.created_at;
