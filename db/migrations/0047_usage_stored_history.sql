-- Stored bytes also count each run's input and its history: the input
-- when the run is written (and again when a debounce replaces it), the
-- history as each batch of transitions is written, both taken back when
-- the rows are deleted (the prune deletes a run, and its history with
-- it). As before, in the statements that do the writing.

CREATE FUNCTION ductor_usage_run_input_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), definition_key, sum(ductor_json_bytes(input))
    FROM new_rows GROUP BY 1, 3
    HAVING sum(ductor_json_bytes(input)) <> 0;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_run_input_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT tenant_id, ductor_utc_day(now()), definition_key, -sum(ductor_json_bytes(input))
    FROM old_rows GROUP BY 1, 3
    HAVING sum(ductor_json_bytes(input)) <> 0;
    RETURN NULL;
END $$;

-- Only statements that set input fire it (a tick does not).
CREATE FUNCTION ductor_usage_run_input_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF ductor_json_bytes(NEW.input) <> ductor_json_bytes(OLD.input) THEN
        INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
        VALUES (NEW.tenant_id, ductor_utc_day(now()), NEW.definition_key, ductor_json_bytes(NEW.input) - ductor_json_bytes(OLD.input));
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
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT h.tenant_id, ductor_utc_day(now()), r.definition_key, sum(ductor_json_bytes(h.transitions))
    FROM new_rows h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
    GROUP BY 1, 3;
    RETURN NULL;
END $$;

CREATE FUNCTION ductor_usage_history_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The run may be gone already (its delete cascades here): its
    -- definition is then not known, and the bytes are the tenant's.
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT h.tenant_id, ductor_utc_day(now()), coalesce(r.definition_key, ''), -sum(ductor_json_bytes(h.transitions))
    FROM old_rows h LEFT JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
    GROUP BY 1, 3;
    RETURN NULL;
END $$;

CREATE TRIGGER run_history_usage_insert AFTER INSERT ON run_history_batch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_history_insert();
CREATE TRIGGER run_history_usage_delete AFTER DELETE ON run_history_batch
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ductor_usage_history_delete();

-- What is stored already: each tenant's run inputs and history, once.
INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
SELECT tenant_id, ductor_utc_day(now()), definition_key, sum(b) FROM (
    SELECT tenant_id, definition_key, ductor_json_bytes(input) AS b FROM run
    UNION ALL SELECT h.tenant_id, r.definition_key, ductor_json_bytes(h.transitions)
    FROM run_history_batch h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id) s
GROUP BY 1, 3 HAVING sum(b) <> 0;
