-- name: AuditRecord :exec
INSERT INTO audit_log (tenant_id, actor, action, target, details)
VALUES (@tenant_id, @actor, @action, @target, @details);

-- name: AuditList :many
SELECT * FROM audit_log
WHERE tenant_id = @tenant_id
ORDER BY at DESC, id DESC
LIMIT @max;
