-- What exactly-once needs of the schema: a hash of the request that made
-- a run or an event under an idempotency key, so that the same key with
-- a different request is refused instead of answered with the first; and
-- the nemesis the concurrency checker pauses ticks with.

-- request_hash is the SHA-256 of what a trigger asked for (definition
-- version, input, subject, context, search attributes) or of an event
-- (name, data), kept only with an idempotency key. Rows made before this
-- migration have none, and any request matches them.
ALTER TABLE run ADD COLUMN request_hash text;
ALTER TABLE event ADD COLUMN request_hash text;

-- ductor_fault_pause pauses the calling statement for the session's
-- ductor.fault_pause_ms milliseconds, with probability
-- ductor.fault_pause_chance (default 1), and returns true. Production
-- never sets either setting, and the function then returns at once. A
-- tick's locking statement calls it after its snapshot is taken and
-- before it locks its runs, so that the concurrency checker can widen
-- the window in which another tick commits between the two.
CREATE FUNCTION ductor_fault_pause() RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    ms float8 := coalesce(nullif(current_setting('ductor.fault_pause_ms', true), '')::float8, 0);
BEGIN
    IF ms > 0 AND random() < coalesce(nullif(current_setting('ductor.fault_pause_chance', true), '')::float8, 1) THEN
        PERFORM pg_sleep(ms / 1000);
    END IF;
    RETURN true;
END
$$;

-- A run's created_at is the clock its first tick decides with (a trigger
-- ticks the run it just inserted without reading the clock again), so it
-- is the database's clock as ticks read it.
ALTER TABLE run ALTER COLUMN created_at SET DEFAULT ductor_now();
