-- name: RunHistoryInsertMany :exec
-- Transitions of one or more runs.
INSERT INTO run_history (tenant_id, run_id, seq, at, node, from_state, to_state, generation, attempt, detail)
SELECT h.tenant_id, h.run_id, h.seq, h.at, h.node, h.from_state, h.to_state, h.generation, h.attempt, h.detail
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@seqs::bigint[]) AS seq,
             unnest(@ats::timestamptz[]) AS at,
             unnest(@nodes::text[]) AS node,
             unnest(@from_states::text[]) AS from_state,
             unnest(@to_states::text[]) AS to_state,
             unnest(@generations::integer[]) AS generation,
             unnest(@attempts::integer[]) AS attempt,
             unnest(@details::text[]) AS detail) AS h
ON CONFLICT DO NOTHING;

-- name: RunHistoryList :many
SELECT * FROM run_history
WHERE tenant_id = @tenant_id AND run_id = @run_id AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;
