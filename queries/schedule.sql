-- name: ScheduleInsert :one
-- An id already taken inserts nothing and returns no row.
INSERT INTO schedule (
    tenant_id, id, definition_key, definition_version, spec, input, overlap,
    catchup_window_ms, pause_on_failure, paused, note, owned, next_at, due_at
) VALUES (
    @tenant_id, @id, @definition_key, @definition_version, @spec, @input, @overlap,
    @catchup_window_ms, @pause_on_failure, @paused, @note, @owned, sqlc.narg(next_at), sqlc.narg(due_at)
)
ON CONFLICT DO NOTHING
RETURNING *;

-- name: ScheduleGet :one
SELECT * FROM schedule WHERE tenant_id = @tenant_id AND id = @id;

-- name: ScheduleLock :one
-- Locks the schedule: actions, triggers and backfills of one schedule
-- happen one at a time.
SELECT * FROM schedule WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: ScheduleTryLock :one
SELECT * FROM schedule WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE SKIP LOCKED;

-- name: ScheduleList :many
SELECT * FROM schedule
WHERE tenant_id = @tenant_id AND id > @after
ORDER BY id
LIMIT @max;

-- name: ScheduleListOfDefinition :many
-- The schedules that start a definition, declared in its document or not.
SELECT * FROM schedule
WHERE tenant_id = @tenant_id AND definition_key = @definition_key
ORDER BY id
LIMIT @max;

-- name: ScheduleUpdate :one
-- Saves what a change (PATCH, a publish) may change.
UPDATE schedule SET
    definition_version = @definition_version, spec = @spec, input = @input, overlap = @overlap,
    catchup_window_ms = @catchup_window_ms, pause_on_failure = @pause_on_failure,
    paused = @paused, note = @note, next_at = sqlc.narg(next_at), due_at = sqlc.narg(due_at),
    updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id
RETURNING *;

-- name: ScheduleDelete :execrows
DELETE FROM schedule WHERE tenant_id = @tenant_id AND id = @id;

-- name: SchedulesClaimDue :many
-- Due schedules, locked for this pass; replicas skip each other's.
SELECT * FROM schedule
WHERE due_at <= ductor_now() AND NOT paused
ORDER BY due_at
LIMIT @max
FOR UPDATE SKIP LOCKED;

-- name: ScheduleAdvance :exec
-- Records a pass: the next time to handle and what was done.
UPDATE schedule SET
    next_at = sqlc.narg(next_at), due_at = sqlc.narg(due_at),
    actions = actions + @actions, skipped = skipped + @skipped, missed = missed + @missed,
    last_error = @last_error, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id;

-- name: SchedulePause :exec
UPDATE schedule SET paused = true, note = @note, updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id;

-- name: ScheduleOwnedList :many
SELECT * FROM schedule WHERE tenant_id = @tenant_id AND definition_key = @definition_key AND owned ORDER BY id;

-- name: ScheduleOwnedPause :exec
UPDATE schedule SET paused = true, note = @note, updated_at = now()
WHERE tenant_id = @tenant_id AND definition_key = @definition_key AND owned AND NOT paused;

-- name: ScheduleClockNow :one
SELECT ductor_now()::timestamptz AS now;

-- name: ScheduleActionInsert :one
-- A scheduled time already acted on inserts nothing and returns no row.
INSERT INTO schedule_action (tenant_id, schedule_id, scheduled_at, state, source)
VALUES (@tenant_id, @schedule_id, @scheduled_at, @state, @source)
ON CONFLICT DO NOTHING
RETURNING *;

-- name: ScheduleActionStarted :exec
UPDATE schedule_action SET state = 'running', run_id = @run_id, updated_at = now()
WHERE tenant_id = @tenant_id AND schedule_id = @schedule_id AND scheduled_at = @scheduled_at;

-- name: ScheduleActionDone :exec
UPDATE schedule_action SET state = 'done', run_status = @run_status, updated_at = now()
WHERE tenant_id = @tenant_id AND schedule_id = @schedule_id AND scheduled_at = @scheduled_at;

-- name: ScheduleActionNotStarted :exec
-- An action that could not start its run, and why.
UPDATE schedule_action SET state = 'done', run_status = 'not_started', error = @error, updated_at = now()
WHERE tenant_id = @tenant_id AND schedule_id = @schedule_id AND scheduled_at = @scheduled_at;

-- name: ScheduleActionsOpen :many
-- A schedule's buffered and running actions, oldest first, with the
-- status of each one's run.
SELECT a.scheduled_at, a.state, a.source, a.run_id, coalesce(r.status, '')::text AS status
FROM schedule_action a
LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
WHERE a.tenant_id = @tenant_id AND a.schedule_id = @schedule_id AND a.state IN ('buffered', 'running')
ORDER BY a.scheduled_at;

-- name: ScheduleActionsToSettle :many
-- Schedules with a running action whose run has ended.
SELECT DISTINCT a.tenant_id, a.schedule_id
FROM schedule_action a
JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
WHERE a.state = 'running' AND r.status IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'terminated')
LIMIT @max;

-- name: ScheduleActionsRecent :many
SELECT a.scheduled_at, a.state, a.source, a.run_id,
       CASE WHEN a.state = 'done' THEN a.run_status ELSE coalesce(r.status, '') END::text AS status,
       a.error
FROM schedule_action a
LEFT JOIN run r ON r.tenant_id = a.tenant_id AND r.id = a.run_id
WHERE a.tenant_id = @tenant_id AND a.schedule_id = @schedule_id
ORDER BY a.scheduled_at DESC
LIMIT @max;

-- name: ScheduleActionsPrune :exec
-- Keeps a schedule's newest ended actions (keep of them) and every open one.
DELETE FROM schedule_action a
WHERE a.tenant_id = @tenant_id AND a.schedule_id = @schedule_id AND a.state = 'done'
  AND a.scheduled_at < (
      SELECT b.scheduled_at FROM schedule_action b
      WHERE b.tenant_id = @tenant_id AND b.schedule_id = @schedule_id
      ORDER BY b.scheduled_at DESC OFFSET @keep::integer LIMIT 1);
