-- step_worker: every process with the steps role says, every few
-- seconds, that it works the step queues: a row per process and queue,
-- seen_at by the database's clock. A task step's River job still
-- available past its schedule_to_start fails as no_worker only when no
-- process has been seen working its queue lately, so a long backlog
-- behind live workers is never taken for a missing worker. Rows of
-- processes gone for an hour are removed by the others.
CREATE TABLE step_worker (
    queue      text        NOT NULL,
    process_id uuid        NOT NULL,
    started_at timestamptz NOT NULL DEFAULT ductor_now(),
    seen_at    timestamptz NOT NULL DEFAULT ductor_now(),
    PRIMARY KEY (queue, process_id)
);
