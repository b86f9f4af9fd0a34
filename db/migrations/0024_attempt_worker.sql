-- Which worker ran an attempt: the process of a step worker, or the
-- worker_id a bridge worker polled with.
ALTER TABLE run_attempt ADD COLUMN worker text;

-- The trace a bridge task belongs to: its run's W3C trace context, handed
-- to the bridge worker with the task.
ALTER TABLE bridge_task
    ADD COLUMN traceparent text,
    ADD COLUMN tracestate  text;
