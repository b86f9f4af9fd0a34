-- ductor_run_estimate is the planner's estimate of how many runs match
-- the runs list's filter (the parameters of the RunList query, NULL for
-- none): the row count of EXPLAIN's plan, planned for these values. The
-- list counts exactly up to a cap and shows this estimate past it, so a
-- total over a million runs costs a plan, not a scan. (VOLATILE: Postgres
-- runs EXPLAIN only in a volatile function; it changes nothing.)
CREATE FUNCTION ductor_run_estimate(
    p_tenant uuid, p_status text, p_definition text, p_definitions text[], p_subject text,
    p_parent uuid, p_attributes jsonb, p_q_subject text, p_q_from uuid, p_q_to uuid,
    p_from timestamptz, p_before_created timestamptz, p_before_id uuid
) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM run
        WHERE tenant_id = $1
          AND ($2::text IS NULL OR status = $2)
          AND ($3::text IS NULL OR definition_key = $3)
          AND ($4::text[] IS NULL OR definition_key = ANY($4))
          AND ($5::text IS NULL OR subject = $5)
          AND ($6::uuid IS NULL OR parent_run_id = $6)
          AND ($7::jsonb IS NULL OR search_attributes @> $7)
          AND ($8::text IS NULL OR subject LIKE $8 OR ($9::uuid IS NOT NULL AND id BETWEEN $9 AND $10))
          AND ($11::timestamptz IS NULL OR created_at >= $11)
          AND ($12::timestamptz IS NULL OR (created_at, id) < ($12, $13))'
    INTO plan
    USING p_tenant, p_status, p_definition, p_definitions, p_subject, p_parent, p_attributes,
          p_q_subject, p_q_from, p_q_to, p_from, p_before_created, p_before_id;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::bigint;
END
$$;
