-- A task that no worker claims within its schedule_to_start fails with
-- no_worker instead of waiting forever. The tenant's setting applies to
-- task steps that set none (0: the default, 5 minutes). A bridge task
-- records its own value and, from the database's clock when it was
-- stored, the instant it must be claimed by (start_by).
ALTER TABLE tenant
    ADD COLUMN schedule_to_start_ms bigint NOT NULL DEFAULT 0 CHECK (schedule_to_start_ms >= 0);

ALTER TABLE bridge_task
    ADD COLUMN schedule_to_start_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN start_by timestamptz;

CREATE INDEX bridge_task_start_by_idx ON bridge_task (start_by)
    WHERE token IS NULL;
