package checker

// A run holds its concurrency slots from the commit that starts it to the
// commit that ends it: what other transactions see, and what flow control
// decides on. The run's own started_at and finished_at cannot tell that
// order: they are the deciding tick's now(), its transaction's start, and
// a transaction that began before another run's end can start a run once
// that end has committed (a start that waited on its key's lock, a tick
// paused before its lock), with a started_at before the finished_at of
// the run whose slot it took.
//
// So the checker records each run's spans itself, in checker_run_span: a
// deferred trigger on run, fired as the transaction that moved the run
// commits, notes the moment a run began going (out of pending, or
// reopened from an end) and the moment it stopped (ended), from
// clock_timestamp() read once per transaction, at its first such
// trigger. A start that took the slot an end freed saw that end
// committed, so its transaction's moment comes after the end's; the
// starts and ends of one transaction share one moment, as they become
// visible together (a ContinueAsNew successor taking over its
// predecessor's slot). What the moments leave out is only the time
// between a transaction's last trigger and its commit being visible.
const spanTable = `CREATE TABLE IF NOT EXISTS checker_run_span (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id      uuid        NOT NULL,
    run_id         uuid        NOT NULL,
    definition_key text        NOT NULL,
    key            text        NOT NULL,
    started_at     timestamptz NOT NULL,
    finished_at    timestamptz,
    ended_as       text,
    reason         text
);
CREATE INDEX IF NOT EXISTS checker_run_span_open ON checker_run_span (tenant_id, run_id) WHERE finished_at IS NULL;

CREATE OR REPLACE FUNCTION checker_commit_moment() RETURNS timestamptz LANGUAGE sql AS $$
    SELECT coalesce(nullif(current_setting('checker.commit_moment', true), ''),
                    set_config('checker.commit_moment', clock_timestamp()::text, true))::timestamptz
$$;

CREATE OR REPLACE FUNCTION checker_run_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    going boolean := NEW.status NOT IN ('pending', 'succeeded', 'failed', 'cancelled', 'timed_out', 'terminated');
    went  boolean := TG_OP = 'UPDATE' AND OLD.status NOT IN ('pending', 'succeeded', 'failed', 'cancelled', 'timed_out', 'terminated');
BEGIN
    IF going AND NOT went THEN
        INSERT INTO checker_run_span (tenant_id, run_id, definition_key, key, started_at)
        VALUES (NEW.tenant_id, NEW.id, NEW.definition_key, coalesce(NEW.input->>'key', ''), checker_commit_moment());
    ELSIF went AND NOT going THEN
        UPDATE checker_run_span SET finished_at = checker_commit_moment(), ended_as = NEW.status, reason = NEW.reason
        WHERE tenant_id = NEW.tenant_id AND run_id = NEW.id AND finished_at IS NULL;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS checker_run_inserted ON run;
CREATE CONSTRAINT TRIGGER checker_run_inserted AFTER INSERT ON run DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.status <> 'pending') EXECUTE FUNCTION checker_run_moved();
DROP TRIGGER IF EXISTS checker_run_moved ON run;
CREATE CONSTRAINT TRIGGER checker_run_moved AFTER UPDATE OF status ON run DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION checker_run_moved();`
