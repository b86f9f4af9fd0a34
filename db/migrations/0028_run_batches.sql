-- run_batch is a bulk operation on runs (cancel or retry), chosen by a
-- filter or a list of ids, worked in bounded chunks by the sweep. A
-- filter batch covers the runs created before the batch that match it,
-- walked newest first: cursor_created_at and cursor_id are where the next
-- chunk starts (NULL before the first). An id batch walks run_ids from
-- position cursor_index.
CREATE TABLE run_batch (
    tenant_id         uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id                uuid        NOT NULL,
    action            text        NOT NULL,
    filter            jsonb,
    run_ids           uuid[],
    reason            text        NOT NULL DEFAULT '',
    actor             text        NOT NULL,
    status            text        NOT NULL DEFAULT 'running',
    total             integer     NOT NULL,
    done              integer     NOT NULL DEFAULT 0,
    failed            integer     NOT NULL DEFAULT 0,
    -- errors keeps the first failures: [{run_id, message}].
    errors            jsonb       NOT NULL DEFAULT '[]',
    cursor_created_at timestamptz,
    cursor_id         uuid,
    cursor_index      integer     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX run_batch_open_idx ON run_batch (created_at) WHERE status = 'running';
CREATE INDEX run_batch_created_idx ON run_batch (tenant_id, created_at DESC, id DESC);

-- The runs list searches subjects by equality and by prefix (?q=), newest
-- first; text_pattern_ops serves LIKE 'prefix%' whatever the collation.
CREATE INDEX run_subject_idx ON run (tenant_id, subject text_pattern_ops, created_at DESC, id DESC);
