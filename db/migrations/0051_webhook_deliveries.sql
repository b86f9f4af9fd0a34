-- webhook_delivery is a webhook's delivery log: one row per delivery
-- result written to the webhook (an accepted or duplicate delivery each
-- time; refused ones as sparingly as the webhook's last result, count
-- standing for those not written each time), with the reason of a
-- refusal, the event an accepted one made and the runs that event
-- started. Each webhook keeps its last 100 accepted and its last 100
-- refused rows, pruned in the transaction that writes one, so a flood of
-- forged deliveries never pushes the accepted ones out.
CREATE TABLE webhook_delivery (
    tenant_id  uuid        NOT NULL,
    webhook_id text        NOT NULL,
    seq        bigint      GENERATED ALWAYS AS IDENTITY,
    at         timestamptz NOT NULL DEFAULT now(),
    refused    boolean     NOT NULL,
    outcome    text        NOT NULL,
    reason     text        NOT NULL DEFAULT '',
    status     integer     NOT NULL,
    count      bigint      NOT NULL DEFAULT 1,
    event_id   uuid,
    run_ids    uuid[]      NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, webhook_id, seq),
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhook (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX webhook_delivery_kind_idx ON webhook_delivery (tenant_id, webhook_id, refused, seq DESC);
