-- webhook_refusal bounds the ductor.webhook.refused events of one
-- webhook: reported_at is when the last one was published, suppressed
-- how many refusals have been counted since without one, and
-- reported_suppressed the count the last event carried. Every process
-- updates the row in one conditional upsert (WebhookRefusalReport), so
-- the bound of one event per window holds across processes.
CREATE TABLE webhook_refusal (
    tenant_id           uuid        NOT NULL,
    webhook_id          text        NOT NULL,
    reported_at         timestamptz NOT NULL,
    suppressed          bigint      NOT NULL DEFAULT 0,
    reported_suppressed bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, webhook_id),
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhook (tenant_id, id) ON DELETE CASCADE
);
