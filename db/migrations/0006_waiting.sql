-- What waiting runs wait on: signals, tenant events and the nodes that
-- listen for them, approvals with their decisions, human-loop cases; and
-- the clock shift that lets tests move the database's time forward.

-- clock_shift moves every deadline comparison (ductor_now) forward. It is
-- empty in production; tests insert a row to make a day pass at once.
CREATE TABLE clock_shift (
    singleton boolean NOT NULL DEFAULT true PRIMARY KEY CHECK (singleton),
    shift     interval NOT NULL
);

-- ductor_now is now() plus the clock shift: the time timers and the tick
-- compare with.
CREATE FUNCTION ductor_now() RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT now() + coalesce((SELECT shift FROM clock_shift), interval '0')
$$;

-- run_signal holds every signal sent to a run. chain_run_id is the first
-- run of the run's ContinueAsNew chain, so a request id stays unique across
-- the chain; run_id is the run that holds the signal now (buffered signals
-- move to a successor). status: pending (not drained yet), buffered (no
-- step waited for it), consumed (node set) or rejected (buffer full).
CREATE TABLE run_signal (
    tenant_id    uuid        NOT NULL,
    chain_run_id uuid        NOT NULL,
    request_id   text        NOT NULL,
    run_id       uuid        NOT NULL,
    seq          bigint      GENERATED ALWAYS AS IDENTITY,
    name         text        NOT NULL,
    payload      jsonb,
    status       text        NOT NULL DEFAULT 'pending',
    node         text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, chain_run_id, request_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_signal_open_idx ON run_signal (tenant_id, run_id, seq)
    WHERE status IN ('pending', 'buffered');

-- event is a tenant-wide event. An idempotency key makes a repeat return
-- the first event.
CREATE TABLE event (
    tenant_id       uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id              uuid        NOT NULL,
    name            text        NOT NULL,
    data            jsonb,
    idempotency_key text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX event_idempotency_idx ON event (tenant_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX event_name_idx ON event (tenant_id, name, created_at DESC);

-- event_wait lists the nodes waiting for an event name (event, event_set,
-- digest), so a new event finds its runs by (tenant, name) without looking
-- at any other run. A row lives while its node waits.
CREATE TABLE event_wait (
    tenant_id  uuid        NOT NULL,
    name       text        NOT NULL,
    run_id     uuid        NOT NULL,
    node       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, name, run_id, node),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX event_wait_node_idx ON event_wait (tenant_id, run_id, node);

-- event_use records which node consumed which event: at most once each.
CREATE TABLE event_use (
    tenant_id   uuid        NOT NULL,
    run_id      uuid        NOT NULL,
    node        text        NOT NULL,
    event_id    uuid        NOT NULL,
    consumed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, run_id, node, event_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

-- approval is an approval step's request. Its id derives from the node's
-- idempotency key, so a re-executed tick opens nothing twice. status:
-- pending, approved, rejected, closed (the node ended otherwise).
CREATE TABLE approval (
    tenant_id     uuid        NOT NULL,
    id            uuid        NOT NULL,
    run_id        uuid        NOT NULL,
    node          text        NOT NULL,
    title         text        NOT NULL DEFAULT '',
    description   text        NOT NULL DEFAULT '',
    approvers     text[]      NOT NULL,
    min_approvals integer     NOT NULL DEFAULT 1,
    status        text        NOT NULL DEFAULT 'pending',
    expires_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    decided_at    timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX approval_status_idx ON approval (tenant_id, status, created_at DESC, id DESC);
CREATE INDEX approval_approvers_idx ON approval USING gin (approvers) WHERE status = 'pending';
CREATE INDEX approval_run_idx ON approval (tenant_id, run_id);

-- approval_decision is one person's decision: one per person.
CREATE TABLE approval_decision (
    tenant_id   uuid        NOT NULL,
    approval_id uuid        NOT NULL,
    decided_by  text        NOT NULL,
    approved    boolean     NOT NULL,
    comment     text        NOT NULL DEFAULT '',
    decided_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, approval_id, decided_by),
    FOREIGN KEY (tenant_id, approval_id) REFERENCES approval (tenant_id, id) ON DELETE CASCADE
);

-- run_case is a human_loop step's case; data is checked against fields
-- (a JSON Schema). closed_at is set once the node stops waiting on it.
CREATE TABLE run_case (
    tenant_id       uuid        NOT NULL,
    id              uuid        NOT NULL,
    run_id          uuid        NOT NULL,
    node            text        NOT NULL,
    title           text        NOT NULL DEFAULT '',
    assignees       text[]      NOT NULL DEFAULT '{}',
    fields          jsonb,
    awaiting_status text        NOT NULL,
    status          text        NOT NULL DEFAULT 'open',
    data            jsonb       NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    closed_at       timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX run_case_status_idx ON run_case (tenant_id, status, created_at DESC, id DESC);
CREATE INDEX run_case_run_idx ON run_case (tenant_id, run_id);
