-- fair_clock keeps each tenant's virtual finish time per step queue: the
-- start-time fair queueing tags that interleave tenants in River's fetch
-- order (see workers/fair.go).
CREATE TABLE fair_clock (
    tenant_id  uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    queue      text        NOT NULL,
    finish_tag timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, queue)
);
