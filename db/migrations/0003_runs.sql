-- Runs and what the coordinator keeps for them: nodes, attempts, history,
-- the durable inputs its tick drains, and timers.

CREATE TABLE run (
    tenant_id             uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id                    uuid        NOT NULL,
    definition_key        text        NOT NULL,
    definition_version    integer     NOT NULL,
    manifest_hash         text        NOT NULL,
    status                text        NOT NULL,
    reason                text,
    subject               text        NOT NULL DEFAULT '',
    search_attributes     jsonb       NOT NULL DEFAULT '{}',
    parent_run_id         uuid,
    root_run_id           uuid        NOT NULL,
    depth                 integer     NOT NULL DEFAULT 0,
    continued_from_run_id uuid,
    continued_to_run_id   uuid,
    idempotency_key       text,
    -- state is the engine's view of the run (input, output, error, meta,
    -- deadlines, pending controls); the columns above are what lists and
    -- filters need.
    state                 jsonb       NOT NULL,
    transition_count      bigint      NOT NULL DEFAULT 0,
    record_version        bigint      NOT NULL DEFAULT 0,
    -- tick_requested coalesces wakes: a wake that flips it enqueues a tick;
    -- the tick clears it before it reads, so a wake during a tick causes
    -- exactly one more.
    tick_requested        boolean     NOT NULL DEFAULT false,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    finished_at           timestamptz,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX run_idempotency_idx ON run (tenant_id, definition_key, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX run_created_idx ON run (tenant_id, created_at DESC, id DESC);
CREATE INDEX run_status_idx ON run (tenant_id, status, created_at DESC, id DESC);
CREATE INDEX run_definition_idx ON run (tenant_id, definition_key, created_at DESC, id DESC);
CREATE INDEX run_parent_idx ON run (tenant_id, parent_run_id, created_at DESC, id DESC)
    WHERE parent_run_id IS NOT NULL;
CREATE INDEX run_search_attributes_idx ON run USING gin (search_attributes jsonb_path_ops);

CREATE TABLE run_node (
    tenant_id   uuid        NOT NULL,
    run_id      uuid        NOT NULL,
    node        text        NOT NULL,
    ref         text        NOT NULL,
    state       text        NOT NULL,
    -- scatter and child_index place a scatter child; NULL for steps.
    scatter     text,
    child_index integer,
    data        jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, run_id, node),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_node_children_idx ON run_node (tenant_id, run_id, scatter, child_index)
    WHERE scatter IS NOT NULL;

CREATE TABLE run_attempt (
    tenant_id   uuid        NOT NULL,
    run_id      uuid        NOT NULL,
    node        text        NOT NULL,
    generation  integer     NOT NULL,
    attempt     integer     NOT NULL,
    started_at  timestamptz,
    finished_at timestamptz,
    -- lease_until is when a started attempt without a result is presumed
    -- lost with its worker (timeout plus a rescue window).
    lease_until timestamptz,
    output      jsonb,
    error       jsonb,
    PRIMARY KEY (tenant_id, run_id, node, generation, attempt),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_attempt_lease_idx ON run_attempt (lease_until)
    WHERE lease_until IS NOT NULL AND finished_at IS NULL;

CREATE TABLE run_history (
    tenant_id  uuid        NOT NULL,
    run_id     uuid        NOT NULL,
    seq        bigint      NOT NULL,
    at         timestamptz NOT NULL,
    node       text        NOT NULL DEFAULT '',
    from_state text        NOT NULL,
    to_state   text        NOT NULL,
    generation integer     NOT NULL DEFAULT 0,
    attempt    integer     NOT NULL DEFAULT 0,
    detail     text        NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, run_id, seq),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

-- run_input holds what a tick drains: step results, controls, fired
-- timers. dedup_key makes a duplicate delivery a no-op.
CREATE TABLE run_input (
    tenant_id   uuid        NOT NULL,
    run_id      uuid        NOT NULL,
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    kind        text        NOT NULL,
    dedup_key   text        NOT NULL,
    payload     jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    consumed_at timestamptz,
    PRIMARY KEY (tenant_id, run_id, id),
    UNIQUE (tenant_id, run_id, dedup_key),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_input_pending_idx ON run_input (tenant_id, run_id, id) WHERE consumed_at IS NULL;

-- run_timer is the durable timer table: a due timer becomes a run_input
-- and wakes its run.
CREATE TABLE run_timer (
    tenant_id uuid        NOT NULL,
    run_id    uuid        NOT NULL,
    timer_id  text        NOT NULL,
    node      text        NOT NULL DEFAULT '',
    fire_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, run_id, timer_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_timer_due_idx ON run_timer (fire_at);

-- run_dispatch holds step attempts waiting out a retry backoff; the sweep
-- enqueues each when it is due.
CREATE TABLE run_dispatch (
    tenant_id  uuid        NOT NULL,
    run_id     uuid        NOT NULL,
    node       text        NOT NULL,
    generation integer     NOT NULL,
    attempt    integer     NOT NULL,
    fire_at    timestamptz NOT NULL,
    queue      text        NOT NULL,
    args       jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, run_id, node, generation, attempt),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_dispatch_due_idx ON run_dispatch (fire_at);
