-- Retention of finished runs: each tenant keeps a finished run (with its
-- children and ContinueAsNew chain, all of which share its root_run_id)
-- for retention_seconds after the last of them finished (0 keeps them
-- forever); the prune pass deletes them, and the events that woke nothing
-- once they are as old, in small batches.
ALTER TABLE tenant
    ADD COLUMN retention_seconds bigint NOT NULL DEFAULT 2592000 CHECK (retention_seconds >= 0);

-- The prune pass walks a tenant's finished runs oldest first, and gathers
-- each one's relatives by their root.
CREATE INDEX run_finished_idx ON run (tenant_id, finished_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX run_root_idx ON run (tenant_id, root_run_id);

-- Old events, and whether any node consumed one.
CREATE INDEX event_created_idx ON event (tenant_id, created_at, id);
CREATE INDEX event_use_event_idx ON event_use (tenant_id, event_id);

-- Whether a schedule still counts a run as running (the prune leaves such
-- a run until the schedule has settled its action).
CREATE INDEX schedule_action_run_idx ON schedule_action (tenant_id, run_id) WHERE state = 'running';
