-- A run's input never changes: it moves out of the state JSON a tick
-- rewrites on every commit into a column written once.
ALTER TABLE run ADD COLUMN input jsonb;
