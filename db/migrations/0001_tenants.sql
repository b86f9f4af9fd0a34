-- Tenants and their API keys. Every tenant-scoped table is keyed by
-- tenant_id first, so the schema can be distributed by tenant later.

CREATE TABLE tenant (
    id         uuid        PRIMARY KEY,
    slug       text        NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name       text        NOT NULL,
    tier       text        NOT NULL DEFAULT 'standard'
                           CHECK (tier IN ('interactive', 'standard', 'bulk')),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_key (
    tenant_id    uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id           uuid        NOT NULL,
    name         text        NOT NULL DEFAULT '',
    -- prefix is the visible start of the key (dk_ and eight characters),
    -- shown in lists so people can recognise a key without its secret.
    prefix       text        NOT NULL,
    -- hash is the SHA-256 of the whole key; the key itself is never stored.
    hash         bytea       NOT NULL,
    scopes       text[]      NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX api_key_hash_idx ON api_key (hash);
