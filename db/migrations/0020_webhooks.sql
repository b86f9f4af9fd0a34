-- Inbound webhooks: a signed delivery to /hooks/{tenant}/{id} becomes a
-- tenant event of the webhook's name. The signing secret is kept sealed
-- (AES-256-GCM under a key derived from DUCTOR_SECRET_KEY, bound to the
-- tenant and webhook id); after a rotation the previous secret is still
-- accepted until previous_until. A repeated delivery id is the event's
-- idempotency key, so it is accepted once.
CREATE TABLE webhook (
    tenant_id        uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id               text        NOT NULL CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
    event            text        NOT NULL,
    scheme           text        NOT NULL CHECK (scheme IN ('standard', 'github')),
    secret           bytea       NOT NULL,
    -- secret_hint is the secret's visible start, to recognise it.
    secret_hint      text        NOT NULL,
    previous_secret  bytea,
    previous_until   timestamptz,
    deliveries       bigint      NOT NULL DEFAULT 0,
    -- The last delivery: when, its outcome (accepted, duplicate,
    -- bad_signature, stale_timestamp, invalid_body), the status answered
    -- and the event it made.
    last_delivery_at timestamptz,
    last_outcome     text        NOT NULL DEFAULT '',
    last_status      integer     NOT NULL DEFAULT 0,
    last_event_id    uuid,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
