-- Definitions: a tenant's workflow documents by key, with a draft and
-- immutable, numbered, compiled versions.

CREATE TABLE definition (
    tenant_id      uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    key            text        NOT NULL,
    name           text        NOT NULL DEFAULT '',
    -- The draft as authored (JSON or YAML text) and its format.
    draft          text,
    draft_format   text        CHECK (draft_format IN ('json', 'yaml')),
    latest_version integer     NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

CREATE TABLE definition_version (
    tenant_id      uuid        NOT NULL,
    key            text        NOT NULL,
    version        integer     NOT NULL,
    manifest       jsonb       NOT NULL,
    manifest_hash  text        NOT NULL,
    -- The document as published, in its own format.
    source         text        NOT NULL,
    source_format  text        NOT NULL CHECK (source_format IN ('json', 'yaml')),
    published_at   timestamptz NOT NULL DEFAULT now(),
    unpublished_at timestamptz,
    PRIMARY KEY (tenant_id, key, version),
    FOREIGN KEY (tenant_id, key) REFERENCES definition (tenant_id, key) ON DELETE CASCADE
);

CREATE INDEX definition_version_hash_idx ON definition_version (tenant_id, key, manifest_hash);
