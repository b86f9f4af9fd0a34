-- Flow control (see db/migrations/0030_flow_control.sql). A decision on
-- one key of a pool takes the key's advisory lock first (FlowLock), and
-- reads what it decides on in statements after it.

-- name: FlowLock :exec
-- Waits for the advisory locks of ids, in the order given (callers sort
-- them, so that two transactions never wait for each other's).
SELECT count(pg_advisory_xact_lock(id)) FROM unnest(@ids::bigint[]) AS id;

-- name: FlowTryLock :one
-- Takes the advisory locks of ids if none is held elsewhere; false when
-- one is (what it took stays held until the transaction ends).
SELECT coalesce(bool_and(pg_try_advisory_xact_lock(id)), true)::bool FROM unnest(@ids::bigint[]) AS id;

-- name: FlowHoldUpsert :exec
INSERT INTO flow_hold (tenant_id, run_id, stage, due_at, detail)
VALUES (@tenant_id, @run_id, @stage, @due_at, @detail)
ON CONFLICT (tenant_id, run_id) DO UPDATE SET stage = EXCLUDED.stage, due_at = EXCLUDED.due_at, detail = EXCLUDED.detail;

-- name: FlowHoldDue :exec
UPDATE flow_hold SET due_at = @due_at WHERE tenant_id = @tenant_id AND run_id = @run_id;

-- name: FlowHoldDelete :exec
DELETE FROM flow_hold WHERE tenant_id = @tenant_id AND run_id = @run_id;

-- name: FlowHoldGet :one
-- A held run's hold, with its run's status and the database's clock.
SELECT sqlc.embed(h), r.status, r.definition_key, r.manifest_hash, ductor_now()::timestamptz AS now
FROM flow_hold h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
WHERE h.tenant_id = @tenant_id AND h.run_id = @run_id;

-- name: FlowHoldsDue :many
-- Debounces and throttles whose time has come, by the database's clock,
-- oldest first. Read without locks: each is decided on under its keys'.
SELECT h.tenant_id, h.run_id FROM flow_hold h
WHERE h.due_at <= ductor_now()
ORDER BY h.due_at
LIMIT @max_rows;

-- name: FlowHoldsEnded :many
-- Holds of runs that ended while held (cancelled, terminated): their
-- debounce, if open, is closed with them.
DELETE FROM flow_hold h USING run r
WHERE (h.tenant_id, h.run_id) IN (
    SELECT x.tenant_id, x.run_id FROM flow_hold x JOIN run y ON y.tenant_id = x.tenant_id AND y.id = x.run_id
    WHERE y.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
    LIMIT @max_rows)
  AND r.tenant_id = h.tenant_id AND r.id = h.run_id
RETURNING h.tenant_id, h.run_id;

-- name: FlowSlotInsertMany :exec
INSERT INTO flow_slot (tenant_id, run_id, pool, key, "limit", strategy, held, definition_key, rule)
SELECT @tenant_id, @run_id, unnest(@pools::text[]), unnest(@keys::text[]), unnest(@limits::integer[]),
       unnest(@strategies::text[]), @held, @definition_key, unnest(@rules::integer[])
ON CONFLICT DO NOTHING;

-- name: FlowSlotsOfRun :many
SELECT * FROM flow_slot WHERE tenant_id = @tenant_id AND run_id = @run_id ORDER BY rule;

-- name: FlowSlotsHold :exec
UPDATE flow_slot SET held = true WHERE tenant_id = @tenant_id AND run_id = @run_id;

-- name: FlowSlotCancelling :exec
UPDATE flow_slot SET cancelling = true WHERE tenant_id = @tenant_id AND run_id = ANY (@run_ids::uuid[]);

-- name: FlowSlotsInherit :exec
-- A ContinueAsNew successor takes over the slots its predecessor holds,
-- in the commit that ends the predecessor (which releases them).
INSERT INTO flow_slot (tenant_id, run_id, pool, key, "limit", strategy, held, definition_key, rule)
SELECT p.tenant_id, @successor_id::uuid, p.pool, p.key, p."limit", p.strategy, true, p.definition_key, p.rule
FROM flow_slot p WHERE p.tenant_id = @tenant_id AND p.run_id = @run_id AND p.held
ON CONFLICT DO NOTHING;

-- name: FlowSlotsSweep :execrows
-- Forgets the slots of ended runs, which count no more.
DELETE FROM flow_slot s USING run r
WHERE (s.tenant_id, s.run_id, s.pool) IN (
    SELECT x.tenant_id, x.run_id, x.pool FROM flow_slot x JOIN run y ON y.tenant_id = x.tenant_id AND y.id = x.run_id
    WHERE y.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
    LIMIT @max_rows)
  AND r.tenant_id = s.tenant_id AND r.id = s.run_id;

-- name: FlowWaitingHeads :many
-- The first waiting run of every key with a free slot by that run's
-- limit: candidates for admission, read without locks (each is decided
-- on again under its keys' locks).
WITH heads AS (
    SELECT DISTINCT ON (s.tenant_id, s.pool, s.key) s.tenant_id, s.pool, s.key, s.run_id, s."limit", s.seq
    FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
    WHERE NOT s.held AND r.status = 'pending'
    ORDER BY s.tenant_id, s.pool, s.key, s.seq)
SELECT h.tenant_id, h.run_id FROM heads h
WHERE (SELECT count(*) FROM flow_slot o JOIN run q ON q.tenant_id = o.tenant_id AND q.id = o.run_id
       WHERE o.tenant_id = h.tenant_id AND o.pool = h.pool AND o.key = h.key AND o.held
         AND q.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')) < h."limit"
ORDER BY h.seq
LIMIT @max_rows;

-- name: FlowStartInsert :exec
INSERT INTO flow_start (tenant_id, pool, key, at, run_id, expires_at)
VALUES (@tenant_id, @pool, @key, @at, @run_id, @expires_at)
ON CONFLICT DO NOTHING;

-- name: FlowStartsSweep :execrows
DELETE FROM flow_start
WHERE (tenant_id, pool, key, at, run_id) IN (
    SELECT tenant_id, pool, key, at, run_id FROM flow_start WHERE expires_at < ductor_now() LIMIT @max_rows);

-- name: FlowDebounceInsert :exec
INSERT INTO flow_debounce (tenant_id, pool, key, run_id, max_at)
VALUES (@tenant_id, @pool, @key, @run_id, @max_at)
ON CONFLICT (tenant_id, pool, key) DO UPDATE
SET run_id = EXCLUDED.run_id, max_at = EXCLUDED.max_at, starts = 1;

-- name: FlowDebounceTouch :exec
UPDATE flow_debounce SET starts = starts + 1 WHERE tenant_id = @tenant_id AND pool = @pool AND key = @key;

-- name: FlowDebounceClose :exec
DELETE FROM flow_debounce WHERE tenant_id = @tenant_id AND run_id = @run_id;

-- name: FlowDebounceOfRun :one
SELECT * FROM flow_debounce WHERE tenant_id = @tenant_id AND run_id = @run_id;

-- name: FlowRunInputReplace :execrows
-- A debounced start replaces the input of the pending run it joins. The
-- run is held (no tick has read its input for deciding), and its row is
-- locked meanwhile.
UPDATE run SET input = @input, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @run_id AND status = 'pending';

-- name: FlowRuleCounts :many
-- A tenant's runs per pool of some definitions: holding a slot (running),
-- waiting for one, and the keys in use.
SELECT s.pool, count(*) FILTER (WHERE s.held)::int AS running, count(*) FILTER (WHERE NOT s.held)::int AS waiting,
       count(DISTINCT s.key)::int AS keys
FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
WHERE s.tenant_id = @tenant_id AND s.definition_key = ANY (@definition_keys::text[])
  AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
GROUP BY s.pool;

-- name: FlowHoldCounts :many
-- A tenant's held runs of a definition by what they wait for.
SELECT h.stage, count(*)::int AS runs
FROM flow_hold h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
WHERE h.tenant_id = @tenant_id AND r.definition_key = @definition_key AND r.status = 'pending'
GROUP BY h.stage;

-- name: FlowMetricsRuns :many
-- Every tenant's runs under concurrency rules, by definition and rule:
-- running (holding a slot) and queued (waiting for one).
SELECT s.tenant_id, s.definition_key, s.rule, count(*) FILTER (WHERE s.held)::int AS running,
       count(*) FILTER (WHERE NOT s.held)::int AS queued
FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
WHERE r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
GROUP BY s.tenant_id, s.definition_key, s.rule;

-- name: FlowMetricsHolds :many
-- Every tenant's held runs by definition and stage.
SELECT h.tenant_id, r.definition_key, h.stage, count(*)::int AS runs
FROM flow_hold h JOIN run r ON r.tenant_id = h.tenant_id AND r.id = h.run_id
WHERE r.status = 'pending'
GROUP BY h.tenant_id, r.definition_key, h.stage;

-- name: FlowSlotsAhead :many
-- A waiting run's places under its rules, each with the runs waiting
-- before it for the key.
SELECT s.rule, s.key, s."limit",
       (SELECT count(*) FROM flow_slot o JOIN run q ON q.tenant_id = o.tenant_id AND q.id = o.run_id
        WHERE o.tenant_id = s.tenant_id AND o.pool = s.pool AND o.key = s.key AND NOT o.held AND o.seq < s.seq
          AND q.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated'))::int AS ahead
FROM flow_slot s
WHERE s.tenant_id = @tenant_id AND s.run_id = @run_id AND NOT s.held
ORDER BY s.rule;

-- name: FlowPoolWaits :many
-- A run's attempts its steps' concurrency pools hold back, waiting in
-- run_dispatch to be offered again.
SELECT node, generation, attempt, (args->>'flow_key')::text AS flow_key, (args->>'flow_limit')::int AS flow_limit
FROM run_dispatch
WHERE tenant_id = @tenant_id AND run_id = @run_id AND args @> '{"pool_wait": true}'::jsonb;

-- name: FlowPoolQueued :one
-- A tenant's attempts one concurrency pool key holds back.
SELECT count(*)::int FROM run_dispatch
WHERE tenant_id = @tenant_id AND args @> jsonb_build_object('pool_wait', true, 'flow_key', @flow_key::text);

-- name: FlowMetricsStepQueued :many
-- Every tenant's step attempts their concurrency pools hold back.
SELECT tenant_id, count(*)::int AS attempts FROM run_dispatch
WHERE args @> '{"pool_wait": true}'::jsonb
GROUP BY tenant_id;

-- name: FlowMetricsStepBridge :many
-- Every tenant's unfinished bridge tasks of steps with a concurrency pool.
SELECT tenant_id, count(*)::int AS attempts FROM bridge_task
WHERE flow_key IS NOT NULL
GROUP BY tenant_id;

-- name: FlowPoolWaitKeys :many
-- The pool keys that have attempts waiting, a page of them at a time
-- (after the given key), through run_dispatch_pool_wait_idx.
SELECT DISTINCT tenant_id, (args->>'flow_key')::text AS flow_key
FROM run_dispatch
WHERE args @> '{"pool_wait": true}'::jsonb
  AND (tenant_id, args->>'flow_key') > (@after_tenant::uuid, @after_key::text)
ORDER BY tenant_id, flow_key
LIMIT @max_keys;

-- name: FlowPoolWaitHeads :many
-- The first attempts waiting for a pool key, in the order they were
-- held, with their limits and whether they have been woken already.
SELECT run_id, node, generation, attempt, (args->>'flow_limit')::int AS flow_limit, (fire_at <= ductor_now())::boolean AS woken
FROM run_dispatch
WHERE tenant_id = @tenant_id AND args @> '{"pool_wait": true}'::jsonb AND args->>'flow_key' = @flow_key::text
ORDER BY (args->>'held_us')::bigint, run_id, node, generation, attempt
LIMIT @max_rows;

-- name: FlowPoolWake :exec
-- Makes waiting attempts due, for the sweep to offer to their pool.
UPDATE run_dispatch d SET fire_at = ductor_now()
FROM (SELECT unnest(@run_ids::uuid[]) AS run_id, unnest(@nodes::text[]) AS node,
             unnest(@generations::integer[]) AS generation, unnest(@attempts::integer[]) AS attempt) AS w
WHERE d.tenant_id = @tenant_id AND d.run_id = w.run_id AND d.node = w.node
  AND d.generation = w.generation AND d.attempt = w.attempt;

-- name: FlowPoolHasWaiters :one
-- Whether any attempt waits for a pool key: a new attempt queues behind them.
SELECT EXISTS (SELECT 1 FROM run_dispatch
    WHERE tenant_id = @tenant_id AND args @> '{"pool_wait": true}'::jsonb AND args->>'flow_key' = @flow_key::text)::boolean;

-- name: FlowStateLoad :many
-- Everything a start's rules decide on, for all its keys in one
-- statement (one snapshot): for each key asked (kind 'starts', 'slots'
-- or 'debounce', in the order asked) the latest starts it counted (up to
-- n), the slots held and waited for by runs that have not ended and,
-- when n is 1, the oldest of those runs no one is cancelling (when n is
-- 2, the first of them waiting), or its open
-- debounce with its run's status; and the database's clock. With no key
-- it returns the clock alone, in one row with ord 0.
SELECT ductor_now()::timestamptz AS now, coalesce(k.ord, 0)::int AS ord,
    ARRAY(SELECT f.at FROM flow_start f
          WHERE k.kind = 'starts' AND f.tenant_id = @tenant_id AND f.pool = k.pool AND f.key = k.key
          ORDER BY f.at DESC LIMIT k.n)::timestamptz[] AS starts,
    coalesce(c.held, 0)::int AS held, coalesce(c.waiting, 0)::int AS waiting,
    ARRAY(SELECT s.run_id FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
          WHERE k.kind = 'slots' AND k.n = 1 AND s.tenant_id = @tenant_id AND s.pool = k.pool AND s.key = k.key
            AND NOT s.cancelling AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
          ORDER BY s.seq)::uuid[] AS oldest,
    coalesce((SELECT s.run_id FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
          WHERE k.kind = 'slots' AND k.n = 2 AND s.tenant_id = @tenant_id AND s.pool = k.pool AND s.key = k.key AND NOT s.held
            AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
          ORDER BY s.seq LIMIT 1), '00000000-0000-0000-0000-000000000000')::uuid AS head,
    (d.run_id IS NOT NULL)::boolean AS debounce_open, coalesce(d.run_id, '00000000-0000-0000-0000-000000000000')::uuid AS debounce_run_id,
    d.max_at AS debounce_max_at, coalesce(d.status, '')::text AS debounce_status
FROM (VALUES (1)) AS one (x)
LEFT JOIN (
    SELECT i AS ord, (@kinds::text[])[i] AS kind, (@pools::text[])[i] AS pool, (@keys::text[])[i] AS key, (@ns::int[])[i] AS n
    FROM generate_series(1, cardinality(@kinds::text[])) AS i) k ON true
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE s.held) AS held, count(*) FILTER (WHERE NOT s.held) AS waiting
    FROM flow_slot s JOIN run r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
    WHERE k.kind = 'slots' AND s.tenant_id = @tenant_id AND s.pool = k.pool AND s.key = k.key
      AND r.status NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')) c ON true
LEFT JOIN LATERAL (
    SELECT fd.run_id, fd.max_at, dr.status::text AS status
    FROM flow_debounce fd JOIN run dr ON dr.tenant_id = fd.tenant_id AND dr.id = fd.run_id
    WHERE k.kind = 'debounce' AND fd.tenant_id = @tenant_id AND fd.pool = k.pool AND fd.key = k.key) d ON true
ORDER BY k.ord;
