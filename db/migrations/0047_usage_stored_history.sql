-- Stored bytes also count each run's input and its history: the input
-- when the run is written (and again when a debounce replaces it), the
-- history as each batch of transitions is written, both taken back when
-- the rows are deleted (the prune deletes a run, and its history with
-- it). As before, in the statements that do the writing.

CREATE FUNCTION ductor_usage_run_input_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), sum(ductor_json_bytes(input))
    FROM new_rows GROUP BY 1
    HAVING sum(ductor_json_bytes(input)) <> 0;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_run_input_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), -sum(ductor_json_bytes(input))
    FROM old_rows GROUP BY 1
    HAVING sum(ductor_json_bytes(input)) <> 0;
    RETURN NULL;
END $$;

-- Only statements that set input fire it (a tick does not).
CREATE FUNCTION ductor_usage_run_input_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF ductor_json_bytes(NEW.input) <> ductor_json_bytes(OLD.input) THEN
        INSERT INTO usage_delta (tenant_id, day, stored_bytes)
        VALUES (NEW.tenant_id, ductor_utc_day(now()), ductor_json_bytes(NEW.input) - ductor_json_bytes(OLD.input));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER run_input_bytes_insert AFTER INSERT ON run
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_run_input_insert();
CREATE TRIGGER run_input_bytes_delete AFTER DELETE ON run
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_run_input_delete();
CREATE TRIGGER run_input_bytes_update AFTER UPDATE OF input ON run
    FOR EACH ROW EXECUTE FUNCTION ductor_usage_run_input_update();

CREATE FUNCTION ductor_usage_history_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), sum(ductor_json_bytes(transitions))
    FROM new_rows GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_history_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), -sum(ductor_json_bytes(transitions))
    FROM old_rows GROUP BY 1;
    RETURN NULL;
END $$;

CREATE TRIGGER run_history_usage_insert AFTER INSERT ON run_history_batch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_history_insert();
CREATE TRIGGER run_history_usage_delete AFTER DELETE ON run_history_batch
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_history_delete();

-- What is stored already: each tenant's run inputs and history, once.
INSERT INTO usage_delta (tenant_id, day, stored_bytes)
SELECT tenant_id, ductor_utc_day(now()), sum(b) FROM (
    SELECT tenant_id, ductor_json_bytes(input) AS b FROM run
    UNION ALL SELECT tenant_id, ductor_json_bytes(transitions) FROM run_history_batch) s
GROUP BY 1 HAVING sum(b) <> 0;
