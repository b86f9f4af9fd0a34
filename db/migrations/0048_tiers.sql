-- A tier is a named plan (free, pro, enterprise…) that tenants belong
-- to. It carries the usage quotas of its tenants (usage_tier_quota) and
-- names the fair queue's class, interactive, standard or bulk, whose
-- step queue and share of step workers its tenants' tasks get. The three
-- classes are also tiers of their own name, as they were before tiers
-- could be named.
CREATE TABLE tier (
    name        text        PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    queue_class text        NOT NULL CHECK (queue_class IN ('interactive', 'standard', 'bulk')),
    created_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tier (name, queue_class) VALUES
    ('interactive', 'interactive'), ('standard', 'standard'), ('bulk', 'bulk');

ALTER TABLE tenant DROP CONSTRAINT tenant_tier_check;
ALTER TABLE tenant ADD CONSTRAINT tenant_tier_fkey FOREIGN KEY (tier) REFERENCES tier (name);
CREATE INDEX tenant_tier_idx ON tenant (tier);

ALTER TABLE usage_tier_quota ADD CONSTRAINT usage_tier_quota_tier_fkey
    FOREIGN KEY (tier) REFERENCES tier (name) ON DELETE CASCADE;
