-- name: RunAttemptUpsertMany :exec
-- Attempts of one or more runs; an attempt appears once per statement.
INSERT INTO run_attempt (tenant_id, run_id, node, generation, attempt, started_at, finished_at, output, error, step_type, definition_key)
SELECT a.tenant_id, a.run_id, a.node, a.generation, a.attempt,
       NULLIF(a.started_at, '0001-01-01 00:00:00+00'::timestamptz),
       NULLIF(a.finished_at, '0001-01-01 00:00:00+00'::timestamptz),
       NULLIF(a.output, '')::jsonb, NULLIF(a.error, '')::jsonb, NULLIF(a.step_type, ''), NULLIF(a.definition_key, '')
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@nodes::text[]) AS node,
             unnest(@generations::integer[]) AS generation,
             unnest(@attempts::integer[]) AS attempt,
             unnest(@started_ats::timestamptz[]) AS started_at,
             unnest(@finished_ats::timestamptz[]) AS finished_at,
             unnest(@outputs::text[]) AS output,
             unnest(@errors::text[]) AS error,
             unnest(@step_types::text[]) AS step_type,
             unnest(@definition_keys::text[]) AS definition_key) AS a
ON CONFLICT (tenant_id, run_id, node, generation, attempt) DO UPDATE
SET started_at = coalesce(run_attempt.started_at, EXCLUDED.started_at),
    step_type = coalesce(run_attempt.step_type, EXCLUDED.step_type),
    definition_key = coalesce(run_attempt.definition_key, EXCLUDED.definition_key),
    finished_at = EXCLUDED.finished_at,
    output = EXCLUDED.output,
    error = EXCLUDED.error,
    lease_until = CASE WHEN EXCLUDED.finished_at IS NULL THEN run_attempt.lease_until END;

-- name: RunAttemptStartMany :many
-- Workers take attempts: an attempt that already has a result is not
-- taken, nor one whose run is gone (deleted by the retention prune), nor
-- one whose start comes at or after its start_by (the zero time: no
-- bound): by then the sweep may have reported the attempt's job stranded
-- (StepJobsClaimStranded), and a start recorded after that would let the
-- step run twice. Each attempt appears once and comes back with whether
-- it was in time and whether it was taken. The first start is kept, and
-- the input it was started with ('': none); the worker is the latest to
-- take it.
WITH a AS (
    SELECT r.*, (r.start_by = '0001-01-01 00:00:00+00'::timestamptz OR now() < r.start_by) AS in_time
    FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
                 unnest(@run_ids::uuid[]) AS run_id,
                 unnest(@nodes::text[]) AS node,
                 unnest(@generations::integer[]) AS generation,
                 unnest(@attempts::integer[]) AS attempt,
                 unnest(@lease_seconds::float8[]) AS lease_seconds,
                 unnest(@start_bys::timestamptz[]) AS start_by,
                 unnest(@inputs::text[]) AS input,
                 unnest(@step_types::text[]) AS step_type) AS r),
taken AS (
    INSERT INTO run_attempt (tenant_id, run_id, node, generation, attempt, started_at, lease_until, worker, input, step_type, definition_key)
    SELECT a.tenant_id, a.run_id, a.node, a.generation, a.attempt, now(), now() + make_interval(secs => a.lease_seconds),
           NULLIF(@worker::text, ''), NULLIF(a.input, '')::jsonb, NULLIF(a.step_type, ''), ru.definition_key
    FROM a JOIN run ru ON ru.tenant_id = a.tenant_id AND ru.id = a.run_id
    WHERE a.in_time
    ON CONFLICT (tenant_id, run_id, node, generation, attempt) DO UPDATE
    SET started_at = coalesce(run_attempt.started_at, now()), lease_until = EXCLUDED.lease_until,
        worker = coalesce(EXCLUDED.worker, run_attempt.worker), input = coalesce(run_attempt.input, EXCLUDED.input),
        step_type = coalesce(run_attempt.step_type, EXCLUDED.step_type),
        definition_key = coalesce(run_attempt.definition_key, EXCLUDED.definition_key)
    WHERE run_attempt.finished_at IS NULL
    RETURNING tenant_id, run_id, node, generation, attempt)
SELECT a.tenant_id::uuid AS tenant_id, a.run_id::uuid AS run_id, a.node::text AS node,
       a.generation::integer AS generation, a.attempt::integer AS attempt, a.in_time::boolean AS in_time,
       EXISTS (SELECT 1 FROM taken t WHERE t.tenant_id = a.tenant_id AND t.run_id = a.run_id AND t.node = a.node
               AND t.generation = a.generation AND t.attempt = a.attempt) AS taken
FROM a;

-- name: RunAttemptList :many
SELECT * FROM run_attempt
WHERE tenant_id = @tenant_id AND run_id = @run_id
ORDER BY node, generation, attempt;

-- name: RunAttemptListNodes :many
-- The attempts of some of a run's nodes (a page of scatter children, say).
SELECT * FROM run_attempt
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = ANY(@nodes::text[])
ORDER BY node, generation, attempt;

-- name: RunAttemptClaimLost :many
-- Attempts whose worker stopped answering: their lease ran out with no
-- result. Claiming clears the lease so each is reported once.
UPDATE run_attempt SET lease_until = NULL
WHERE (tenant_id, run_id, node, generation, attempt) IN (
    SELECT a.tenant_id, a.run_id, a.node, a.generation, a.attempt FROM run_attempt a
    WHERE a.lease_until < now() AND a.finished_at IS NULL
    ORDER BY a.lease_until
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED)
RETURNING tenant_id, run_id, node, generation, attempt;

-- name: RunAttemptExtendLease :execrows
-- A bridge worker's heartbeat moves the lease of an attempt that is still
-- leased and has no result; zero rows means it was reported lost or ended.
UPDATE run_attempt SET lease_until = @lease_until
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node
  AND generation = @generation AND attempt = @attempt
  AND finished_at IS NULL AND lease_until IS NOT NULL;

-- name: RunAttemptOutput :one
-- One attempt's output, for its download.
SELECT output FROM run_attempt
WHERE tenant_id = @tenant_id AND run_id = @run_id AND node = @node AND generation = @generation AND attempt = @attempt;

-- name: RunAttemptCancel :exec
-- A cancelled attempt gets its result, if it has none yet, so that no
-- worker takes it from then on (RunAttemptStartMany takes no attempt with
-- a result) and a worker already running it holds no lease that could
-- report it lost.
INSERT INTO run_attempt (tenant_id, run_id, node, generation, attempt, finished_at, error, definition_key)
VALUES (@tenant_id, @run_id, @node, @generation, @attempt, now(), @error::jsonb,
        (SELECT r.definition_key FROM run r WHERE r.tenant_id = @tenant_id AND r.id = @run_id))
ON CONFLICT (tenant_id, run_id, node, generation, attempt) DO UPDATE
SET finished_at = now(), error = EXCLUDED.error, lease_until = NULL
WHERE run_attempt.finished_at IS NULL;

-- name: RunAttemptFinishedAmong :many
-- Which of some attempts have a result.
SELECT a.tenant_id, a.run_id, a.node, a.generation, a.attempt FROM run_attempt a
JOIN (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@nodes::text[]) AS node,
             unnest(@generations::integer[]) AS generation,
             unnest(@attempts::integer[]) AS attempt) k
  USING (tenant_id, run_id, node, generation, attempt)
WHERE a.finished_at IS NOT NULL;

-- name: RunAttemptRenewHeld :many
-- Of some attempts, those a worker holds (started by it, still leased,
-- with no result) get a new lease, and come back. A process whose
-- commit went unanswered learns by it which of the attempts that
-- transaction recorded as started there did commit, and are its to run;
-- one the sweep has claimed as lost (its lease cleared) is not.
UPDATE run_attempt a SET lease_until = now() + make_interval(secs => k.lease_seconds)
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@run_ids::uuid[]) AS run_id,
             unnest(@nodes::text[]) AS node,
             unnest(@generations::integer[]) AS generation,
             unnest(@attempts::integer[]) AS attempt,
             unnest(@lease_seconds::float8[]) AS lease_seconds) k
WHERE a.tenant_id = k.tenant_id AND a.run_id = k.run_id AND a.node = k.node
  AND a.generation = k.generation AND a.attempt = k.attempt
  AND a.finished_at IS NULL AND a.started_at IS NOT NULL AND a.lease_until > now()
  AND a.worker = @worker::text
RETURNING a.tenant_id, a.run_id, a.node, a.generation, a.attempt;
