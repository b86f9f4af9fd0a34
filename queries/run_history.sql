-- name: RunHistoryInsertMany :exec
-- Transitions of one or more runs, one batch row per run and tick clock
-- (a tick decides on one clock, so one batch per run and tick).
INSERT INTO run_history_batch (tenant_id, run_id, last_seq, at, transitions, definition_key)
SELECT h.tenant_id, h.run_id, max(h.seq), h.at,
       jsonb_agg(jsonb_build_array(h.seq, h.node, h.from_state, h.to_state, h.generation, h.attempt, h.detail) ORDER BY h.seq),
       NULLIF(h.definition_key, '')
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@seqs::bigint[]) AS seq,
             unnest(@ats::timestamptz[]) AS at,
             unnest(@nodes::text[]) AS node,
             unnest(@from_states::text[]) AS from_state,
             unnest(@to_states::text[]) AS to_state,
             unnest(@generations::integer[]) AS generation,
             unnest(@attempts::integer[]) AS attempt,
             unnest(@details::text[]) AS detail,
             unnest(@definition_keys::text[]) AS definition_key) AS h
GROUP BY h.tenant_id, h.run_id, h.at, h.definition_key
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

-- name: RunHistoryPageAsc :many
-- One page of the transitions after after_seq, oldest first, those of
-- node alone ('': every node and the run) of one kind ('': any; see
-- store.HistoryKinds). The batches are read in last_seq order through the
-- primary key and their transitions in batch order, so the scan stops
-- once max_rows have matched: no OFFSET, whatever the history's length.
SELECT (t.e->>0)::bigint AS seq, b.at, (t.e->>1)::text AS node, (t.e->>2)::text AS from_state,
       (t.e->>3)::text AS to_state, (t.e->>4)::integer AS generation, (t.e->>5)::integer AS attempt,
       (t.e->>6)::text AS detail
FROM run_history_batch b
CROSS JOIN LATERAL jsonb_array_elements(b.transitions) WITH ORDINALITY AS t(e, n)
WHERE b.tenant_id = @tenant_id AND b.run_id = @run_id AND b.last_seq > @after_seq
  AND (t.e->>0)::bigint > @after_seq
  AND (@node::text = '' OR t.e->>1 = @node::text)
  AND (@kind::text = '' OR CASE @kind::text
        WHEN 'run' THEN t.e->>1 = ''
        WHEN 'started' THEN t.e->>1 <> '' AND t.e->>3 = 'running' AND t.e->>2 <> 'running'
        WHEN 'retried' THEN t.e->>1 <> '' AND t.e->>6 LIKE 'retry%'
        WHEN 'signal' THEN t.e->>1 <> '' AND t.e->>3 = 'waiting' AND t.e->>6 IN ('signal', 'event', 'event_set')
        ELSE t.e->>1 <> '' AND t.e->>3 = @kind::text AND t.e->>2 <> @kind::text END)
ORDER BY b.last_seq, t.n
LIMIT @max_rows;

-- name: RunHistoryPageDesc :many
-- One page of the transitions before before_seq, newest first, filtered
-- as RunHistoryPageAsc. The batch that holds before_seq - 1 may end after
-- it, so the scan starts at the first batch ending at or after
-- before_seq and walks the primary key backwards.
SELECT (t.e->>0)::bigint AS seq, b.at, (t.e->>1)::text AS node, (t.e->>2)::text AS from_state,
       (t.e->>3)::text AS to_state, (t.e->>4)::integer AS generation, (t.e->>5)::integer AS attempt,
       (t.e->>6)::text AS detail
FROM run_history_batch b
CROSS JOIN LATERAL jsonb_array_elements(b.transitions) WITH ORDINALITY AS t(e, n)
WHERE b.tenant_id = @tenant_id AND b.run_id = @run_id
  AND b.last_seq <= coalesce((SELECT min(f.last_seq) FROM run_history_batch f
                              WHERE f.tenant_id = @tenant_id AND f.run_id = @run_id AND f.last_seq >= @before_seq),
                             @before_seq)
  AND (t.e->>0)::bigint < @before_seq
  AND (@node::text = '' OR t.e->>1 = @node::text)
  AND (@kind::text = '' OR CASE @kind::text
        WHEN 'run' THEN t.e->>1 = ''
        WHEN 'started' THEN t.e->>1 <> '' AND t.e->>3 = 'running' AND t.e->>2 <> 'running'
        WHEN 'retried' THEN t.e->>1 <> '' AND t.e->>6 LIKE 'retry%'
        WHEN 'signal' THEN t.e->>1 <> '' AND t.e->>3 = 'waiting' AND t.e->>6 IN ('signal', 'event', 'event_set')
        ELSE t.e->>1 <> '' AND t.e->>3 = @kind::text AND t.e->>2 <> @kind::text END)
ORDER BY b.last_seq DESC, t.n DESC
LIMIT @max_rows;
