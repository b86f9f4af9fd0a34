-- bridge_task holds the task attempts that bridge-SDK workers run over the
-- API: a task step whose handler this deployment has no Go handler for, or
-- whose queue is not `default`. A worker claims one with a poll, which
-- gives it a token and leases the attempt (run_attempt.lease_until, the
-- lease the sweep reports lost attempts by); heartbeats extend both
-- leases; a result deletes the row.
CREATE TABLE bridge_task (
    tenant_id       uuid        NOT NULL,
    run_id          uuid        NOT NULL,
    node            text        NOT NULL,
    generation      integer     NOT NULL,
    attempt         integer     NOT NULL,
    id              uuid        NOT NULL DEFAULT gen_random_uuid(),
    queue           text        NOT NULL,
    handler         text        NOT NULL,
    input           jsonb       NOT NULL,
    idempotency_key text        NOT NULL,
    timeout_ms      bigint      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Set by the claim: who holds the task, its token, when the attempt
    -- must be done (NULL: no timeout) and until when the claim holds
    -- without a heartbeat.
    worker_id       text,
    token           text,
    claimed_at      timestamptz,
    deadline        timestamptz,
    lease_until     timestamptz,
    PRIMARY KEY (tenant_id, run_id, node, generation, attempt),
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX bridge_task_pending_idx ON bridge_task (tenant_id, queue, handler, created_at)
    WHERE token IS NULL;
CREATE INDEX bridge_task_lease_idx ON bridge_task (lease_until)
    WHERE token IS NOT NULL;
