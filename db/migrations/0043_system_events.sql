-- system_event_outbox lists the system events (ductor.*) stored in the
-- event table by the transaction that made the transition they report
-- and not yet dispatched: delivered to waiting runs, to the event
-- triggers on their name and to the tenant's subscriptions. Dispatching
-- deletes the row in the transaction that does it, so a committed event
-- is dispatched once and a rolled-back one never exists.
CREATE TABLE system_event_outbox (
    tenant_id   uuid        NOT NULL,
    event_id    uuid        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, event_id),
    FOREIGN KEY (tenant_id, event_id) REFERENCES event (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX system_event_outbox_created_idx ON system_event_outbox (created_at);

-- subscription is an outbound webhook: the events of the names it lists
-- (or all, '*'), passing its CEL filter, are posted to url signed with
-- the Standard Webhooks scheme. secret is sealed (secrets.Box);
-- previous_secret still signs, alongside, until previous_until, after a
-- rotation. failures counts the deliveries in a row that ran out of
-- attempts; disabled_at is set when it reaches the configured limit.
CREATE TABLE subscription (
    tenant_id       uuid        NOT NULL REFERENCES tenant (id) ON DELETE CASCADE,
    id              uuid        NOT NULL,
    url             text        NOT NULL,
    events          text[]      NOT NULL,
    filter_expr     text        NOT NULL DEFAULT '',
    description     text        NOT NULL DEFAULT '',
    secret          bytea       NOT NULL,
    previous_secret bytea,
    previous_until  timestamptz,
    failures        integer     NOT NULL DEFAULT 0,
    disabled_at     timestamptz,
    disabled_reason text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

-- subscription_delivery is one event for one subscription: webhook-id
-- is the event's id, the same on every attempt, and body the bytes every
-- attempt posts. status is pending (due
-- at next_at), sending (claimed until next_at, the lease), delivered,
-- failed (out of attempts or time) or filtered (the filter said no).
CREATE TABLE subscription_delivery (
    tenant_id       uuid        NOT NULL,
    id              uuid        NOT NULL,
    subscription_id uuid        NOT NULL,
    event_id        uuid        NOT NULL,
    event_name      text        NOT NULL,
    body            bytea       NOT NULL,
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    next_at         timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, subscription_id, event_id),
    FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscription (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX subscription_delivery_due_idx ON subscription_delivery (next_at)
    WHERE status IN ('pending', 'sending');
CREATE INDEX subscription_delivery_list_idx ON subscription_delivery (tenant_id, subscription_id, created_at DESC);

-- subscription_attempt is the delivery log: one row per request made.
CREATE TABLE subscription_attempt (
    tenant_id        uuid        NOT NULL,
    delivery_id      uuid        NOT NULL,
    attempt          integer     NOT NULL,
    at               timestamptz NOT NULL DEFAULT now(),
    status_code      integer     NOT NULL DEFAULT 0,
    latency_ms       integer     NOT NULL DEFAULT 0,
    response_excerpt text        NOT NULL DEFAULT '',
    error            text        NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, delivery_id, attempt),
    FOREIGN KEY (tenant_id, delivery_id) REFERENCES subscription_delivery (tenant_id, id) ON DELETE CASCADE
);
