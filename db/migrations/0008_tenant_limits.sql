-- Per-tenant admission limits for step tasks, enforced in Postgres so
-- replicas share them: at most max_concurrency steps queued or running
-- (0: no cap), and at most rate_per_second step starts on average with a
-- burst of max(1, rate) (0: no limit), as a token bucket.
ALTER TABLE tenant
    ADD COLUMN max_concurrency integer          NOT NULL DEFAULT 0 CHECK (max_concurrency >= 0),
    ADD COLUMN rate_per_second double precision NOT NULL DEFAULT 0 CHECK (rate_per_second >= 0);

CREATE TABLE tenant_bucket (
    tenant_id  uuid             PRIMARY KEY REFERENCES tenant (id) ON DELETE CASCADE,
    tokens     double precision NOT NULL,
    updated_at timestamptz      NOT NULL
);
