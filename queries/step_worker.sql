-- name: StepWorkerSeen :exec
-- Records that a process works the queues, now by the database's clock.
INSERT INTO step_worker (queue, process_id)
SELECT q.name, sqlc.arg(process_id)::uuid FROM unnest(sqlc.arg(queues)::text[]) AS q(name)
ON CONFLICT (queue, process_id) DO UPDATE SET seen_at = ductor_now();

-- name: StepWorkerGone :exec
-- A process that stops works no queue any more.
DELETE FROM step_worker WHERE process_id = @process_id;

-- name: StepWorkerForget :exec
-- Forgets processes not seen for older_than seconds.
DELETE FROM step_worker WHERE seen_at < ductor_now() - make_interval(secs => @older_than::float8);

-- name: StepQueuesUnserved :many
-- The queues among queues that no process was seen working within
-- alive seconds.
SELECT q.name::text AS queue FROM unnest(sqlc.arg(queues)::text[]) AS q(name)
WHERE NOT EXISTS (
    SELECT 1 FROM step_worker w
    WHERE w.queue = q.name AND w.seen_at > ductor_now() - make_interval(secs => sqlc.arg(alive)::float8))
ORDER BY q.name;
