-- name: ApprovalInsert :exec
-- A re-executed tick opens nothing twice: the id derives from the node's key.
INSERT INTO approval (tenant_id, id, run_id, node, title, description, approvers, min_approvals, expires_at)
VALUES (@tenant_id, @id, @run_id, @node, @title, @description, @approvers, @min_approvals, @expires_at)
ON CONFLICT (tenant_id, id) DO NOTHING;

-- name: ApprovalGet :one
SELECT * FROM approval WHERE tenant_id = @tenant_id AND id = @id;

-- name: ApprovalGetForUpdate :one
SELECT * FROM approval WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: ApprovalList :many
-- A tenant's approvals, newest first; who, when not empty, keeps those
-- addressed to any of its entries (an email, role:NAME).
SELECT * FROM approval
WHERE tenant_id = @tenant_id
  AND (@status::text = '' OR status = @status)
  AND (cardinality(@who::text[]) = 0 OR approvers && @who::text[])
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: ApprovalListByRun :many
SELECT * FROM approval WHERE tenant_id = @tenant_id AND run_id = @run_id ORDER BY created_at;

-- name: ApprovalSetStatus :exec
UPDATE approval SET status = @status, decided_at = now()
WHERE tenant_id = @tenant_id AND id = @id;

-- name: ApprovalClose :exec
UPDATE approval SET status = 'closed', decided_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND status = 'pending';

-- name: ApprovalDecisionInsert :execrows
INSERT INTO approval_decision (tenant_id, approval_id, decided_by, principal, approved, comment)
VALUES (@tenant_id, @approval_id, @decided_by, @principal, @approved, @comment)
ON CONFLICT DO NOTHING;

-- name: ApprovalDecisionList :many
-- preview > 0 cuts each comment to its first preview characters (lists);
-- comment_length is the whole comment's.
SELECT approval_id, decided_by, principal, approved, decided_at,
    CASE WHEN @preview::integer > 0 THEN left(comment, @preview::integer) ELSE comment END::text AS comment,
    char_length(comment)::integer AS comment_length
FROM approval_decision
WHERE tenant_id = @tenant_id AND approval_id = ANY(@approval_ids::uuid[])
ORDER BY decided_at, decided_by;

-- name: ApprovalDecisionCountApproved :one
SELECT count(*) FROM approval_decision
WHERE tenant_id = @tenant_id AND approval_id = @approval_id AND approved;
