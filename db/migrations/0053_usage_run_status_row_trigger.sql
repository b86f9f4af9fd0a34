-- A run's final status is counted by a row trigger that fires only when
-- the status changes to or from a final one (its WHEN clause is checked
-- without calling the function), instead of a statement trigger with
-- transition tables: those made every UPDATE of run (each tick's write,
-- each tick request) copy its old and new rows, state and all, for a
-- trigger that mostly found nothing to count.
DROP TRIGGER run_usage_update ON run;

CREATE FUNCTION ductor_usage_run_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated') THEN
        INSERT INTO usage_delta (tenant_id, day, definition_key, runs_succeeded, runs_failed,
                                 runs_cancelled, runs_timed_out, runs_terminated)
        VALUES (NEW.tenant_id, ductor_utc_day(coalesce(NEW.finished_at, NEW.updated_at)), NEW.definition_key,
                (NEW.status = 'succeeded')::int, (NEW.status = 'failed')::int, (NEW.status = 'cancelled')::int,
                (NEW.status = 'timed_out')::int, (NEW.status = 'terminated')::int);
    END IF;
    IF OLD.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated') THEN
        INSERT INTO usage_delta (tenant_id, day, definition_key, runs_succeeded, runs_failed,
                                 runs_cancelled, runs_timed_out, runs_terminated)
        VALUES (OLD.tenant_id, ductor_utc_day(coalesce(OLD.finished_at, OLD.updated_at)), OLD.definition_key,
                -(OLD.status = 'succeeded')::int, -(OLD.status = 'failed')::int, -(OLD.status = 'cancelled')::int,
                -(OLD.status = 'timed_out')::int, -(OLD.status = 'terminated')::int);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER run_usage_status AFTER UPDATE OF status ON run FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          AND (NEW.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
               OR OLD.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')))
    EXECUTE FUNCTION ductor_usage_run_status();

DROP FUNCTION ductor_usage_run_update();
