-- A step its concurrency pool holds back waits in run_dispatch (args
-- carry pool_wait, its flow_key and held_us, when it was first held) until
-- the sweep sees a slot of its key free and wakes it, oldest first; it is
-- not offered again on a timer. This index finds a key's waiters in the
-- order they were held, and the keys that have any.
CREATE INDEX run_dispatch_pool_wait_idx ON run_dispatch (tenant_id, (args->>'flow_key'), ((args->>'held_us')::bigint))
    WHERE args @> '{"pool_wait": true}'::jsonb;
