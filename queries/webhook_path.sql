-- name: WebhookPathList :many
-- Every webhook's delivery path, its tenant's slug and its id, for the
-- receiver's record of the webhooks that exist: it lets a flood of
-- deliveries to made-up paths be refused without a lookup each. Across
-- tenants on purpose, and bounded.
SELECT t.slug, w.tenant_id, w.id
FROM webhook w JOIN tenant t ON t.id = w.tenant_id
ORDER BY t.slug, w.id
LIMIT @max;
