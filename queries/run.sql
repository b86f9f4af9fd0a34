-- name: RunInsert :one
-- A repeated idempotency key inserts nothing and returns no row.
INSERT INTO run (
    tenant_id, id, definition_key, definition_version, manifest_hash, status,
    subject, search_attributes, parent_run_id, root_run_id, depth,
    continued_from_run_id, idempotency_key, request_hash, state, input, tick_requested
) VALUES (
    @tenant_id, @id, @definition_key, @definition_version, @manifest_hash, @status,
    @subject, @search_attributes, sqlc.narg(parent_run_id), @root_run_id, @depth,
    sqlc.narg(continued_from_run_id), sqlc.narg(idempotency_key), sqlc.narg(request_hash), @state, @input, false
)
ON CONFLICT DO NOTHING
RETURNING *;

-- name: RunGet :one
SELECT * FROM run WHERE tenant_id = @tenant_id AND id = @id;

-- name: RunGetByIdempotencyKey :one
SELECT * FROM run
WHERE tenant_id = @tenant_id AND definition_key = @definition_key AND idempotency_key = @idempotency_key;

-- name: RunUpdateMany :execrows
-- A tick's final write, for one or more runs: a run whose record_version
-- moved on is not updated, so fewer rows than runs means another tick
-- committed first.
UPDATE run SET
    status = u.status,
    reason = NULLIF(u.reason, ''),
    state = u.state::jsonb,
    transition_count = u.transition_count,
    continued_to_run_id = NULLIF(u.continued_to_run_id, '')::uuid,
    finished_at = NULLIF(u.finished_at, '0001-01-01 00:00:00+00'::timestamptz),
    updated_at = now(),
    record_version = run.record_version + 1
FROM (SELECT unnest(@tenant_ids::uuid[]) AS tenant_id,
             unnest(@ids::uuid[]) AS id,
             unnest(@record_versions::bigint[]) AS record_version,
             unnest(@statuses::text[]) AS status,
             unnest(@reasons::text[]) AS reason,
             unnest(@states::text[]) AS state,
             unnest(@transition_counts::bigint[]) AS transition_count,
             unnest(@continued_to_run_ids::text[]) AS continued_to_run_id,
             unnest(@finished_ats::timestamptz[]) AS finished_at) AS u
WHERE run.tenant_id = u.tenant_id AND run.id = u.id AND run.record_version = u.record_version;

-- name: RunRequestTick :one
-- Sets the wake flag and reports whether this call flipped it: only the
-- caller that flips it enqueues a tick. The row is locked even when the
-- flag is already set, so a tick clearing the flag waits for the caller's
-- transaction and then sees the input it stored. A row locked by a tick in
-- progress (which may not see that input) is skipped: no row comes back,
-- and the caller enqueues a tick of its own.
WITH old AS (
    SELECT r.tick_requested FROM run r
    WHERE r.tenant_id = @tenant_id AND r.id = @id
    FOR NO KEY UPDATE SKIP LOCKED)
UPDATE run SET tick_requested = true
FROM old
WHERE run.tenant_id = @tenant_id AND run.id = @id
RETURNING (NOT old.tick_requested)::boolean AS flipped;

-- name: RunExists :one
SELECT EXISTS (SELECT 1 FROM run WHERE tenant_id = @tenant_id AND id = @id);

-- name: RunClearTick :exec
UPDATE run SET tick_requested = false
WHERE tenant_id = @tenant_id AND id = @id AND tick_requested;

-- name: RunCountChildrenByStatus :many
SELECT status, count(*) AS runs FROM run
WHERE tenant_id = @tenant_id AND parent_run_id = @parent_run_id
GROUP BY status
ORDER BY status;

-- name: RunGetLocked :one
-- The run, locked (waiting for a tick that holds it): what is decided on
-- its status and successor holds until the caller commits.
SELECT * FROM run WHERE tenant_id = @tenant_id AND id = @id FOR NO KEY UPDATE;

-- name: RunLock :one
-- A tick job locks its run before reading it, waiting for an inline tick
-- that holds it: a hot run is decided once, not decided and then lost to
-- whoever committed meanwhile.
SELECT record_version FROM run WHERE tenant_id = @tenant_id AND id = @id FOR NO KEY UPDATE;

-- name: RunTickLock :exec
-- The first statement of an inline or group tick's load: locks the runs
-- that no other transaction holds (a busy run is left to its tick job
-- instead of queueing behind it) and notes their ids in the transaction's
-- ductor.tick_locked setting, for RunTickRead to read in the statement
-- sent right after it, in the same round trip. The two must be separate
-- statements: under READ COMMITTED a locking statement returns the newest
-- version of a row that another tick committed after the statement's
-- snapshot was taken, while everything else it reads (nodes, inputs)
-- comes from that older snapshot; the next statement takes a snapshot
-- after the lock is held. NO KEY UPDATE lets other transactions insert
-- rows that reference the run (inputs, attempts) meanwhile. Two lists plan
-- as one index scan where a list of pairs plans as a join: RunTickRead's
-- caller keeps only the (tenant, run) pairs it asked for (run ids are
-- unique anyway). ductor_fault_pause is the concurrency checker's nemesis,
-- between this statement's snapshot and its locks; it does nothing in
-- production.
SELECT set_config('ductor.tick_locked', coalesce((
    SELECT string_agg(l.id::text, ',') FROM (
        SELECT r.id FROM run r
        WHERE r.tenant_id = ANY(@tenant_ids::uuid[]) AND r.id = ANY(@ids::uuid[])
          AND (SELECT ductor_fault_pause())
        ORDER BY r.tenant_id, r.id
        FOR NO KEY UPDATE OF r SKIP LOCKED) l), ''), true);

-- name: RunTickRead :many
-- What a tick needs of each run RunTickLock locked, read after the locks
-- are held: the run, its input only when asked (ticks keep it cached), its
-- manifest-step nodes, up to max_inputs of its undrained inputs, and the
-- database's clock. tick_requested tells whether a tick job is already on
-- its way. A run whose record_version is the one the caller names in
-- cached_ids and cached_versions comes without its state and nodes (both
-- NULL): the caller holds them as that version committed them, and every
-- write of either moves the version. (The locked ids are parsed once, as
-- an init plan, not per row.)
SELECT r.tenant_id, r.id, r.definition_key, r.definition_version, r.manifest_hash, r.status, r.reason,
       r.subject, r.search_attributes, r.parent_run_id, r.root_run_id, r.depth, r.continued_from_run_id,
       r.continued_to_run_id, r.idempotency_key,
       (CASE WHEN c.version IS DISTINCT FROM r.record_version THEN r.state END)::jsonb AS state,
       r.transition_count, r.record_version,
       r.tick_requested, r.created_at, r.updated_at, r.finished_at,
       CASE WHEN r.id = ANY(@with_input_ids::uuid[]) THEN r.input END AS input,
       ductor_now()::timestamptz AS now,
       CASE WHEN c.version IS DISTINCT FROM r.record_version THEN
           (SELECT coalesce(json_agg(n.data), '[]') FROM run_node n
            WHERE n.tenant_id = r.tenant_id AND n.run_id = r.id AND n.scatter IS NULL) END::json AS nodes,
       (SELECT coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'payload', i.payload) ORDER BY i.id), '[]')
        FROM (SELECT p.id, p.kind, p.payload FROM run_input p
              WHERE p.tenant_id = r.tenant_id AND p.run_id = r.id AND p.consumed_at IS NULL
              ORDER BY p.id LIMIT @max_inputs) i)::json AS inputs
FROM run r
LEFT JOIN (SELECT unnest(@cached_ids::uuid[]) AS id, unnest(@cached_versions::bigint[]) AS version) c ON c.id = r.id
WHERE r.tenant_id = ANY(@tenant_ids::uuid[])
  AND r.id = ANY((SELECT string_to_array(current_setting('ductor.tick_locked', true), ',')::uuid[])::uuid[])
ORDER BY r.tenant_id, r.id;

-- name: RunTickLoadSameStatement :many
-- The load as one statement, kept only so that the concurrency checker can
-- show what it finds in it (store.SameStatementTickLoad): it locks and
-- reads nodes and inputs in the same statement, so when another tick
-- commits between the statement's snapshot and its lock, it returns the
-- newest run row (its record_version passes the guard) beside nodes and
-- inputs from before that commit, and the tick writes stale nodes back.
-- Never use it. (It takes RunTickRead's cached versions only to return
-- the same columns; its caller names none.)
SELECT r.tenant_id, r.id, r.definition_key, r.definition_version, r.manifest_hash, r.status, r.reason,
       r.subject, r.search_attributes, r.parent_run_id, r.root_run_id, r.depth, r.continued_from_run_id,
       r.continued_to_run_id, r.idempotency_key,
       (CASE WHEN c.version IS DISTINCT FROM r.record_version THEN r.state END)::jsonb AS state,
       r.transition_count, r.record_version,
       r.tick_requested, r.created_at, r.updated_at, r.finished_at,
       CASE WHEN r.id = ANY(@with_input_ids::uuid[]) THEN r.input END AS input,
       ductor_now()::timestamptz AS now,
       CASE WHEN c.version IS DISTINCT FROM r.record_version THEN
           (SELECT coalesce(json_agg(n.data), '[]') FROM run_node n
            WHERE n.tenant_id = r.tenant_id AND n.run_id = r.id AND n.scatter IS NULL) END::json AS nodes,
       (SELECT coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'payload', i.payload) ORDER BY i.id), '[]')
        FROM (SELECT p.id, p.kind, p.payload FROM run_input p
              WHERE p.tenant_id = r.tenant_id AND p.run_id = r.id AND p.consumed_at IS NULL
              ORDER BY p.id LIMIT @max_inputs) i)::json AS inputs
FROM run r
LEFT JOIN (SELECT unnest(@cached_ids::uuid[]) AS id, unnest(@cached_versions::bigint[]) AS version) c ON c.id = r.id
WHERE r.tenant_id = ANY(@tenant_ids::uuid[]) AND r.id = ANY(@ids::uuid[])
  AND (SELECT ductor_fault_pause())
ORDER BY r.tenant_id, r.id
FOR NO KEY UPDATE OF r SKIP LOCKED;
