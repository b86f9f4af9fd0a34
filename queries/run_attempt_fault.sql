-- name: RunAttemptDropLease :exec
-- Takes an attempt's lease away (shell.Testing.UnleasedLocalSteps, a
-- fault the checker must find: an attempt no sweep can report lost).
UPDATE run_attempt SET lease_until = NULL
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node
  AND generation = @generation AND attempt = @attempt;
