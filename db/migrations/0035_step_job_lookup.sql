-- River indexes every job's args and metadata with GIN. A step job's args
-- carry a dozen keys and the step's params, so each of its three row
-- versions (queued, running, completed) added dozens of GIN entries, and
-- merging the pending lists fell to River's own statements: in the chain
-- benchmark (under pg_stat_statements) River's insert, fetch and
-- completion of step jobs took 0.87 ms of execution per step with the two
-- indexes and 0.31 ms without, and WAL per step fell from 11.3 to 6.4 KiB.
-- Ductor's own lookups of step jobs (a tenant's in flight, an attempt's
-- live jobs) use one btree instead, with entries only for jobs that have
-- not finished. River's reindexer is told to leave the dropped indexes out
-- (workers.NewClient); nothing else in River reads them.
DROP INDEX river_job_args_index;
DROP INDEX river_job_metadata_index;

CREATE INDEX river_job_ductor_step_idx ON river_job ((args->>'tenant_id'), (args->>'run_id'), (args->>'node'))
    WHERE kind = 'ductor.step' AND state NOT IN ('completed', 'cancelled', 'discarded');

-- The retention prune deletes a run's jobs of both kinds in every state
-- but running, found by the run id alone (one btree entry per job
-- version, where the GIN index made dozens).
CREATE INDEX river_job_ductor_run_idx ON river_job ((args->>'run_id'))
    WHERE kind IN ('ductor.tick', 'ductor.step');

-- Step pools count a key's step jobs that hold a slot (queued, running,
-- snoozed or retried), and the pool gauges every tenant's: only the jobs
-- of a pool are in this index, so a step outside any pool adds nothing
-- to it.
CREATE INDEX river_job_ductor_flow_idx ON river_job ((args->>'tenant_id'), (args->>'flow_key'))
    WHERE kind = 'ductor.step' AND state IN ('available', 'running', 'scheduled', 'retryable') AND args ? 'flow_key';
