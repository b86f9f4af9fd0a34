-- Tenant secrets: values a definition references by name (secret("NAME")
-- in an http step, `secrets:` on a task step) and never contains. The
-- value is kept sealed (AES-256-GCM under a key derived from
-- DUCTOR_SECRET_KEY, bound to the tenant and name); nothing reads it back
-- but the step that sends it. version counts the values set; last_used_at
-- is when a step last resolved it. A deleted tenant's secrets go with it;
-- the retention prune never touches them.
CREATE TABLE tenant_secret (
    tenant_id    uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    name         text        NOT NULL CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'),
    description  text        NOT NULL DEFAULT '',
    value        bytea       NOT NULL,
    version      integer     NOT NULL DEFAULT 1,
    created_at   timestamptz NOT NULL DEFAULT now(),
    created_by   text        NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    updated_by   text        NOT NULL,
    last_used_at timestamptz,
    PRIMARY KEY (tenant_id, name)
);

-- A task step's `secrets`: the names of the tenant secrets its bridge
-- worker receives when it claims the task. Only names: the values are
-- opened for the poll's answer and never stored here.
ALTER TABLE bridge_task ADD COLUMN secrets jsonb NOT NULL DEFAULT '[]';
