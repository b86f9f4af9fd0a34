-- name: RunInputInsert :execrows
-- A duplicate (same dedup key) inserts nothing.
INSERT INTO run_input (tenant_id, run_id, kind, dedup_key, payload)
VALUES (@tenant_id, @run_id, @kind, @dedup_key, @payload)
ON CONFLICT (tenant_id, run_id, dedup_key) DO NOTHING;

-- name: RunInputInsertMany :exec
-- Inputs of one run, in order; duplicates insert nothing.
INSERT INTO run_input (tenant_id, run_id, kind, dedup_key, payload)
SELECT @tenant_id, @run_id, i.kind, i.dedup_key, i.payload::jsonb
FROM (SELECT unnest(@kinds::text[]) AS kind,
             unnest(@dedup_keys::text[]) AS dedup_key,
             unnest(@payloads::text[]) AS payload) AS i
ON CONFLICT (tenant_id, run_id, dedup_key) DO NOTHING;

-- name: RunInputConsumeMany :execrows
-- Input ids are unique across runs; the runs narrow the index scan. An
-- input already consumed is not consumed again: fewer rows than ids means
-- another tick drained some of them, and the tick that read them must not
-- commit.
UPDATE run_input SET consumed_at = now()
WHERE tenant_id = ANY(@tenant_ids::uuid[]) AND run_id = ANY(@run_ids::uuid[]) AND id = ANY(@ids::bigint[])
  AND consumed_at IS NULL;
