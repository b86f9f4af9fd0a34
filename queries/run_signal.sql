-- name: RunSignalInsert :execrows
-- A repeated request id in the run's chain inserts nothing.
INSERT INTO run_signal (tenant_id, chain_run_id, request_id, run_id, name, payload)
VALUES (@tenant_id, @chain_run_id, @request_id, @run_id, @name, @payload)
ON CONFLICT (tenant_id, chain_run_id, request_id) DO NOTHING;

-- name: RunSignalLock :exec
-- Serialises, until the transaction ends, the senders of signals to one
-- run, so that counting against the bound and inserting are atomic. It
-- leaves the run row alone: ticks hold that.
SELECT pg_advisory_xact_lock(@lock_key::bigint);

-- name: RunSignalCountOpen :one
-- Signals of the run not consumed yet: the bound's measure.
SELECT count(*) FROM run_signal
WHERE tenant_id = @tenant_id AND run_id = @run_id AND status IN ('pending', 'buffered');

-- name: RunSignalListBuffered :many
SELECT * FROM run_signal
WHERE tenant_id = @tenant_id AND run_id = @run_id AND status = 'buffered'
ORDER BY seq;

-- name: RunSignalSetStatus :exec
UPDATE run_signal SET status = @status, node = @node, updated_at = now()
WHERE tenant_id = @tenant_id AND chain_run_id = @chain_run_id AND request_id = @request_id;

-- name: RunSignalMove :execrows
-- Buffered and pending signals follow a ContinueAsNew to the successor.
UPDATE run_signal SET run_id = @to_run_id, updated_at = now()
WHERE tenant_id = @tenant_id AND run_id = @from_run_id AND status IN ('pending', 'buffered');

-- name: RunSignalList :many
SELECT * FROM run_signal
WHERE tenant_id = @tenant_id AND run_id = @run_id
ORDER BY seq;

-- name: RunChainRoot :one
-- The first run of a run's ContinueAsNew chain.
WITH RECURSIVE chain AS (
    SELECT r.id, r.continued_from_run_id, 0 AS depth FROM run r
    WHERE r.tenant_id = @tenant_id AND r.id = @run_id
  UNION ALL
    SELECT p.id, p.continued_from_run_id, c.depth + 1 FROM run p
    JOIN chain c ON p.tenant_id = @tenant_id AND p.id = c.continued_from_run_id
)
SELECT id FROM chain ORDER BY depth DESC LIMIT 1;

-- name: RunSignalPayload :one
-- The payload of a signal the run holds, for its download.
SELECT payload FROM run_signal
WHERE tenant_id = @tenant_id AND run_id = @run_id AND request_id = @request_id;
