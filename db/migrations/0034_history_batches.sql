-- A run's history is written as one row per run and tick instead of one
-- row per transition: a chain's step made three rows (and three index
-- entries) each tick, a scatter's tick hundreds. A batch holds the
-- transitions of one tick in seq order, each as
-- [seq, node, from_state, to_state, generation, attempt, detail], with
-- the tick's clock as at; run_history is a view with the old rows.
CREATE TABLE run_history_batch (
    tenant_id   uuid        NOT NULL,
    run_id      uuid        NOT NULL,
    -- last_seq is the batch's highest seq: readers find the batches after
    -- a seq by it.
    last_seq    bigint      NOT NULL,
    at          timestamptz NOT NULL,
    transitions jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, run_id, last_seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

INSERT INTO run_history_batch (tenant_id, run_id, last_seq, at, transitions)
SELECT tenant_id, run_id, seq, at,
       jsonb_build_array(jsonb_build_array(seq, node, from_state, to_state, generation, attempt, detail))
FROM run_history;

DROP TABLE run_history;

CREATE VIEW run_history AS
SELECT b.tenant_id, b.run_id, (t.e->>0)::bigint AS seq, b.at, (t.e->>1)::text AS node, (t.e->>2)::text AS from_state,
       (t.e->>3)::text AS to_state, (t.e->>4)::integer AS generation, (t.e->>5)::integer AS attempt,
       (t.e->>6)::text AS detail
FROM run_history_batch b CROSS JOIN LATERAL jsonb_array_elements(b.transitions) AS t(e);
