-- Bulk operations are worked tenant by tenant in turn. served_at is when
-- a chunk of one of the tenant's running batches was last worked (every
-- running batch of the tenant carries it; a new one takes its tenant's,
-- or its creation time when the tenant has none), and the sweep claims the
-- running batch with the oldest, its tenant's oldest batch first.
ALTER TABLE run_batch ADD COLUMN served_at timestamptz NOT NULL DEFAULT now();
UPDATE run_batch SET served_at = updated_at;

DROP INDEX run_batch_open_idx;
CREATE INDEX run_batch_fair_idx ON run_batch (served_at, created_at, id) WHERE status = 'running';
CREATE INDEX run_batch_tenant_open_idx ON run_batch (tenant_id) WHERE status = 'running';
