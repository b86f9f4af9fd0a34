-- Flow control per key, held in Postgres so that replicas share it:
-- which runs wait and for what, the concurrency slots of runs, the
-- starts that throttles and rate limits count, and the open debounces.
-- Every decision on one key of one pool is taken under a transaction
-- advisory lock on (tenant, pool, key), and reads what it decides on
-- after the lock.

-- flow_hold is a run that flow control holds back (its state says held)
-- and what it waits for: stage debounce (its key to be quiet until
-- due_at), throttle (its turn, at due_at) or concurrency (a slot of every
-- rule: its flow_slot rows). detail says it for people: the rule and key.
CREATE TABLE flow_hold (
    tenant_id  uuid        NOT NULL,
    run_id     uuid        NOT NULL,
    stage      text        NOT NULL CHECK (stage IN ('debounce', 'throttle', 'concurrency')),
    due_at     timestamptz,
    detail     jsonb       NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT ductor_now(),
    PRIMARY KEY (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX flow_hold_due_idx ON flow_hold (due_at) WHERE due_at IS NOT NULL;

-- flow_slot is a run's place under one concurrency rule: held (the run
-- holds a slot of the key) or waiting for one, in arrival order (seq).
-- A held slot counts while its run has not ended: a run's end releases
-- its slots in the very commit that ends it, whoever ends it, so no slot
-- can leak; rows of ended runs are only swept away later. limit is the
-- rule's limit as evaluated for this run; cancelling marks a run that
-- cancel_in_progress is cancelling (it still holds its slot until it
-- ends).
CREATE TABLE flow_slot (
    tenant_id      uuid        NOT NULL,
    run_id         uuid        NOT NULL,
    pool           text        NOT NULL,
    key            text        NOT NULL,
    seq            bigint      GENERATED ALWAYS AS IDENTITY,
    "limit"        integer     NOT NULL CHECK ("limit" > 0),
    strategy       text        NOT NULL,
    held           boolean     NOT NULL,
    cancelling     boolean     NOT NULL DEFAULT false,
    definition_key text        NOT NULL,
    rule           integer     NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT ductor_now(),
    PRIMARY KEY (tenant_id, run_id, pool),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX flow_slot_key_idx ON flow_slot (tenant_id, pool, key, seq);
CREATE INDEX flow_slot_waiting_idx ON flow_slot (tenant_id, pool, key, seq) WHERE NOT held;

-- flow_start is one start a throttle or a rate limit counts, at the time
-- it was (or, throttled, will be) let through; a row is kept until
-- expires_at (at plus the period), past which it counts no more.
CREATE TABLE flow_start (
    tenant_id  uuid        NOT NULL,
    pool       text        NOT NULL,
    key        text        NOT NULL,
    at         timestamptz NOT NULL,
    run_id     uuid        NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, pool, key, at, run_id)
);

CREATE INDEX flow_start_expires_idx ON flow_start (expires_at);

-- flow_debounce is a key's open debounce: the pending run its starts
-- coalesce into, until when it may be put off (max_at, NULL: no bound),
-- and how many starts it took.
CREATE TABLE flow_debounce (
    tenant_id uuid        NOT NULL,
    pool      text        NOT NULL,
    key       text        NOT NULL,
    run_id    uuid        NOT NULL,
    max_at    timestamptz,
    starts    integer     NOT NULL DEFAULT 1,
    PRIMARY KEY (tenant_id, pool, key),
    UNIQUE (tenant_id, run_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES run (tenant_id, id) ON DELETE CASCADE
);

-- A bridge task of a step with a concurrency pool names its key, so that
-- admission counts it with the pool's step jobs.
ALTER TABLE bridge_task ADD COLUMN flow_key text;

CREATE INDEX bridge_task_flow_idx ON bridge_task (tenant_id, flow_key) WHERE flow_key IS NOT NULL;
