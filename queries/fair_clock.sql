-- name: FairClockAdvance :one
-- Reserves span_micros of virtual time for a tenant's batch and returns
-- where the batch starts: the later of the tenant's last finish tag and the
-- queue's head (its earliest available job, or a day ago when the queue is
-- empty), so a newly busy tenant starts at the head and a backlogged one
-- queues behind its own work.
INSERT INTO fair_clock (tenant_id, queue, finish_tag)
VALUES (sqlc.arg(tenant_id), sqlc.arg(queue),
        sqlc.arg(head)::timestamptz + sqlc.arg(span_micros)::bigint * interval '1 microsecond')
ON CONFLICT (tenant_id, queue) DO UPDATE
SET finish_tag = greatest(fair_clock.finish_tag, sqlc.arg(head)::timestamptz)
               + sqlc.arg(span_micros)::bigint * interval '1 microsecond'
RETURNING (finish_tag - sqlc.arg(span_micros)::bigint * interval '1 microsecond')::timestamptz AS start_tag;
