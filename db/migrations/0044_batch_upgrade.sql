-- A batch that upgrades runs keeps its target: {"version", "cancel_removed"}
-- (NULL for cancel and retry batches).
ALTER TABLE run_batch ADD COLUMN upgrade jsonb;
