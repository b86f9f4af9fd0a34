-- A deleted attempt's stored bytes are taken back from its run's
-- definition, where they were counted, not from the tenant's unassigned
-- bytes: per definition, stored bytes then fall as the prune deletes.
-- The prune deletes a run's attempts and history before the run, so the
-- run is still there to say its definition; a run deleted some other way
-- (its attempts going by cascade) still takes the bytes back from the
-- tenant's total.
CREATE OR REPLACE FUNCTION ductor_usage_attempt_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO usage_delta (tenant_id, day, definition_key, stored_bytes)
    SELECT a.tenant_id, ductor_utc_day(now()), coalesce(r.definition_key, ''),
           -sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error))
    FROM old_rows a LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
    GROUP BY 1, 3
    HAVING sum(ductor_json_bytes(a.output) + ductor_json_bytes(a.error)) <> 0;
    RETURN NULL;
END $$;
