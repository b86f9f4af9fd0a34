-- Schedules start runs of a definition at the times their spec names
-- (cron or interval, see app/schedule). The firing loop claims a due
-- schedule with SKIP LOCKED and, in one transaction, starts its actions
-- and moves next_at on, so replicas share the work and never act twice.

CREATE TABLE schedule (
    tenant_id          uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id                 text        NOT NULL CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
    definition_key     text        NOT NULL,
    -- definition_version 0 starts the newest published version.
    definition_version integer     NOT NULL DEFAULT 0,
    spec               jsonb       NOT NULL,
    input              jsonb,
    overlap            text        NOT NULL DEFAULT 'skip',
    catchup_window_ms  bigint      NOT NULL,
    pause_on_failure   boolean     NOT NULL DEFAULT false,
    paused             boolean     NOT NULL DEFAULT false,
    note               text        NOT NULL DEFAULT '',
    -- last_error is why the last action could not start a run, if it could not.
    last_error         text        NOT NULL DEFAULT '',
    -- owned: declared in the definition's document; publishing the
    -- definition creates, updates and removes it.
    owned              boolean     NOT NULL DEFAULT false,
    -- next_at is the first nominal time not yet handled (NULL: none is
    -- left); due_at is next_at plus its jitter, what the loop waits for.
    next_at            timestamptz,
    due_at             timestamptz,
    actions            bigint      NOT NULL DEFAULT 0,
    skipped            bigint      NOT NULL DEFAULT 0,
    missed             bigint      NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX schedule_due_idx ON schedule (due_at) WHERE NOT paused AND due_at IS NOT NULL;
CREATE INDEX schedule_owner_idx ON schedule (tenant_id, definition_key) WHERE owned;

-- schedule_action is one action of a schedule, keyed by its scheduled
-- time: buffered (waiting for the running run to end), running (its run
-- has not ended) or done (run_status says how it ended). The key makes a
-- scheduled time start at most one run, whoever tries.
CREATE TABLE schedule_action (
    tenant_id    uuid        NOT NULL,
    schedule_id  text        NOT NULL,
    scheduled_at timestamptz NOT NULL,
    state        text        NOT NULL CHECK (state IN ('buffered', 'running', 'done')),
    -- source: schedule (its spec), trigger (now, on request) or backfill.
    source       text        NOT NULL,
    run_id       uuid,
    run_status   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, schedule_id, scheduled_at),
    FOREIGN KEY (tenant_id, schedule_id) REFERENCES schedule (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX schedule_action_running_idx ON schedule_action (tenant_id, schedule_id) WHERE state = 'running';
CREATE INDEX schedule_action_buffered_idx ON schedule_action (tenant_id, schedule_id, scheduled_at) WHERE state = 'buffered';
