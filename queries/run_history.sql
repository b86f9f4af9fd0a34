-- name: RunHistoryInsertMany :exec
-- Transitions of one or more runs, one batch row per run and tick clock
-- (a tick decides on one clock, so one batch per run and tick).
INSERT INTO run_history_batch (tenant_id, run_id, last_seq, at, transitions)
SELECT h.tenant_id, h.run_id, max(h.seq), h.at,
       jsonb_agg(jsonb_build_array(h.seq, h.node, h.from_state, h.to_state, h.generation, h.attempt, h.detail) ORDER BY h.seq)
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
GROUP BY h.tenant_id, h.run_id, h.at
ON CONFLICT DO NOTHING;

-- name: RunHistoryList :many
-- The transitions after after_seq, oldest first, from the first max_rows
-- batches that hold any (each holds at least one).
SELECT (t.e->>0)::bigint AS seq, b.at, (t.e->>1)::text AS node, (t.e->>2)::text AS from_state,
       (t.e->>3)::text AS to_state, (t.e->>4)::integer AS generation, (t.e->>5)::integer AS attempt,
       (t.e->>6)::text AS detail
FROM (SELECT * FROM run_history_batch
      WHERE tenant_id = @tenant_id AND run_id = @run_id AND last_seq > @after_seq
      ORDER BY last_seq
      LIMIT @max_rows) b
CROSS JOIN LATERAL jsonb_array_elements(b.transitions) AS t(e)
WHERE (t.e->>0)::bigint > @after_seq
ORDER BY 1
LIMIT @max_rows;

-- name: RunHistoryFirstFailure :one
-- The seq of the run's first transition into failed (0: none), for the
-- inspector's jump to where a run went wrong.
SELECT coalesce(min((t.e->>0)::bigint), 0)::bigint AS seq
FROM run_history_batch b CROSS JOIN LATERAL jsonb_array_elements(b.transitions) AS t(e)
WHERE b.tenant_id = @tenant_id AND b.run_id = @run_id AND t.e->>3 = 'failed';
